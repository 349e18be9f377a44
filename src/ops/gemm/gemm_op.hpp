// boo: registration entry of the gemm op.
#pragma once

#include <span>

#include "ops/op_definition.hpp"

namespace boo::ops::gemm {

/// The gemm op (MIOpenDriver's and BOO's gemm commands): flags, parser, CPU reference.
const OpDefinition& definition();

/// The GEMM tiers, best first: the GEMM as a 1x1 conv on gpu:conv:wgmma_sm90,
/// gpu:conv:implicit_gemm, gpu:conv:direct. Every op whose problem is a
/// GemmProblem (gemm, ATen's mm family) dispatches over these.
std::span<const GpuImplementation* const> gemm_implementations();

}  // namespace boo::ops::gemm
