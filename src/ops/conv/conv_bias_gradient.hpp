// boo: the bias gradient step every conv tier plans the same way: db = the sum
// of dy over the batch and every pixel, with gpu:conv:direct's kernel
// (conv_direct.cuh's conv_bias_gradient, one block per output channel).
#pragma once

#include "ops/conv/conv_problem.hpp"
#include "ops/plan.hpp"

namespace boo::ops::conv {

/// The launch of entry "boo_conv_db" (which the tier's source must define,
/// taking a ConvFaceParams) for `problem`, with `threads` per block.
Result<LaunchStep> bias_gradient_step(const ConvProblem& problem, const TensorRoles& roles, uint32_t threads);

}  // namespace boo::ops::conv
