// boo-driver: runs MIOpenDriver-style commands on boo's backends and prints
// BOO-style results, timings, CSV rows and .npy dumps.
//
// Each command is run by a CommandRunner into a CommandResult, which is then
// rendered to stdout and to the CSV (command_report.hpp). Commands run in
// executor child processes by default (executor.hpp): the parent prints each
// child's text and writes the rows, in input order.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "base/host_memory.hpp"
#include "base/strings.hpp"
#include "bench/csv_writer.hpp"
#include "bench/executor_protocol.hpp"
#include "bench/trace.hpp"
#include "boo/runtime.hpp"
#include "boo/version.hpp"
#include "command_report.hpp"
#include "command_runner.hpp"
#include "common/commands_file.hpp"
#include "cuda/driver_api.hpp"
#include "driver_options.hpp"
#include "executor.hpp"
#include "ops/command_parse.hpp"
#include "output_files.hpp"
#include "precompile.hpp"
#include "progress.hpp"

namespace boo::driver {
namespace {

using tools::CommandLine;
using tools::load_commands;

TextStyle text_style(const DriverOptions& opts) {
  return TextStyle{opts.verbose.value_or(opts.csv_path.empty()), opts.numerics.verbose,
                   opts.numerics.reference_float32 ? "float32" : "float64"};
}

// The CSV file of a run, when --csv asks for one.
class CsvOutput {
 public:
  CsvOutput(const DriverOptions& opts, const std::vector<std::string>& backends)
      : path_(opts.csv_path), layout_(backends, opts.verify_numerics, opts.csv_extra) {}

  Status open() {
    if (path_.empty()) return ok_status();
    BOO_ASSIGN_OR_RETURN(bench::CsvWriter w, bench::CsvWriter::open(path_, layout_.header()));
    writer_.emplace(std::move(w));
    return ok_status();
  }
  const CsvLayout& layout() const { return layout_; }
  void write(const std::optional<std::vector<std::string>>& row) {
    if (!writer_ || !row) return;
    if (Status st = writer_->write_row(*row); !st.ok()) std::cerr << "boo-driver: " << st.to_string() << "\n";
  }

 private:
  std::string path_;
  CsvLayout layout_;
  std::optional<bench::CsvWriter> writer_;
};

// The phases of a command as the executor protocol carries them, and back.
std::map<std::string, double> phase_map(const PhaseSeconds& p) {
  return {{"compile", p.compile},   {"vendor_tuning", p.vendor_tuning}, {"timing", p.timing},
          {"inputs", p.inputs},     {"numerics", p.numerics},           {"numerics_runs", p.numerics_runs},
          {"reference", p.reference}, {"checks", p.checks},             {"total", p.total}};
}

PhaseSeconds phases_of(const std::map<std::string, double>& m) {
  auto get = [&](const char* name) {
    auto it = m.find(name);
    return it == m.end() ? 0.0 : it->second;
  };
  PhaseSeconds p;
  p.compile = get("compile");
  p.vendor_tuning = get("vendor_tuning");
  p.timing = get("timing");
  p.inputs = get("inputs");
  p.numerics = get("numerics");
  p.numerics_runs = get("numerics_runs");
  p.reference = get("reference");
  p.checks = get("checks");
  p.total = get("total");
  return p;
}

// How the progress line names a command.
std::string progress_label(const CommandLine& cmd) {
  const std::string text = base::escape_control(cmd.text);
  return cmd.line_number ? "line " + std::to_string(cmd.line_number) + ": " + text : text;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void print_warnings(const CommandResult& result) {
  for (const std::string& w : result.warnings) std::cerr << "boo-driver: " << w << "\n";
}

// Runs one command in this process: the header first (flushed, so a command
// that takes the process down is still named), then its text and warnings.
// The progress line (if any) stays below the header while the command runs.
CommandResult run_and_print(CommandRunner& runner, const CommandLine& cmd, int index, const TextStyle& style,
                            Progress& progress) {
  progress.clear();
  std::cout << command_header(cmd.text) << std::flush;
  progress.draw();
  CommandResult result = runner.run(cmd, index);
  progress.clear();
  print_warnings(result);
  std::cout << render_text(result, style);
  return result;
}

// An executor child: commands arrive on stdin, output and DONE records go to stdout.
int run_executor_child(DriverOptions opts) {
  base::keep_freed_host_memory();  // each command's tensors reuse the previous command's pages
  const TextStyle style = text_style(opts);
  const bool numerics = opts.verify_numerics;
  const bool csv_extra = opts.csv_extra;
  CommandRunner runner(std::move(opts));
  std::string notice;
  if (Status st = runner.open_backends(notice); !st.ok()) {
    std::cerr << "boo-driver executor: " << st.to_string() << "\n";
    return 2;
  }
  std::cout << notice;
  const CsvLayout layout(runner.backend_names(), numerics, csv_extra);
  Progress no_progress(0, false);  // the driver draws the line
  std::string line;
  while (std::getline(std::cin, line)) {
    std::optional<std::pair<int, std::vector<std::string>>> run = bench::decode_run(line);
    if (!run || run->second.size() < 2) continue;
    // Fields: the command as written, its line number, then its words.
    CommandLine cmd;
    cmd.text = run->second[0];
    cmd.line_number = std::atoi(run->second[1].c_str());
    cmd.words.assign(run->second.begin() + 2, run->second.end());
    const CommandResult result = run_and_print(runner, cmd, run->first, style, no_progress);
    // After a sticky fault every later CUDA call fails: the DONE record says
    // this executor leaves, and the parent starts a fresh one.
    Status health = result.outcome == Outcome::kFailed ? runner.context_health() : ok_status();
    if (health.ok() && style.verbose) std::cout << runner.memory_report();
    std::cout << std::flush;
    std::cout << bench::encode_done(bench::DoneRecord{run->first, outcome_name(result.outcome),
                                                      layout.row(result).value_or(std::vector<std::string>{}),
                                                      !health.ok(), phase_map(result.seconds)})
              << std::flush;
    if (!health.ok()) {
      std::cerr << "boo-driver executor: leaving after a sticky CUDA error: " << health.to_string() << "\n";
      return 3;
    }
  }
  std::cout << runner.runtime_summary() << std::flush;
  return 0;
}

// The part file of executor `w` (or of the driver itself) for --trace PATH. The
// driver's process id makes it a name no earlier run used: no existing file is
// appended to or removed.
std::string trace_part_path(const std::string& trace_path, size_t w) {
  return trace_path + ".part" + std::to_string(w) + "." + std::to_string(::getpid());
}

// Merges the parts into --trace PATH and removes them; prints what it wrote.
bool finish_trace(const std::string& trace_path, size_t parts) {
  if (trace_path.empty()) return true;
  std::vector<std::string> paths;
  for (size_t w = 0; w < parts; ++w) paths.push_back(trace_part_path(trace_path, w));
  Result<bench::TraceSummary> summary = bench::write_trace(paths, trace_path);
  for (const std::string& p : paths) std::remove(p.c_str());
  if (!summary.ok()) {
    std::cerr << "boo-driver: --trace: " << summary.status().to_string() << "\n";
    return false;
  }
  std::cout << "boo-driver: trace " << trace_path << ": " << summary->kernels << " kernels in "
            << summary->commands << " command spans";
  if (summary->kernels == 0) std::cout << " (no kernel records: timing was off, or CUPTI was unavailable)";
  std::cout << "\n";
  return true;
}

// The GPUs the executors run on: the one asked for, or every one for --gpu-id -1.
std::vector<int> executor_gpus(int gpu_id) {
  if (gpu_id >= 0) return {gpu_id};
  int count = 0;
  if (Result<const cuda::DriverApi*> api = cuda::driver_api(); api.ok()) (*api)->cuDeviceGetCount(&count);
  std::vector<int> gpus;
  for (int d = 0; d < std::max(count, 1); ++d) gpus.push_back(d);
  return gpus;
}

// The closing count and time summary, and the exit status: 1 when a command failed (or was
// unsupported with --fail-on-unsupported) or the trace could not be written.
int finish_run(const std::map<Outcome, int>& counts_in, size_t commands, bool fail_on_unsupported, bool traced,
               double wall_s, const PhaseSeconds& summed, const std::optional<PrecompileSummary>& precompiled) {
  std::map<Outcome, int> counts = counts_in;
  std::cout << "boo-driver: " << commands << " command(s): " << counts[Outcome::kOk] << " ok, "
            << counts[Outcome::kFailed] << " failed, " << counts[Outcome::kUnsupported] << " unsupported\n";
  std::cout << format_time_summary(wall_s, summed, precompiled ? format_precompile(*precompiled) : "");
  const bool failed = counts[Outcome::kFailed] > 0 || (fail_on_unsupported && counts[Outcome::kUnsupported] > 0) ||
                      !traced;
  return failed ? 1 : 0;
}

// The parent of executors: dispatches commands to one executor per GPU and
// prints results in input order.
int run_isolated(DriverOptions opts, const std::vector<CommandLine>& commands) {
  const auto start = std::chrono::steady_clock::now();
  // The backends, resolved here so that every executor and the CSV agree.
  std::vector<std::string> backends = opts.backends;
  if (backends.empty()) {
    RuntimeOptions ro;
    ro.device = std::max(opts.gpu_id, 0);
    ro.cache_enabled = false;
    Result<std::unique_ptr<Runtime>> probe = Runtime::create(ro);
    if (!probe.ok()) std::cout << ">>> no GPU backend (" << probe.status().message() << "); running on the CPU reference\n";
    backends = {probe.ok() ? default_gpu_backend(opts) : "cpu"};
  }
  const std::vector<int> gpus = executor_gpus(opts.gpu_id);
  // Before the executors start: each then loads what it needs from the cache.
  const std::optional<PrecompileSummary> precompiled = precompile(opts, commands, backends);
  CsvOutput csv(opts, backends);
  if (Status st = csv.open(); !st.ok()) {
    std::cerr << "boo-driver: " << st.to_string() << "\n";
    return 2;
  }
  Progress progress(commands.size(), Progress::wanted(opts.quiet));
  std::vector<std::optional<ExecutorResult>> results(commands.size());
  std::vector<std::string> summaries(gpus.size());
  std::mutex mutex;
  std::condition_variable ready;
  size_t next = 0;
  std::vector<std::thread> workers;
  for (size_t w = 0; w < gpus.size(); ++w) {
    workers.emplace_back([&, w] {
      const std::string part = opts.trace_path.empty() ? "" : trace_part_path(opts.trace_path, w);
      Executor executor(executor_child_arguments(opts, backends, gpus[w], part), opts.command_timeout_s);
      while (true) {
        size_t i;
        {
          std::lock_guard<std::mutex> lock(mutex);
          if (next >= commands.size()) break;
          i = next++;
        }
        const CommandLine& cmd = commands[i];
        progress.started(i, progress_label(cmd));
        std::vector<std::string> fields{cmd.text, std::to_string(cmd.line_number)};
        fields.insert(fields.end(), cmd.words.begin(), cmd.words.end());
        ExecutorResult r;
        if (!cmd.split_status.ok()) {
          // Nothing to run: the line could not even be split into words.
          r.output = command_header(cmd.text);
          r.failure = cmd.split_status.to_string();
        } else {
          r = executor.run(static_cast<int>(i) + 1, fields);
        }
        progress.finished(i, r.done ? outcome_of(r.done->outcome) : Outcome::kFailed);
        std::lock_guard<std::mutex> lock(mutex);
        results[i] = std::move(r);
        ready.notify_all();
      }
      std::string summary = executor.finish();
      std::lock_guard<std::mutex> lock(mutex);
      summaries[w] = std::move(summary);
    });
  }
  std::map<Outcome, int> counts;
  PhaseSeconds summed;
  for (size_t i = 0; i < commands.size(); ++i) {
    std::unique_lock<std::mutex> lock(mutex);
    // Woken by every finished command, and each second for the time left.
    while (!results[i]) {
      progress.draw();
      ready.wait_for(lock, std::chrono::seconds(1));
    }
    ExecutorResult r = std::move(*results[i]);
    lock.unlock();
    progress.clear();
    std::cout << r.output;
    if (r.done) {
      ++counts[outcome_of(r.done->outcome)];
      summed += phases_of(r.done->seconds);
      if (!r.done->row.empty()) csv.write(r.done->row);
    } else {
      // The executor died or timed out: the command failed with what it had printed.
      CommandResult died;
      died.text = commands[i].text;
      died.line_number = commands[i].line_number;
      died.outcome = Outcome::kFailed;
      died.error = r.failure;
      std::cout << failure_line(died);
      ++counts[Outcome::kFailed];
      csv.write(csv.layout().row(died));
    }
    std::cout << std::flush;
  }
  progress.clear();
  for (std::thread& t : workers) t.join();
  std::cout << "\n";
  for (const std::string& s : summaries) std::cout << s;
  const bool traced = finish_trace(opts.trace_path, gpus.size());
  return finish_run(counts, commands.size(), opts.fail_on_unsupported, traced, seconds_since(start), summed,
                    precompiled);
}

// Commands in this process, one after another.
int run_in_process(DriverOptions opts, const std::vector<CommandLine>& commands) {
  const auto start = std::chrono::steady_clock::now();
  if (opts.gpu_id < 0) {
    std::cerr << "boo-driver: --gpu-id -1 needs executor isolation (drop --no-isolation)\n";
    return 2;
  }
  const bool fail_on_unsupported = opts.fail_on_unsupported;
  const std::string trace_path = opts.trace_path;
  if (!trace_path.empty()) opts.trace_part = trace_part_path(trace_path, 0);
  const TextStyle style = text_style(opts);
  Progress progress(commands.size(), Progress::wanted(opts.quiet));
  const DriverOptions csv_options = opts;
  base::keep_freed_host_memory();  // each command's tensors reuse the previous command's pages
  CommandRunner runner(std::move(opts));
  std::string notice;
  if (Status st = runner.open_backends(notice); !st.ok()) {
    std::cerr << "boo-driver: " << st.to_string() << "\n";
    return 2;
  }
  std::cout << notice;
  const std::optional<PrecompileSummary> precompiled = precompile(csv_options, commands, runner.backend_names());
  CsvOutput csv(csv_options, runner.backend_names());
  if (Status st = csv.open(); !st.ok()) {
    std::cerr << "boo-driver: " << st.to_string() << "\n";
    return 2;
  }
  std::map<Outcome, int> counts;
  PhaseSeconds summed;
  for (size_t i = 0; i < commands.size(); ++i) {
    progress.started(i, progress_label(commands[i]));
    const CommandResult result = run_and_print(runner, commands[i], static_cast<int>(i) + 1, style, progress);
    csv.write(csv.layout().row(result));
    ++counts[result.outcome];
    summed += result.seconds;
    if (style.verbose) std::cout << runner.memory_report();
    std::cout << std::flush;
    progress.finished(i, result.outcome);
  }
  progress.clear();
  std::cout << "\n" << runner.runtime_summary();
  runner.close_trace();
  const bool traced = finish_trace(trace_path, 1);
  return finish_run(counts, commands.size(), fail_on_unsupported, traced, seconds_since(start), summed, precompiled);
}

// conv's -F default differs between MIOpenDriver (0: forward and both
// backward passes) and BOO's driver (1: forward only), so one line can time
// different work. boo keeps MIOpenDriver's (the language its lines are in) and
// says so once; --boo-defaults gives a conv line without -F BOO's -F 1.
void apply_forward_default(const DriverOptions& opts, std::vector<CommandLine>& commands) {
  bool noted = false;
  for (CommandLine& cmd : commands) {
    const size_t op = ops::run_flag_prefix_length(cmd.words);
    if (op >= cmd.words.size() || !base::starts_with(cmd.words[op], "conv")) continue;
    const bool given = std::any_of(cmd.words.begin(), cmd.words.end(), [](const std::string& w) {
      // '<op> --help' runs nothing, so its default does not matter.
      return w == "-F" || w == "--forw" || base::starts_with(w, "-F=") || base::starts_with(w, "--forw=") ||
             w == "--help" || w == "-h";
    });
    if (given) continue;
    if (opts.boo_defaults) {
      cmd.words.insert(cmd.words.end(), {"-F", "1"});
    } else if (!noted) {
      noted = true;
      std::cerr << "boo-driver: note: conv lines without -F run MIOpenDriver's default -F 0 (forward and both "
                   "backward passes); BOO's driver defaults to -F 1 (forward only): --boo-defaults gives that\n";
    }
  }
}

int run_driver(const std::vector<std::string>& argv) {
  Result<DriverOptions> opts = parse_driver_options(argv);
  if (!opts.ok()) {
    std::cerr << "boo-driver: " << opts.status().to_string() << "\n";
    return 2;
  }
  if (opts->executor_child) return run_executor_child(std::move(*opts));
  if (opts->version) {
    std::cout << "boo-driver " << library_version() << " (commit " << git_commit() << ")\n";
    return 0;
  }
  if (opts->help || (opts->command.empty() && opts->commands_file.empty())) {
    std::cout << driver_usage();
    return opts->help ? 0 : 2;
  }
  // Without a commands file the command starts with its op or with run flags
  // (--iter 1 conv); any other leading flag is a driver option boo-driver lacks.
  if (opts->commands_file.empty() && base::starts_with(opts->command.front(), "-") &&
      ops::run_flag_prefix_length(opts->command) == 0) {
    std::cerr << "boo-driver: unknown driver option '" << base::echo_word(opts->command.front())
              << "' (boo-driver --help lists them; a command starts with its op, e.g. conv)\n";
    return 2;
  }
  std::string notes;
  if (Status st = check_outputs(*opts, notes); !st.ok()) {
    std::cerr << "boo-driver: " << st.to_string() << "\n";
    return 2;
  }
  std::cout << notes;
  std::vector<CommandLine> commands;
  if (!opts->commands_file.empty()) {
    Result<std::vector<CommandLine>> loaded = load_commands(opts->commands_file, opts->command);
    if (!loaded.ok()) {
      std::cerr << "boo-driver: " << loaded.status().to_string() << "\n";
      return 2;
    }
    commands = std::move(*loaded);
  } else {
    commands.push_back(CommandLine{0, base::shell_join(opts->command), opts->command, {}});
  }
  apply_forward_default(*opts, commands);
  // Parsing alone needs no isolation; neither does --help of an op.
  const bool help = !opts->command.empty() && (opts->command.back() == "--help" || opts->command.back() == "-h");
  if (opts->isolation && !opts->dry_run && !help) return run_isolated(std::move(*opts), commands);
  return run_in_process(std::move(*opts), commands);
}

}  // namespace
}  // namespace boo::driver

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  return boo::driver::run_driver(args);
}
