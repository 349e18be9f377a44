// boo tune: candidates -> parallel NVRTC compile -> timed on the GPU with the
// driver's timer -> the fastest, when it beats the heuristic's config by the
// margin and passes the numerics check against it -> one database row.
//
// The parent process never times anything: it reads the commands, skips the
// signatures that have a row of this version already (a rerun resumes), and
// hands each signature to an executor child (tools/driver/executor.hpp, the
// driver's). The child announces each config before timing it; when the
// child dies, hangs or finds its CUDA context broken, the parent starts a
// fresh one for the same signature without that config.
#include "tune.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "base/file_util.hpp"
#include "base/strings.hpp"
#include "bench/backend.hpp"
#include "bench/executor_protocol.hpp"
#include "bench/numerics_check.hpp"
#include "bench/reference.hpp"
#include "bench/statistics.hpp"
#include "boo/registry.hpp"
#include "boo/runtime.hpp"
#include "cache/artifact_cache.hpp"
#include "cache/tuning_db.hpp"
#include "cuda/driver_api.hpp"
#include "common/commands_file.hpp"
#include "driver/executor.hpp"
#include "ops/op_registry.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/plan_loader.hpp"
#include "runtime/preload.hpp"

namespace boo::tools {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The line a child prints before timing config `index`: the parent's record of which one was running.
constexpr const char* kTryingConfig = "tuning config ";
// Faulting configs a signature may lose before it is given up.
constexpr int kMostFaults = 3;

// Test hook (tests/python/test_tune.py): BOO_TEST_TUNE_CRASH=i makes the executor child die when it
// tries config i, as a kernel that kills its process would, so that the parent's retry without that
// config runs without a GPU fault. -1 (unset or not a number): never.
int crash_config_for_test() {
  const char* v = std::getenv("BOO_TEST_TUNE_CRASH");
  return v && *v ? std::atoi(v) : -1;
}

// BOO_TEST_TUNE_SLOW_HEURISTIC=f (tests): the first pass's timing of the heuristic's config multiplied by f,
// as a timing taken at a lower clock would be, so that another config leads it until the two are re-timed in
// turn (kConfirmRounds). 1 (unset or not a number): never.
double slow_heuristic_for_test() {
  const char* v = std::getenv("BOO_TEST_TUNE_SLOW_HEURISTIC");
  const double f = v && *v ? std::atof(v) : 1.0;
  return f > 0 ? f : 1.0;
}

std::string format_us(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f us", us);
  return buf;
}

std::string format_duration(double s) {
  char buf[32];
  const long long total = std::llround(std::max(0.0, s));
  std::snprintf(buf, sizeof buf, "%lldm%02llds", total / 60, total % 60);
  return buf;
}

RuntimeOptions runtime_options(const TuneOptions& o) {
  RuntimeOptions ro = RuntimeOptions::from_environment();
  ro.device = o.gpu_id;
  if (!o.cache_dir.empty()) {
    ro.cache_dir = o.cache_dir;
    ro.cache_enabled = true;
  }
  ro.tuning_db.clear();  // the tuner chooses every config itself
  return ro;
}

// A launch's GPU time: its kernels' median times (each kernel's samples over
// the timed launches, so a kernel run twice per launch counts twice).
double launch_us(const bench::BackendRun& run) {
  double total = 0;
  for (const bench::KernelTiming& k : run.kernels) {
    if (k.samples_us.empty()) continue;
    const double per_launch = run.timed_launches > 0 ? static_cast<double>(k.samples_us.size()) /
                                                           static_cast<double>(run.timed_launches)
                                                     : 1.0;
    total += bench::median(k.samples_us) * per_launch;
  }
  return total;
}

// What the child reports for one signature (the DONE record's row).
struct Outcome {
  std::string kind;       // "tuned", "kept" (the heuristic's config is best), "failed", "fault"
  std::string summary;    // the human line
  int fault_config = -1;  // "fault": the config whose run broke the context
};

// The pick is the least of up to --top timings, each of them noisy: among configs of about one speed the
// least of 9-19 ran 0.94x the heuristic's time on 32 native NCHW lines (5-65 us) that the driver then timed
// at 1.001x with the picks (H200, 2026-11-28, docs/perf/2026-11-28-session21.md). So the pick and the
// heuristic's config are timed again, in turn, this many times each, and the pick is kept only where the
// median of its timings still beats the heuristic's by the margin.
constexpr int kConfirmRounds = 3;

// One signature in this process: every candidate not in `excluded` compiled,
// timed (within the budget), the fastest confirmed against the heuristic's, verified and written.
class SignatureTuner {
 public:
  SignatureTuner(const TuneOptions& o, Runtime& rt, cache::TuningDb& db, bench::Reference& reference)
      : o_(o), rt_(rt), db_(db), reference_(reference) {}

  Outcome tune(const OpSignature& sig, const std::set<int>& excluded) {
    const Clock::time_point start = Clock::now();
    // Ranked by the cost model dispatch would use (the refitted file beside the shipped tunings, when
    // there is one), without the shipped rows: the tuner chooses every config itself.
    const std::shared_ptr<const cache::ShippedTunings> shipped =
        cache::ShippedTunings::shared(runtime_options(o_).shipped_tuning);
    Result<runtime::Dispatch> dispatch = runtime::choose_gpu_implementation(
        sig, rt_.device(), o_.implementation, nullptr, nullptr, runtime::cost_model_of(shipped.get(), rt_.device()));
    if (!dispatch.ok()) return failed(dispatch.status());
    const runtime::Dispatch& d = *dispatch;
    if (!d.chosen) return failed(d.failure());
    Result<ops::ConfigList> listed = d.chosen->candidates(*d.problem, d.arch);
    if (!listed.ok()) return failed(listed.status());
    ops::ConfigList list = std::move(*listed);
    if (list.size() > o_.top) list.resize(o_.top);
    if (excluded.count(0)) return failed(internal_error("the heuristic's own config faulted"));

    // Plans and their modules, compiled in parallel into the cache (load_plan then reads them).
    std::vector<std::optional<ops::Plan>> plans(list.size());
    std::vector<runtime::ModuleJob> jobs;
    for (size_t i = 0; i < list.size(); ++i) {
      if (excluded.count(static_cast<int>(i))) continue;
      Result<ops::Plan> plan = d.chosen->plan(*d.problem, *list[i], d.arch);
      if (plan.ok() && plan->validate(sig.arguments().size(), sig.results().size()).ok()) {
        Result<runtime::ModuleRequest> request =
            runtime::describe_module(d.chosen->name(), *list[i], plan->source, rt_.device().arch());
        if (request.ok()) jobs.push_back(runtime::ModuleJob{std::move(*request), &sig});
        plans[i] = std::move(*plan);
      } else if (i == 0) {
        return failed(plan.ok() ? internal_error("the heuristic's plan is invalid") : plan.status());
      }
    }
    const RuntimeOptions ro = runtime_options(o_);
    if (ro.cache_enabled)
      runtime::build_modules(std::move(jobs), cache::ArtifactCache(cache::CacheConfig{ro.cache_dir, true}), o_.jobs,
                             "", nullptr);

    const ops::OpDefinition* op = ops::find_op(sig.op_name());
    Result<std::vector<base::HostTensor>> args = bench::make_arguments(&rt_, *op, sig, {});
    if (!args.ok()) return failed(args.status());

    // The budget is for timing: it starts once the modules are built. Each
    // candidate is sized to a share of it (about a third of it times them all).
    const Clock::time_point timing_start = Clock::now();
    RunOptions run;
    run.time = true;
    run.min_time_s = std::clamp(o_.budget_s / (3.0 * static_cast<double>(list.size())), 0.01, 0.25);
    struct Timed {
      size_t index;
      double us;
      std::unique_ptr<bench::Backend> backend;
    };
    std::vector<Timed> timed;
    std::string notes;
    for (size_t i = 0; i < list.size(); ++i) {
      if (!plans[i]) continue;
      if (i > 0 && seconds_since(timing_start) > o_.budget_s) {
        notes += "; budget spent after " + std::to_string(timed.size()) + " configs";
        break;
      }
      std::cout << kTryingConfig << i << "\n" << std::flush;
      if (static_cast<int>(i) == crash_config_) std::abort();
      Result<std::shared_ptr<Launchable>> launchable =
          runtime::load_plan(rt_, sig, d.chosen->name(), *list[i], *plans[i], sig.arguments(), sig.results());
      Result<bench::BackendRun> measured = launchable.status();
      std::unique_ptr<bench::Backend> backend;
      if (launchable.ok()) {
        backend = bench::make_boo_backend_of(rt_, bench::TimingOptions{}, *launchable);
        measured = backend->run(sig, *args, run);
      }
      if (!measured.ok()) {
        if (Status health = rt_.context_health(); !health.ok())
          return Outcome{"fault", "config " + std::to_string(i) + " broke the CUDA context: " + health.to_string(),
                         static_cast<int>(i)};
        if (i == 0) return failed(measured.status());
        notes += "; config " + std::to_string(i) + " failed: " + measured.status().message();
        continue;
      }
      timed.push_back(Timed{i, launch_us(*measured) * (i == 0 ? slow_heuristic_ : 1.0), std::move(backend)});
    }
    const Timed& heuristic = timed.front();
    const Timed* best = &heuristic;
    for (const Timed& t : timed)
      if (t.us < best->us) best = &t;
    const Timed* winner = &heuristic;
    double winner_us = heuristic.us, heuristic_us = heuristic.us;
    if (best != &heuristic && bench::beats_by_margin({best->us}, {heuristic.us}, o_.margin)) {
      // kConfirmRounds timings of each, in turn (heuristic, pick, heuristic, ...).
      std::vector<double> again[2];
      for (int round = 0; round < kConfirmRounds; ++round)
        for (int which = 0; which < 2; ++which) {
          const Timed& t = which == 0 ? heuristic : *best;
          Result<bench::BackendRun> measured = t.backend->run(sig, *args, run);
          if (!measured.ok()) {
            if (Status health = rt_.context_health(); !health.ok())
              return Outcome{"fault", "config " + std::to_string(t.index) + " broke the CUDA context re-timed: " +
                                          health.to_string(),
                             static_cast<int>(t.index)};
            Status why = measured.status();
            return failed(std::move(why).annotate("re-timing config " + std::to_string(t.index)));
          }
          again[which].push_back(launch_us(*measured));
        }
      const double confirmed_us = bench::median(again[1]), confirmed_heuristic_us = bench::median(again[0]);
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.3fx", confirmed_us / confirmed_heuristic_us);
      if (!bench::beats_by_margin(again[1], again[0], o_.margin)) {
        notes += "; config " + std::to_string(best->index) + " (" + format_us(best->us) +
                 ") lost its lead re-timed in turn with the heuristic's (" + ratio + ")";
      } else {
        // The numerics of the faster config against the float64 reference, with
        // the heuristic config's spread as the one to match.
        const bench::NumericsVerdict verdict = bench::check_numerics(sig, *best->backend, heuristic.backend.get(),
                                                                     bench::NumericsOptions{}, 1, &reference_);
        if (verdict.pass()) {
          winner = best;
          winner_us = confirmed_us;
          heuristic_us = confirmed_heuristic_us;
        } else {
          notes += "; config " + std::to_string(best->index) + " (" + format_us(best->us) + ") failed numerics: " +
                   (verdict.error.empty() ? verdict.failure_reasons() : verdict.error);
        }
      }
    } else if (best != &heuristic) {
      notes += "; config " + std::to_string(best->index) + " within the margin";
    }
    // Every timed candidate, with the cost model's terms, for scripts/refit_cost_model.py.
    Result<cache::TuningKey> found_key = runtime::tuning_key(d, rt_.device());
    if (!found_key.ok()) return failed(found_key.status());
    const cache::TuningKey& key = *found_key;
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    std::vector<cache::MeasurementRow> measured;
    for (const Timed& t : timed) {
      cache::MeasurementRow m;
      m.key = key;
      m.config = list[t.index]->text();
      m.measured_us = t.us;
      m.heuristic = t.index == 0;
      m.measured_at = now;
      Result<ops::CostTerms> terms = d.chosen->cost_terms(*d.problem, *list[t.index], d.arch);
      if (terms.ok()) {
        m.terms = terms->seconds;
        m.predicted_us = terms->predicted_s(*d.arch.cost_model, d.chosen->name()) * 1e6;
      }
      if (m.measured_us > 0) measured.push_back(std::move(m));
    }
    if (Status st = db_.put_measurements(measured); !st.ok())
      return failed(std::move(st).annotate("writing the measurements"));
    cache::TuningRow row;
    row.key = key;
    row.config = list[winner->index]->text();
    row.time_us = winner_us;
    row.heuristic_us = heuristic_us;
    row.tuned_at = now;
    if (Status st = db_.put(row); !st.ok()) return failed(std::move(st).annotate("writing the row"));
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.3fx", winner_us / heuristic_us);
    Outcome out;
    out.kind = winner == &heuristic ? "kept" : "tuned";
    out.summary = std::string(d.chosen->name()) + ", " + std::to_string(timed.size()) + " of " +
                  std::to_string(list.size()) + " configs timed in " + format_duration(seconds_since(start)) +
                  ": heuristic " + format_us(heuristic_us) + ", " +
                  (winner == &heuristic ? "kept" : "config " + std::to_string(winner->index) + " " +
                                                       format_us(winner_us) + " (" + ratio + ", re-timed in turn)") +
                  notes;
    return out;
  }

 private:
  static Outcome failed(const Status& why) { return Outcome{"failed", why.to_string(), -1}; }

  const TuneOptions& o_;
  Runtime& rt_;
  cache::TuningDb& db_;
  bench::Reference& reference_;
  const int crash_config_ = crash_config_for_test();
  const double slow_heuristic_ = slow_heuristic_for_test();
};

Result<std::unique_ptr<cache::TuningDb>> open_for_writing(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) BOO_RETURN_IF_ERROR(base::make_directories(parent.string()));
  return cache::TuningDb::open(path, true);
}

// The GPUs the tuners run on: the one asked for, or (--gpu-id -1) every one the driver sees.
Result<std::vector<int>> tuning_gpus(int gpu_id) {
  if (gpu_id >= 0) return std::vector<int>{gpu_id};
  BOO_ASSIGN_OR_RETURN(const cuda::DriverApi* api, cuda::driver_api());
  int count = 0;
  if (api->cuDeviceGetCount(&count) != 0 || count < 1) return unavailable("--gpu-id -1: the CUDA driver reports no GPU");
  std::vector<int> gpus;
  for (int d = 0; d < count; ++d) gpus.push_back(d);
  return gpus;
}

// One signature's outcome ("tuned", "kept", "failed") and its summary line, from executor
// `executor`: a config that faults (the child dies, hangs or says so) is left out and the
// signature retried, kMostFaults times at most. `note` prints a line as it happens.
std::pair<std::string, std::string> tune_signature(driver::Executor& executor, int index, const std::string& command,
                                                   const std::function<void(const std::string&)>& note) {
  std::set<int> excluded;
  std::string result, kind;
  for (int faults = 0;; ++faults) {
    std::vector<std::string> fields = {command};
    for (int e : excluded) fields.push_back(std::to_string(e));
    driver::ExecutorResult r = executor.run(index, fields);
    int culprit = -1;
    if (r.done) {
      kind = r.done->outcome;
      result = r.done->row.empty() ? "" : r.done->row[0];
      if (kind == "fault" && r.done->row.size() > 1) culprit = std::atoi(r.done->row[1].c_str());
    } else {
      // Died or hung: the config it announced last was running.
      kind = "fault";
      result = r.failure;
      const size_t at = r.output.rfind(kTryingConfig);
      if (at != std::string::npos) culprit = std::atoi(r.output.c_str() + at + std::string(kTryingConfig).size());
    }
    if (kind != "fault") break;
    if (culprit <= 0 || faults + 1 >= kMostFaults) {
      kind = "failed";
      result += culprit == 0 ? " (the heuristic's config)" : "";
      break;
    }
    note("  config " + std::to_string(culprit) + " faulted (" + result + "); retrying without it");
    excluded.insert(culprit);
  }
  return {kind, result};
}

}  // namespace

std::vector<std::string> tune_child_arguments(const TuneOptions& o) {
  std::vector<std::string> args = {"tune", "--executor-child", "--tuning-db", o.db_path,
                                   "--top", std::to_string(o.top), "--budget-per-signature",
                                   base::format_double(o.budget_s), "--margin", base::format_double(o.margin),
                                   "-j", std::to_string(o.jobs), "--gpu-id", std::to_string(o.gpu_id)};
  if (!o.cache_dir.empty()) args.insert(args.end(), {"--cache-dir", o.cache_dir});
  if (!o.implementation.empty()) args.insert(args.end(), {"--impl", o.implementation});
  return args;
}

int run_tune_child(const TuneOptions& o) {
  Result<std::unique_ptr<Runtime>> rt = Runtime::create(runtime_options(o));
  Result<std::unique_ptr<cache::TuningDb>> db = cache::TuningDb::open(o.db_path, true);
  if (!rt.ok() || !db.ok()) {
    std::cerr << "boo tune executor: " << (rt.ok() ? db.status() : rt.status()).to_string() << "\n";
    return 2;
  }
  std::unique_ptr<bench::Reference> reference = bench::make_gpu_reference(**rt);
  SignatureTuner tuner(o, **rt, **db, *reference);
  std::string line;
  while (std::getline(std::cin, line)) {
    // Fields: the command, then the indexes of the configs to leave out.
    std::optional<std::pair<int, std::vector<std::string>>> request = bench::decode_run(line);
    if (!request || request->second.empty()) continue;
    std::set<int> excluded;
    for (size_t i = 1; i < request->second.size(); ++i) excluded.insert(std::atoi(request->second[i].c_str()));
    Outcome out;
    Result<ParsedCommand> parsed = parse_command(std::string_view(request->second[0]));
    out = parsed.ok() ? tuner.tune(*parsed->signature, excluded) : Outcome{"failed", parsed.status().to_string(), -1};
    const bool leave = out.kind == "fault";
    std::cout << bench::encode_done(bench::DoneRecord{request->first, out.kind,
                                                      {out.summary, std::to_string(out.fault_config)}, leave, {}})
              << std::flush;
    if (leave) return 3;  // the context is unusable: the parent starts a fresh child
  }
  return 0;
}

int run_tune(const TuneOptions& o) {
  if (o.commands_file.empty() && o.import_path.empty() && o.export_path.empty()) {
    std::cerr << "boo tune: expected --commands-file F, --import J or --export J\n";
    return 2;
  }
  Result<std::unique_ptr<cache::TuningDb>> db = open_for_writing(o.db_path);
  if (!db.ok()) {
    std::cerr << "boo tune: " << db.status().to_string() << "\n";
    return 2;
  }
  if (!o.import_path.empty()) {
    Result<std::string> text = base::read_file(o.import_path);
    Result<int64_t> n = text.ok() ? (*db)->import_json(*text) : Result<int64_t>(text.status());
    if (!n.ok()) {
      std::cerr << "boo tune: --import " << o.import_path << ": " << n.status().to_string() << "\n";
      return 1;
    }
    std::cout << "imported " << *n << " rows from " << o.import_path << " into " << o.db_path << "\n";
  }
  int exit_code = 0;
  if (!o.commands_file.empty()) {
    Result<std::vector<CommandLine>> lines = load_commands(o.commands_file, {});
    if (!lines.ok()) {
      std::cerr << "boo tune: " << lines.status().to_string() << "\n";
      return 2;
    }
    Result<std::vector<int>> gpus = tuning_gpus(o.gpu_id);
    if (!gpus.ok()) {
      std::cerr << "boo tune: " << gpus.status().to_string() << "\n";
      return 2;
    }
    DeviceInfo device;
    {
      // The device the children time on (with --gpu-id -1 every GPU is taken to be the first's kind);
      // no CUDA work stays in this process.
      TuneOptions first = o;
      first.gpu_id = gpus->front();
      RuntimeOptions probe = runtime_options(first);
      probe.cache_enabled = false;
      Result<std::unique_ptr<Runtime>> rt = Runtime::create(probe);
      if (!rt.ok()) {
        std::cerr << "boo tune: timing configs needs a GPU, and none is usable: " << rt.status().to_string() << "\n";
        return 2;
      }
      device = (*rt)->device();
    }
    // The signatures without a row of this version for the implementation dispatch picks.
    std::vector<std::string> work;  // canonical commands
    std::set<std::string> seen;
    int skipped = 0;
    for (const CommandLine& line : *lines) {
      Result<ParsedCommand> parsed =
          line.split_status.ok() ? parse_command(line.words) : Result<ParsedCommand>(line.split_status);
      if (!parsed.ok()) {
        std::cout << "line " << line.line_number << ": skipped: " << parsed.status().to_string() << "\n";
        continue;
      }
      const std::string command = parsed->signature->command();
      if (!seen.insert(command).second) continue;
      Result<runtime::Dispatch> d = runtime::choose_gpu_implementation(*parsed->signature, device, o.implementation);
      if (!d.ok() || !d->chosen) {
        std::cout << command << ": skipped: " << (d.ok() ? d->failure() : d.status()).to_string() << "\n";
        continue;
      }
      Result<cache::TuningKey> key = runtime::tuning_key(*d, device);
      Result<cache::TuningLookup> found = key.ok() ? (*db)->find(*key) : Result<cache::TuningLookup>(key.status());
      if (found.ok() && found->row) {
        ++skipped;
        continue;
      }
      work.push_back(command);
    }
    std::cout << "boo tune: " << work.size() << " signatures to tune on " << device.name << " (" << device.arch()
              << ")" << (gpus->size() > 1 ? " x " + std::to_string(gpus->size()) : std::string()) << ", " << skipped
              << " already tuned, into " << o.db_path << "\n"
              << std::flush;
    // One executor per GPU, each taking the next signature (they share the database); lines print as
    // signatures finish, numbered by completion.
    const Clock::time_point start = Clock::now();
    int tuned = 0, kept = 0, failed = 0;
    size_t next = 0, finished = 0;
    std::mutex mutex;
    auto note = [&](const std::string& line) {
      const std::lock_guard<std::mutex> lock(mutex);
      std::cout << line << "\n" << std::flush;
    };
    auto tune_on = [&](int gpu) {
      TuneOptions on = o;
      on.gpu_id = gpu;
      driver::Executor executor(tune_child_arguments(on), o.budget_s * 3 + 300);
      while (true) {
        size_t i;
        {
          const std::lock_guard<std::mutex> lock(mutex);
          if (next >= work.size()) break;
          i = next++;
        }
        const auto [kind, result] = tune_signature(executor, static_cast<int>(i) + 1, work[i], note);
        const std::lock_guard<std::mutex> lock(mutex);
        (kind == "tuned" ? tuned : kind == "kept" ? kept : failed) += 1;
        ++finished;
        const double elapsed = seconds_since(start);
        const double eta = elapsed / static_cast<double>(finished) * static_cast<double>(work.size() - finished);
        std::cout << "[" << finished << "/" << work.size() << " " << format_duration(elapsed) << ", ETA "
                  << format_duration(eta) << (gpus->size() > 1 ? ", GPU " + std::to_string(gpu) : std::string())
                  << "] " << work[i] << ": " << (kind == "failed" ? "FAILED " : "") << result << "\n"
                  << std::flush;
      }
      executor.finish();
    };
    std::vector<std::thread> workers;
    for (size_t g = 1; g < gpus->size(); ++g) workers.emplace_back(tune_on, (*gpus)[g]);
    tune_on(gpus->front());
    for (std::thread& t : workers) t.join();
    std::cout << "boo tune: " << tuned << " tuned, " << kept << " kept the heuristic's config, " << failed
              << " failed, " << skipped << " already tuned\n";
    if (failed) exit_code = 1;
  }
  if (!o.export_path.empty()) {
    Result<std::string> json = (*db)->export_json();
    Status written = json.ok() ? base::write_file_atomic(o.export_path, *json) : json.status();
    if (!written.ok()) {
      std::cerr << "boo tune: --export " << o.export_path << ": " << written.to_string() << "\n";
      return 1;
    }
    std::cout << "exported " << o.db_path << " to " << o.export_path << "\n";
  }
  return exit_code;
}

}  // namespace boo::tools
