// boo: building modules through the cache.
#include "runtime/kernel_builder.hpp"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "base/file_util.hpp"
#include "base/log.hpp"
#include "base/sha256.hpp"
#include "base/strings.hpp"
#include "boo/version.hpp"
#include "jit/embedded_sources.hpp"
#include "jit/nvrtc_compiler.hpp"

namespace boo::runtime {
namespace {

bool on_path(const char* program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  for (const std::string& dir : base::split(path, ':')) {
    if (std::FILE* f = std::fopen((dir + "/" + program).c_str(), "r")) {
      std::fclose(f);
      return true;
    }
  }
  return false;
}

// BOO_SAVE_TEMPS: source, options, log, PTX, cubin, SASS (with cuobjdump) and
// the driver command that reproduces the kernel.
Status save_temps(const std::string& root, const ModuleRequest& request, const OpSignature& sig,
                  const jit::CompiledKernel& compiled, const std::string& key) {
  std::string impl = request.implementation;
  for (char& ch : impl)
    if (ch == ':') ch = '_';
  const std::string dir = root + "/" + sig.func_name() + "/" + impl + "_" + key.substr(0, 12);
  BOO_RETURN_IF_ERROR(base::make_directories(dir));
  std::string options;
  for (const std::string& o : compiled.options) options += o + "\n";
  BOO_RETURN_IF_ERROR(base::write_file_atomic(dir + "/" + request.source.name, request.source.text));
  BOO_RETURN_IF_ERROR(base::write_file_atomic(dir + "/nvrtc_options.txt", options));
  BOO_RETURN_IF_ERROR(base::write_file_atomic(dir + "/compile.log", compiled.log));
  BOO_RETURN_IF_ERROR(base::write_file_atomic(dir + "/kernel.ptx", compiled.ptx));
  BOO_RETURN_IF_ERROR(base::write_file_atomic(dir + "/kernel.cubin", compiled.cubin));
  BOO_RETURN_IF_ERROR(base::write_file_atomic(dir + "/key_record.txt", request.key.text()));
  BOO_RETURN_IF_ERROR(base::write_file_atomic(
      dir + "/command.txt", "boo-driver " + sig.command() + " --backend boo --impl " + request.implementation + "\n"));
  if (on_path("cuobjdump")) {
    const std::string cmd = "cuobjdump --dump-sass '" + dir + "/kernel.cubin' > '" + dir + "/kernel.sass' 2>&1";
    if (std::system(cmd.c_str()) != 0) base::log_warning("cuobjdump failed for " + dir + "/kernel.cubin");
  }
  return ok_status();
}

}  // namespace

Result<ModuleRequest> describe_module(std::string_view implementation, const ops::Config& config,
                                      base::KernelSource source, const std::string& arch) {
  ModuleRequest request;
  request.implementation = std::string(implementation);
  request.arch = arch;
  request.source = std::move(source);
  BOO_ASSIGN_OR_RETURN(std::string nvrtc, jit::nvrtc_version());
  std::string options;
  for (const std::string& o : jit::nvrtc_options(request.arch)) options += (options.empty() ? "" : " ") + o;
  std::string entries;
  for (const std::string& e : request.source.entries) entries += (entries.empty() ? "" : ",") + e;
  // Everything the cubin depends on, and nothing else: the driver only loads
  // SASS, so its version is recorded in the metadata but kept out of the key,
  // which lets a machine without a GPU fill the cache for a GPU fleet.
  request.key.add("schema", std::to_string(cache::kCacheSchema))
      .add("boo_version", library_version())
      .add("implementation", request.implementation)
      .add("config", config.text())
      .add("entries", entries)
      .add("source_sha256", base::sha256_hex(request.source.text))
      .add("headers_sha256", jit::included_sources_digest(request.source.text))
      .add("nvrtc_version", nvrtc)
      .add("nvrtc_options", options)
      .add("arch", request.arch);
  return request;
}

Result<BuiltModule> build_module(const ModuleRequest& request, const OpSignature& sig,
                                 const cache::ArtifactCache& cache, const BuildOptions& options) {
  BuiltModule built;
  built.key = request.key.digest();
  const bool save = !options.save_temps_dir.empty();
  if (!save) {
    if (std::optional<cache::Artifact> hit = cache.load(request.key, request.arch)) {
      built.cubin = std::move(hit->cubin);
      built.metadata = std::move(hit->metadata);
      built.from_cache = true;
      return built;
    }
  }
  Result<jit::CompiledKernel> compiled = jit::compile_kernel(request.source, request.arch, save);
  if (!compiled.ok()) {
    Status st = compiled.status();
    return std::move(st).annotate("compiling " + request.implementation + " for " + sig.command());
  }
  built.cubin = compiled->cubin;
  built.compile_ms = compiled->compile_ms;
  built.metadata.set("implementation", request.implementation)
      .set("command", sig.command())
      .set("func_name", sig.func_name())
      .set("arch", request.arch)
      .set("git_commit", git_commit())
      .set("driver_version", options.driver_version.empty() ? "none" : options.driver_version)
      .set_number("compile_ms", std::round(compiled->compile_ms * 10) / 10)
      .set_number("registers", compiled->registers)
      .set_number("spill_bytes", compiled->spill_bytes)
      .set_number("stack_bytes", compiled->stack_bytes)
      .set_number("created_unix", static_cast<double>(std::time(nullptr)));
  if (save) {
    if (Status st = save_temps(options.save_temps_dir, request, sig, *compiled, built.key); !st.ok())
      base::log_warning("BOO_SAVE_TEMPS: " + st.to_string());
  }
  built.stored = cache.store(request.key, request.arch, built.cubin, built.metadata);
  if (!built.stored.ok()) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true))
      base::log_warning("cannot write the kernel cache (" + built.stored.message() +
                        "); kernels are compiled in memory only");
  }
  return built;
}

}  // namespace boo::runtime
