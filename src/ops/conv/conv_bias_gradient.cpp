// boo: the conv bias gradient's launch.
#include "ops/conv/conv_bias_gradient.hpp"

#include <algorithm>

#include "ops/conv/device/conv_direct_params.cuh"

namespace boo::ops::conv {

Result<LaunchStep> bias_gradient_step(const ConvProblem& problem, const TensorRoles& roles, uint32_t threads) {
  const ConvSignature& conv = problem.conv();
  BOO_ASSIGN_OR_RETURN(TensorBinding dy, roles.argument("dy"));
  BOO_ASSIGN_OR_RETURN(TensorBinding db, roles.result("db"));
  // One block per output channel; a grid-stride loop beyond 65535 of them.
  StepBuilder<ConvFaceParams> step("boo_conv_db", {static_cast<uint32_t>(std::min<long long>(conv.k, 65535)), 1, 1},
                                   {threads, 1, 1});
  step.bind(step.params.b, dy);
  step.bind(step.params.bias, db);
  step.params.n = conv.n;
  step.params.cb = conv.k;
  step.params.groups = 1;
  const Dims3 out = pad3(conv.output_size(), 1);
  for (int i = 0; i < 3; ++i) step.params.b_size[i] = out[i];
  const Strides5 s = strides5(conv.y_spec("dy"));
  for (int i = 0; i < 5; ++i) step.params.b_strides[i] = s[i];
  return std::move(step).finish();
}

}  // namespace boo::ops::conv
