// boo: the management tool — info, cache ls|stat|verify|clear, preload, explain, report.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "base/checked_int.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"
#include "boo/registry.hpp"
#include "boo/runtime.hpp"
#include "boo/version.hpp"
#include "cache/artifact_cache.hpp"
#include "common/commands_file.hpp"
#include "cuda/driver_api.hpp"
#include "cuda/library_probe.hpp"
#include "cuda/nvrtc_api.hpp"
#include "jit/embedded_sources.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/kernel_builder.hpp"
#include "runtime/preload.hpp"
#include "tune.hpp"

namespace boo::tools {
namespace {

constexpr const char* kUsage = R"(usage: boo <command> [options]
       boo --version

commands:
  info                               library, devices, CUDA libraries, backends, cache
  cache ls|stat|verify|clear         inspect, check or empty the kernel cache
  preload --commands-file F [-j N] [--arch sm_90a]
                                     compile every kernel a workload needs into the cache;
                                     with --arch no GPU is needed
  explain "<command>" [--arch A]     how boo would run one MIOpenDriver command, and where its config
                                     came from (the tuning database or the heuristic)
  tune --commands-file F [--top N] [--budget-per-signature S] [--margin M] [--export J] [--import J]
                                     time each signature's candidate configs on the GPU and write the
                                     fastest (when it beats the heuristic's by M, default 0.03, and
                                     passes the numerics check) to the tuning database; a rerun resumes.
                                     --export/--import: the database as JSON (without --commands-file too)
  report RUN.csv [MORE.csv] -o R.html [--png-dir D] [--title T] [--device NAME]
         [--peak-tflops X] [--bandwidth-tbs Y] [--compare|--merge] [--top N]
                                     an HTML report (and PNGs) of boo-driver CSVs; two CSVs of
                                     one list: before/after. Runs python3 (BOO_PYTHON) with matplotlib

options:
  --cache-dir DIR    the cache folder (default: BOO_CACHE_DIR, else $XDG_CACHE_HOME/boo or ~/.cache/boo)
  --impl NAME        consider only this GPU implementation (e.g. gpu:conv:direct)
  --tuning-db FILE   the tuning database (default: BOO_TUNING_DB, else BOO_TUNING_SPEC_PATH, else
                     tuning.sqlite in the cache folder)
  --gpu-id N         the GPU to describe or compile for (default 0); boo tune -1: every GPU, one
                     tuner each, sharing the database
  -v / --verbose     log cache hits and compiles
)";

struct Options {
  std::vector<std::string> positional;
  std::string cache_dir, arch, commands_file, implementation, tuning_db, export_path, import_path;
  size_t top = ops::kMaxCandidates;
  double budget_s = 10, margin = 0.03;
  bool executor_child = false;  // boo tune's child process
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int gpu_id = 0;
};

Result<Options> parse_options(const std::vector<std::string>& argv) {
  Options o;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& w = argv[i];
    auto value = [&]() -> Result<std::string> {
      if (i + 1 >= argv.size()) return invalid_argument("option '" + w + "' needs a value");
      return argv[++i];
    };
    if (w == "--cache-dir") {
      BOO_ASSIGN_OR_RETURN(o.cache_dir, value());
    } else if (w == "--arch") {
      BOO_ASSIGN_OR_RETURN(o.arch, value());
    } else if (w == "--commands-file") {
      BOO_ASSIGN_OR_RETURN(o.commands_file, value());
    } else if (w == "--impl") {
      BOO_ASSIGN_OR_RETURN(o.implementation, value());
    } else if (w == "--tuning-db") {
      BOO_ASSIGN_OR_RETURN(o.tuning_db, value());
    } else if (w == "--export") {
      BOO_ASSIGN_OR_RETURN(o.export_path, value());
    } else if (w == "--import") {
      BOO_ASSIGN_OR_RETURN(o.import_path, value());
    } else if (w == "--executor-child") {
      o.executor_child = true;
    } else if (w == "--top") {
      BOO_ASSIGN_OR_RETURN(std::string v, value());
      Result<int64_t> n = base::parse_int(v);
      if (!n.ok() || *n < 1 || *n > static_cast<int64_t>(ops::kMaxCandidates))
        return invalid_argument("--top: expected a count from 1 to " + std::to_string(ops::kMaxCandidates) +
                                ", got '" + base::echo_word(v) + "'");
      o.top = static_cast<size_t>(*n);
    } else if (w == "--budget-per-signature" || w == "--margin") {
      BOO_ASSIGN_OR_RETURN(std::string v, value());
      Result<double> x = base::parse_double(v);
      const bool budget = w == "--budget-per-signature";
      if (!x.ok() || !std::isfinite(*x) || (budget ? *x <= 0 : (*x < 0 || *x >= 1)))
        return invalid_argument(w + ": expected " + (budget ? "a positive number of seconds" : "a fraction in [0, 1)") +
                                ", got '" + base::echo_word(v) + "'");
      (budget ? o.budget_s : o.margin) = *x;
    } else if (!o.positional.empty() && o.positional.front() == "explain") {
      o.positional.push_back(w);  // the command to explain may carry -j, -v, ... of its own
    } else if (w == "-j" || w == "--jobs" || w == "--gpu-id") {
      BOO_ASSIGN_OR_RETURN(std::string v, value());
      Result<int64_t> n = base::parse_int(v);
      if (!n.ok() || *n < (w == "--gpu-id" ? -1 : 1) || !base::narrow<int>(*n))
        return invalid_argument(w + ": expected a " + (w == "--gpu-id" ? "GPU ordinal (or -1: every GPU, boo tune)" : "positive count") +
                                ", got '" + v + "'");
      (w == "--gpu-id" ? o.gpu_id : o.jobs) = static_cast<int>(*n);
    } else if (w == "-v" || w == "--verbose") {
      base::set_log_level(base::LogLevel::kDebug);
    } else if (base::starts_with(w, "-j") && w.size() > 2) {
      Result<int64_t> n = base::parse_int(w.substr(2));
      if (!n.ok() || *n < 1 || !base::narrow<int>(*n))
        return invalid_argument("-j: expected a positive count, got '" + w.substr(2) + "'");
      o.jobs = static_cast<int>(*n);
    } else if (base::starts_with(w, "-")) {
      return invalid_argument("unknown option '" + w + "'");
    } else {
      o.positional.push_back(w);
    }
  }
  return o;
}

cache::ArtifactCache make_cache(const Options& o) {
  cache::CacheConfig c = cache::CacheConfig::from_environment();
  if (!o.cache_dir.empty()) {
    c.dir = o.cache_dir;
    c.enabled = true;
  }
  return cache::ArtifactCache(c);
}

// The tuning database's path: --tuning-db, else the environment's.
std::string tuning_db_path(const Options& o) {
  if (!o.tuning_db.empty()) return o.tuning_db;
  RuntimeOptions ro = RuntimeOptions::from_environment();
  return o.cache_dir.empty() ? ro.tuning_db : cache::TuningDb::default_path(o.cache_dir);
}

// The device to compile for: --arch (no GPU needed), else the GPU.
Result<DeviceInfo> target_device(const Options& o) {
  if (!o.arch.empty()) return DeviceInfo::for_arch(o.arch);
  RuntimeOptions ro;
  ro.device = o.gpu_id;
  ro.cache_enabled = false;
  Result<std::unique_ptr<Runtime>> rt = Runtime::create(ro);
  if (!rt.ok()) {
    Status st = rt.status();
    return std::move(st).annotate("no GPU to compile for; pass --arch (e.g. --arch sm_90a) to compile without one");
  }
  return (*rt)->device();
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
  return buf;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

//===--- info ---===//

int cmd_info(const Options& o) {
  std::cout << "boo " << library_version() << " (commit " << git_commit() << ")\n";
  Result<const cuda::DriverApi*> driver = cuda::driver_api();
  Result<std::string> driver_version = cuda_driver_version();
  if (driver.ok())
    std::cout << "CUDA driver: " << *driver_version << " (" << (*driver)->library_path << ")\n";
  else
    std::cout << "CUDA driver: unavailable (" << driver.status().message() << ")\n";
  Result<std::string> nvrtc = jit::nvrtc_version();
  Result<const cuda::NvrtcApi*> nvrtc_api = cuda::nvrtc_api();
  std::cout << "NVRTC: "
            << (nvrtc.ok() ? *nvrtc + " (" + (*nvrtc_api)->library_path + ")"
                           : "unavailable (" + nvrtc.status().message() + ")")
            << "\n";
  for (auto [name, probe] : {std::pair{"cuDNN", &cuda::probe_cudnn}, std::pair{"CUPTI", &cuda::probe_cupti}}) {
    Result<cuda::LibraryInfo> lib = probe();
    std::cout << name << ": "
              << (lib.ok() ? lib->version + " (" + lib->path + ")" : "unavailable (" + lib.status().message() + ")")
              << "\n";
  }
  std::string boo_backend = "unavailable";
  if (driver.ok()) {
    int count = 0;
    (*driver)->cuDeviceGetCount(&count);
    std::cout << "devices:\n";
    for (int d = 0; d < count; ++d) {
      RuntimeOptions ro;
      ro.device = d;
      ro.cache_enabled = false;
      Result<std::unique_ptr<Runtime>> rt = Runtime::create(ro);
      if (!rt.ok()) {
        std::cout << "  " << d << ": " << rt.status().message() << "\n";
        continue;
      }
      const DeviceInfo& info = (*rt)->device();
      std::cout << "  " << d << ": " << info.name << ", compute capability " << info.cc_major << "." << info.cc_minor
                << " (" << info.arch() << "), " << info.sm_count << " SMs, "
                << human_bytes(static_cast<double>(info.total_memory_bytes)) << ", L2 "
                << human_bytes(info.l2_bytes) << "\n";
      if (d == o.gpu_id) boo_backend = "available on GPU " + std::to_string(d);
    }
    if (boo_backend == "unavailable") boo_backend = "unavailable (GPU " + std::to_string(o.gpu_id) + " not usable)";
  } else {
    boo_backend = "unavailable (" + driver.status().message() + ")";
  }
  if (!nvrtc.ok()) boo_backend = "unavailable (NVRTC: " + nvrtc.status().message() + ")";
  std::cout << "backends:\n  cpu: available (float64 reference)\n  boo: " << boo_backend << "\n";
  const cache::ArtifactCache cache = make_cache(o);
  Result<std::vector<cache::CacheEntry>> entries = cache.list();
  double bytes = 0;
  if (entries.ok())
    for (const cache::CacheEntry& e : *entries) bytes += static_cast<double>(e.cubin_bytes);
  std::cout << "cache: " << cache.dir() << " (" << (cache.enabled() ? "on" : "off: BOO_CACHE_ON=0") << "), "
            << (entries.ok() ? std::to_string(entries->size()) : std::string("?")) << " entries, "
            << human_bytes(bytes) << "\n";
  return 0;
}

//===--- cache ---===//

int cmd_cache(const Options& o) {
  const std::string sub = o.positional.size() > 1 ? o.positional[1] : "";
  const cache::ArtifactCache cache = make_cache(o);
  if (sub == "clear") {
    Status st = cache.clear();
    std::cout << (st.ok() ? "cleared " + cache.dir() : st.to_string()) << "\n";
    return st.ok() ? 0 : 1;
  }
  Result<std::vector<cache::CacheEntry>> entries = cache.list();
  if (!entries.ok()) {
    std::cerr << "boo: " << entries.status().to_string() << "\n";
    return 1;
  }
  auto field = [](const cache::CacheEntry& e, const char* key) {
    const std::string* v = e.metadata.get(key);
    return v ? *v : std::string("?");
  };
  if (sub == "ls") {
    for (const cache::CacheEntry& e : *entries) {
      std::cout << e.key.substr(0, 16) << "  " << e.arch << "  " << field(e, "implementation") << "  "
                << field(e, "compile_ms") << " ms  " << field(e, "registers") << " regs  "
                << (e.problem.ok() ? field(e, "func_name") : "BAD: " + e.problem.message()) << "\n";
    }
    return 0;
  }
  if (sub == "stat") {
    std::map<std::string, int> per_impl;
    std::vector<double> compile_ms;
    double bytes = 0;
    int bad = 0;
    for (const cache::CacheEntry& e : *entries) {
      bytes += static_cast<double>(e.cubin_bytes);
      if (!e.problem.ok()) {
        ++bad;
        continue;
      }
      ++per_impl[field(e, "implementation") + " (" + e.arch + ")"];
      if (Result<double> ms = e.metadata.number("compile_ms"); ms.ok()) compile_ms.push_back(*ms);
    }
    std::cout << "cache: " << cache.dir() << "\nentries: " << entries->size() << " (" << bad << " bad), "
              << human_bytes(bytes) << "\n";
    for (const auto& [impl, n] : per_impl) std::cout << "  " << impl << ": " << n << "\n";
    if (!compile_ms.empty())
      std::cout << "compile time: median " << base::format_double(std::round(median(compile_ms))) << " ms, max "
                << base::format_double(std::round(*std::max_element(compile_ms.begin(), compile_ms.end())))
                << " ms\n";
    const size_t stale = cache.stale_temporaries().size();
    if (stale) std::cout << "temporary files left by stopped writers: " << stale << " (boo cache clear removes them)\n";
    return 0;
  }
  if (sub == "verify") {
    int bad = 0;
    for (const cache::CacheEntry& e : *entries) {
      if (e.problem.ok()) continue;
      ++bad;
      std::cout << "BAD " << (e.json_path.empty() ? e.cubin_path : e.json_path) << ": " << e.problem.message() << "\n";
    }
    std::cout << "verified " << entries->size() << " entries: " << (entries->size() - static_cast<size_t>(bad))
              << " good, " << bad << " bad\n";
    return bad ? 1 : 0;
  }
  std::cerr << "boo cache: expected ls, stat, verify or clear\n";
  return 2;
}

//===--- preload ---===//

int cmd_preload(const Options& o) {
  if (o.commands_file.empty()) {
    std::cerr << "boo preload: --commands-file is required\n";
    return 2;
  }
  Result<std::vector<CommandLine>> lines = load_commands(o.commands_file, {});
  if (!lines.ok()) {
    std::cerr << "boo preload: " << lines.status().to_string() << "\n";
    return 2;
  }
  Result<DeviceInfo> device = target_device(o);
  if (!device.ok()) {
    std::cerr << "boo preload: " << device.status().to_string() << "\n";
    return 2;
  }
  std::vector<std::unique_ptr<OpSignature>> owned;
  std::vector<const OpSignature*> signatures;
  std::vector<runtime::PreloadFailure> parse_failures;
  int unsupported = 0;
  for (const CommandLine& line : *lines) {
    Result<ParsedCommand> parsed = line.split_status.ok() ? parse_command(line.words) : Result<ParsedCommand>(line.split_status);
    if (!parsed.ok()) {
      if (parsed.status().code() == StatusCode::kUnimplemented) ++unsupported;
      else parse_failures.push_back({"line " + std::to_string(line.line_number) + ": " + line.text, parsed.status()});
      continue;
    }
    owned.push_back(std::move(parsed->signature));
    signatures.push_back(owned.back().get());
  }
  const cache::ArtifactCache cache = make_cache(o);
  std::cerr << "boo preload: " << signatures.size() << " signatures for " << device->arch() << " into " << cache.dir()
            << " with " << o.jobs << " jobs\n";
  const bool tty = isatty(STDERR_FILENO);
  int64_t last_decile = -1;
  const std::unique_ptr<cache::TuningDb> tuning = runtime::open_tuning_db(tuning_db_path(o));
  const RuntimeOptions env = RuntimeOptions::from_environment();
  const std::shared_ptr<const cache::ShippedTunings> shipped = cache::ShippedTunings::shared(env.shipped_tuning);
  runtime::PreloadReport report = runtime::preload(
      signatures, *device, cache, o.jobs, o.implementation, tuning.get(), shipped.get(), env.save_temps_dir,
      [&](int64_t done, int64_t total, const runtime::PreloadReport& r) {
        const int width = 30;
        const int64_t filled = total ? done * width / total : width;
        const std::string bar = "[" + std::string(static_cast<size_t>(filled), '=') +
                                std::string(static_cast<size_t>(width - filled), ' ') + "] ";
        const std::string counts = std::to_string(done) + "/" + std::to_string(total) + " compiled=" +
                                   std::to_string(r.compiled) + " cached=" + std::to_string(r.cached) +
                                   " failed=" + std::to_string(r.failed);
        if (tty) {
          std::cerr << "\r" << bar << counts << std::flush;
        } else if (total && done * 10 / total != last_decile) {
          last_decile = done * 10 / total;
          std::cerr << bar << counts << "\n";
        }
      });
  if (tty) std::cerr << "\n";
  report.failed += static_cast<int64_t>(parse_failures.size());
  report.failures.insert(report.failures.begin(), parse_failures.begin(), parse_failures.end());
  std::cout << "compiled=" << report.compiled << " cached=" << report.cached << " failed=" << report.failed << "\n";
  for (const runtime::PreloadFailure& f : report.failures)
    std::cout << "FAILED " << f.what << ": " << f.reason.to_string() << "\n";
  if (unsupported) std::cout << "skipped " << unsupported << " commands of ops boo does not implement\n";
  for (const runtime::PreloadFailure& f : report.skipped)
    std::cout << "SKIPPED " << f.what << ": no GPU kernel to compile: " << f.reason.to_string() << "\n";
  if (!report.compile_ms.empty())
    std::cout << "compile time per module: median " << base::format_double(std::round(median(report.compile_ms)))
              << " ms, max "
              << base::format_double(std::round(*std::max_element(report.compile_ms.begin(), report.compile_ms.end())))
              << " ms\n";
  return report.failed ? 1 : 0;
}

//===--- explain ---===//

int cmd_explain(const Options& o) {
  if (o.positional.size() < 2) {
    std::cerr << "boo explain: expected a quoted command, e.g. boo explain \"convbfp16 -n 1 ...\"\n";
    return 2;
  }
  std::string line;
  for (size_t i = 1; i < o.positional.size(); ++i) line += (i > 1 ? " " : "") + o.positional[i];
  Result<ParsedCommand> parsed = parse_command(std::string_view(line));
  if (!parsed.ok()) {
    std::cout << "command: " << line << "\n" << parsed.status().to_string() << "\n";
    return 1;
  }
  const OpSignature& sig = *parsed->signature;
  std::cout << "command:   " << sig.command() << "\nfunc_name: " << sig.func_name() << "\n";
  for (const TensorSpec& t : sig.arguments())
    std::cout << "  argument " << t.name << ": " << format_dims(t.shape) << " strides " << format_dims(t.strides)
              << " " << dtype_name(t.dtype) << (t.layout.empty() ? "" : " " + t.layout) << "\n";
  for (const TensorSpec& t : sig.results())
    std::cout << "  result   " << t.name << ": " << format_dims(t.shape) << " strides " << format_dims(t.strides)
              << " " << dtype_name(t.dtype) << (t.layout.empty() ? "" : " " + t.layout) << "\n";
  Result<DeviceInfo> device = target_device(o);
  if (!device.ok()) {
    std::cout << "device: " << device.status().message() << "\n";
    return 1;
  }
  const std::unique_ptr<cache::TuningDb> tuning = runtime::open_tuning_db(tuning_db_path(o));
  std::cout << "device:    " << device->name << " (" << device->arch() << ")\ntuning:    "
            << (tuning ? tuning->path() : "no database (" + tuning_db_path(o) + ")") << "\n";
  const std::shared_ptr<const cache::ShippedTunings> shipped =
      cache::ShippedTunings::shared(RuntimeOptions::from_environment().shipped_tuning);
  std::cout << "shipped:   " << (shipped ? shipped->describe(device->name) : "none (BOO_SHIPPED_TUNING=0, or no tuning folder beside boo)")
            << "\nimplementations, best first:\n";
  Result<runtime::Dispatch> dispatch =
      runtime::choose_gpu_implementation(sig, *device, o.implementation, tuning.get(), shipped.get());
  if (!dispatch.ok()) {
    std::cout << dispatch.status().to_string() << "\n";
    return 1;
  }
  const runtime::Dispatch& d = *dispatch;
  for (const runtime::Considered& c : d.considered) {
    std::cout << "  " << c.name << ": "
              << (c.verdict.ok() ? (d.chosen && d.chosen->name() == c.name ? "accepts  <- chosen" : "accepts")
                                 : "declines: " + c.verdict.message())
              << "\n";
  }
  std::cout << "  cpu:" << sig.op_name() << ":reference: accepts (the --backend cpu reference)\n";
  if (!d.chosen) {
    std::cout << d.failure().to_string() << "\n";
    return 1;
  }
  Result<ops::Plan> plan = runtime::plan_chosen(d);
  if (!plan.ok()) {
    std::cout << plan.status().to_string() << "\n";
    return 1;
  }
  Result<std::string> version = runtime::tuning_version(*d.chosen, *d.problem, d.arch);
  std::cout << "config:    " << d.config->text() << "\nconfig from: " << d.config_origin << "\ntuning version: "
            << (version.ok() ? *version : version.status().to_string())
            << "\ncost model: " << d.arch.cost_model->origin() << "\nworkspace: " << plan->workspace_bytes << " bytes\nlaunches:\n";
  for (const ops::LaunchStep& step : plan->steps) {
    std::cout << "  " << step.entry << " grid " << step.grid.x << "x" << step.grid.y << "x" << step.grid.z << " block "
              << step.block.x << " shared " << step.shared_bytes << "\n";
    for (const ops::TensorMapSlot& map : step.tensor_maps) std::cout << "    " << map.text() << "\n";
  }
  Result<runtime::ModuleRequest> request =
      runtime::describe_module(d.chosen->name(), *d.config, plan->source, device->arch());
  if (!request.ok()) {
    std::cout << request.status().to_string() << "\n";
    return 1;
  }
  const cache::ArtifactCache cache = make_cache(o);
  const std::string key = request->key.digest();
  const bool cached = cache.load(request->key, request->arch).has_value();
  std::cout << "kernels:";
  for (const std::string& e : request->source.entries) std::cout << " " << e;
  std::cout << "\ncache key: " << key << "\ncached:    "
            << (cached ? "yes (" + cache.cubin_path(key, request->arch) + ")" : "no") << "\nkey record:\n";
  for (const auto& [k, v] : request->key.fields()) std::cout << "  " << k << "=" << v << "\n";
  return 0;
}

//===--- tune ---===//

int cmd_tune(const Options& o) {
  TuneOptions t;
  t.commands_file = o.commands_file;
  t.db_path = tuning_db_path(o);
  t.import_path = o.import_path;
  t.export_path = o.export_path;
  t.cache_dir = o.cache_dir;
  t.implementation = o.implementation;
  t.top = o.top;
  t.budget_s = o.budget_s;
  t.margin = o.margin;
  t.jobs = o.jobs;
  t.gpu_id = o.gpu_id;
  return o.executor_child ? run_tune_child(t) : run_tune(t);
}

//===--- report ---===//

// The report is Python (matplotlib draws its figures): the package tools/report/boo_report, which the
// build copies and an install puts at <prefix>/share/boo/report, found from this executable's own folder
// (<build>/tools or <prefix>/bin), so the build tree and a relocated install both work.
std::string report_package() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "";
  const std::string path(self, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/')) + "/../share/boo/report/boo_report";
}

// Replaces this process with `python3 <package> ARGS` (BOO_PYTHON names another interpreter); returns
// only when that cannot start.
int cmd_report(const std::vector<std::string>& args) {
  const std::string package = report_package();
  struct stat st {};
  if (package.empty() || stat((package + "/__main__.py").c_str(), &st) != 0) {
    std::cerr << "boo report: the report's Python package is missing (looked for " << package
              << "/__main__.py): reinstall boo, or run python3 tools/report/boo_report from boo's source tree\n";
    return 2;
  }
  const char* env = std::getenv("BOO_PYTHON");
  std::string python = env && *env ? env : "python3";
  std::vector<std::string> words{python, package};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  execvp(python.c_str(), argv.data());
  std::cerr << "boo report: cannot run '" << python << "' (" << std::strerror(errno)
            << "): the report needs Python 3 with matplotlib; install them, or set BOO_PYTHON to such a Python\n";
  return 2;
}

}  // namespace
}  // namespace boo::tools

int main(int argc, char** argv) {
  using namespace boo::tools;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "boo " << boo::library_version() << " (commit " << boo::git_commit() << ")\n";
    return 0;
  }
  // report's options are the Python report's own (tools/report/boo_report/cli.py).
  if (args[0] == "report") return cmd_report(std::vector<std::string>(args.begin() + 1, args.end()));
  boo::Result<Options> opts = parse_options(args);
  if (!opts.ok()) {
    std::cerr << "boo: " << opts.status().to_string() << "\n" << kUsage;
    return 2;
  }
  const std::string& cmd = opts->positional.front();
  if (opts->gpu_id < 0 && cmd != "tune") {
    std::cerr << "boo: --gpu-id -1 (every GPU) is for boo tune; " << cmd << " takes one GPU ordinal\n";
    return 2;
  }
  if (cmd == "info") return cmd_info(*opts);
  if (cmd == "cache") return cmd_cache(*opts);
  if (cmd == "preload") return cmd_preload(*opts);
  if (cmd == "explain") return cmd_explain(*opts);
  if (cmd == "tune") return cmd_tune(*opts);
  std::cerr << "boo: unknown command '" << cmd << "'\n" << kUsage;
  return 2;
}
