// boo: the parameter block of the argmax/argmin kernel (gpu:aten:arg_reduce),
// shared by host and device code (plain integers only, identical layout on both sides).
#pragma once

namespace boo {

/// Output o (row-major over the kept dims, `outer_*`) reduces the elements
/// r = 0 .. length-1 (row-major over the reduced dims, `reduced_*`) of x at
/// offset sum(index[d] * outer_strides[d]) + sum(rindex[d] * reduced_strides[d]),
/// and writes the index r of the winner to out[o] (int64, contiguous).
struct ArgReduceParams {
  unsigned long long x, out;
  long long outputs, length;
  long long outer_sizes[8], outer_strides[8];
  long long reduced_sizes[8], reduced_strides[8];
  int outer_rank, reduced_rank;
};

}  // namespace boo
