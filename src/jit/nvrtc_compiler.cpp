// boo: NVRTC compilation.
#include "jit/nvrtc_compiler.hpp"

#include <chrono>
#include <regex>

#include "cuda/nvrtc_api.hpp"
#include "jit/embedded_sources.hpp"

namespace boo::jit {
namespace {

// Reads ptxas' "Used N registers" and "N bytes stack frame, N bytes spill
// stores, N bytes spill loads" lines (max over the entry points).
void parse_ptxas_report(CompiledKernel& k) {
  static const std::regex regs(R"(Used (\d+) registers)");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  for (std::sregex_iterator it(k.log.begin(), k.log.end(), regs), end; it != end; ++it)
    k.registers = std::max(k.registers, std::stoi((*it)[1]));
  for (std::sregex_iterator it(k.log.begin(), k.log.end(), frame), end; it != end; ++it) {
    k.stack_bytes = std::max(k.stack_bytes, std::stoi((*it)[1]));
    k.spill_bytes = std::max(k.spill_bytes, std::stoi((*it)[2]) + std::stoi((*it)[3]));
  }
}

}  // namespace

std::vector<std::string> nvrtc_options(const std::string& arch) {
  return {"--gpu-architecture=" + arch, "-std=c++17", "-default-device", "--ptxas-options=--verbose",
          "-DBOO_NVRTC=1"};
}

Result<std::string> nvrtc_version() {
  BOO_ASSIGN_OR_RETURN(const cuda::NvrtcApi* api, cuda::nvrtc_api());
  return std::to_string(api->major) + "." + std::to_string(api->minor);
}

Result<CompiledKernel> compile_kernel(const KernelSource& source, const std::string& arch, bool want_ptx) {
  BOO_ASSIGN_OR_RETURN(const cuda::NvrtcApi* api, cuda::nvrtc_api());
  const auto start = std::chrono::steady_clock::now();
  std::vector<const char*> header_texts, header_names;
  std::vector<std::string> texts;  // NUL-terminated copies
  texts.reserve(embedded_sources().size());
  for (const EmbeddedSource& s : embedded_sources()) {
    texts.emplace_back(s.text);
    header_texts.push_back(texts.back().c_str());
    header_names.push_back(s.include_name.data());
  }
  // include_name views point into NUL-terminated string literals of the generated table.
  nvrtcProgram program = nullptr;
  nvrtcResult r = api->nvrtcCreateProgram(&program, source.text.c_str(), source.name.c_str(),
                                          static_cast<int>(header_texts.size()), header_texts.data(),
                                          header_names.data());
  if (r != NVRTC_SUCCESS) return cuda::nvrtc_status(*api, r, "nvrtcCreateProgram");
  struct Destroy {
    const cuda::NvrtcApi* api;
    nvrtcProgram* p;
    ~Destroy() { api->nvrtcDestroyProgram(p); }
  } destroy{api, &program};

  CompiledKernel out;
  out.options = nvrtc_options(arch);
  std::vector<const char*> opts;
  for (const std::string& o : out.options) opts.push_back(o.c_str());
  r = api->nvrtcCompileProgram(program, static_cast<int>(opts.size()), opts.data());
  size_t log_size = 0;
  api->nvrtcGetProgramLogSize(program, &log_size);
  out.log.resize(log_size);
  if (log_size) api->nvrtcGetProgramLog(program, out.log.data());
  while (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
  if (r != NVRTC_SUCCESS)
    return invalid_argument("NVRTC failed to compile " + source.name + " for " + arch + ": " +
                            api->nvrtcGetErrorString(r) + "\n" + out.log);
  size_t cubin_size = 0;
  r = api->nvrtcGetCUBINSize(program, &cubin_size);
  if (r != NVRTC_SUCCESS || cubin_size == 0)
    return internal_error("NVRTC produced no cubin for " + source.name + " (" + arch + " must be a real sm_ architecture)");
  out.cubin.resize(cubin_size);
  api->nvrtcGetCUBIN(program, out.cubin.data());
  if (want_ptx) {
    size_t ptx_size = 0;
    if (api->nvrtcGetPTXSize(program, &ptx_size) == NVRTC_SUCCESS && ptx_size) {
      out.ptx.resize(ptx_size);
      api->nvrtcGetPTX(program, out.ptx.data());
      while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
    }
  }
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  parse_ptxas_report(out);
  return out;
}

}  // namespace boo::jit
