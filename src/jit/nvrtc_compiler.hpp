// boo: compiling a generated CUDA source to a cubin with NVRTC.
#pragma once

#include <string>
#include <vector>

#include "base/kernel_source.hpp"
#include "boo/status.hpp"

namespace boo::jit {

using base::KernelSource;

struct CompiledKernel {
  std::string cubin;
  std::string ptx;             ///< filled only when asked for (save-temps)
  std::string log;             ///< NVRTC + ptxas output
  std::vector<std::string> options;
  double compile_ms = 0;
  int registers = -1;          ///< max over entries, from ptxas' report (-1 if absent)
  int spill_bytes = -1;        ///< spill stores + loads, max over entries
  int stack_bytes = -1;
};

/// The NVRTC options boo compiles with for `arch` ("sm_90a").
std::vector<std::string> nvrtc_options(const std::string& arch);

/// Compiles `source` for `arch`. A source that does not compile is kInternal
/// (boo generated it: the error is boo's) with NVRTC's full log in the message;
/// the loader's error when NVRTC cannot be loaded.
Result<CompiledKernel> compile_kernel(const KernelSource& source, const std::string& arch, bool want_ptx);

/// Reads ptxas' "Used N registers" and "N bytes stack frame, N bytes spill stores,
/// N bytes spill loads" lines of `k.log` into k's counts (max over the entry points).
void parse_ptxas_report(CompiledKernel& k);

/// "13.0"
Result<std::string> nvrtc_version();

}  // namespace boo::jit
