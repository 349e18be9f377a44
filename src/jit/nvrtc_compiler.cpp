// boo: NVRTC compilation.
#include "jit/nvrtc_compiler.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <optional>
#include <string_view>
#include <system_error>

#include "cuda/nvrtc_api.hpp"
#include "jit/embedded_sources.hpp"

namespace boo::jit {
namespace {

// The integer that ends just before `end` in `text` ("... 48 registers": the 48).
std::optional<int> integer_before(std::string_view text, size_t end) {
  while (end > 0 && text[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && text[begin - 1] >= '0' && text[begin - 1] <= '9') --begin;
  int value = 0;
  if (begin == end || std::from_chars(text.data() + begin, text.data() + end, value).ec != std::errc())
    return std::nullopt;
  return value;
}

// The largest integer written just before `label` anywhere in `text`.
std::optional<int> max_before(std::string_view text, std::string_view label) {
  std::optional<int> best;
  for (size_t at = text.find(label); at != std::string_view::npos; at = text.find(label, at + 1)) {
    if (std::optional<int> value = integer_before(text, at); value && (!best || *value > *best)) best = value;
  }
  return best;
}

}  // namespace

// Plain string scanning, not <regex>: inside a Python process std::regex's locale facets can
// come from another libstdc++ than the one boo was built with (it crashed there).
void parse_ptxas_report(CompiledKernel& k) {
  const std::string_view log = k.log;
  if (std::optional<int> registers = max_before(log, " registers")) k.registers = std::max(k.registers, *registers);
  if (std::optional<int> stack = max_before(log, " bytes stack frame")) k.stack_bytes = std::max(k.stack_bytes, *stack);
  // Per entry point: the spill stores and loads of one line add up.
  for (size_t at = log.find(" bytes spill stores"); at != std::string_view::npos;
       at = log.find(" bytes spill stores", at + 1)) {
    const size_t loads = log.find(" bytes spill loads", at);
    const int stores = integer_before(log, at).value_or(0);
    const int load_bytes = loads == std::string_view::npos ? 0 : integer_before(log, loads).value_or(0);
    k.spill_bytes = std::max(k.spill_bytes, stores + load_bytes);
  }
}

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
  if (nvrtcResult lr = api->nvrtcGetProgramLogSize(program, &log_size); lr != NVRTC_SUCCESS)
    return cuda::nvrtc_status(*api, lr, "nvrtcGetProgramLogSize");
  out.log.resize(log_size);
  if (log_size) {
    if (nvrtcResult lr = api->nvrtcGetProgramLog(program, out.log.data()); lr != NVRTC_SUCCESS)
      return cuda::nvrtc_status(*api, lr, "nvrtcGetProgramLog");
  }
  while (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
  // boo generates every source it compiles from a signature its implementation
  // accepted, so a compile error is boo's bug, never the caller's input.
  if (r != NVRTC_SUCCESS)
    return internal_error("NVRTC failed to compile " + source.name + " for " + arch + ": " +
                          api->nvrtcGetErrorString(r) + "\n" + out.log);
  size_t cubin_size = 0;
  r = api->nvrtcGetCUBINSize(program, &cubin_size);
  if (r != NVRTC_SUCCESS || cubin_size == 0)
    return internal_error("NVRTC produced no cubin for " + source.name + " (" + arch + " must be a real sm_ architecture)");
  out.cubin.resize(cubin_size);
  r = api->nvrtcGetCUBIN(program, out.cubin.data());
  if (r != NVRTC_SUCCESS) return cuda::nvrtc_status(*api, r, "nvrtcGetCUBIN");
  if (want_ptx) {
    size_t ptx_size = 0;
    r = api->nvrtcGetPTXSize(program, &ptx_size);
    if (r != NVRTC_SUCCESS) return cuda::nvrtc_status(*api, r, "nvrtcGetPTXSize");
    out.ptx.resize(ptx_size);
    if (ptx_size) {
      r = api->nvrtcGetPTX(program, out.ptx.data());
      if (r != NVRTC_SUCCESS) return cuda::nvrtc_status(*api, r, "nvrtcGetPTX");
    }
    while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  }
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  parse_ptxas_report(out);
  return out;
}

}  // namespace boo::jit
