// boo-driver: rendering command results.
#include "command_report.hpp"

#include <cstdio>

#include "base/strings.hpp"
#include "bench/statistics.hpp"
#include "driver_options.hpp"

namespace boo::driver {
namespace {

constexpr int kStatsPerBackend = 5;  // min, max, mean, stddev, num_dispatches

std::string format_us(double us) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2fus", us);
  return buf;
}

std::string format_fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

double per_launch_mean_us(const bench::BackendRun& run) {
  double total = 0;
  for (const bench::KernelTiming& k : run.kernels)
    for (double v : k.samples_us) total += v;
  return run.timed_launches ? total / static_cast<double>(run.timed_launches) : 0.0;
}

// The five CSV cells of one backend (BOO's rules for one or several kernels).
std::vector<std::string> csv_stats(const bench::BackendRun& run) {
  if (run.kernels.empty()) return {"untimed", "untimed", "untimed", "untimed", "untimed"};
  if (run.kernels.size() == 1) {
    const bench::SampleStats s = bench::summarize(run.kernels[0].samples_us);
    return {format_fixed(s.min, 3), format_fixed(s.max, 3), format_fixed(s.mean, 3), format_fixed(s.stddev, 3),
            std::to_string(s.count)};
  }
  int64_t dispatches = 0;
  for (const bench::KernelTiming& k : run.kernels) dispatches += static_cast<int64_t>(k.samples_us.size());
  const std::string na = "unsupported stat calculation";
  return {na, na, format_fixed(per_launch_mean_us(run), 3), na, std::to_string(dispatches)};
}

std::string render_run(const OpSignature& sig, const std::string& backend, const bench::BackendRun& run) {
  std::string out;
  const std::vector<TensorSpec> specs = sig.results();
  for (size_t i = 0; i < run.results.size(); ++i) {
    const TensorSpec& t = run.results[i].spec();
    out += ">>>\tresult #" + std::to_string(i) + " (" + specs[i].name + ") shape: " + format_dims(t.shape) +
           "; stride: " + format_dims(t.strides);
    if (!t.layout.empty()) out += "; layout: " + t.layout;
    out += "; dtype: " + std::string(dtype_name(t.dtype)) + "; device: " + run.device + "\n";
  }
  if (run.kernels.empty()) return out + ">>>\tuntimed (-t 0) on " + backend + "\n";
  if (!run.timer.empty()) {
    out += ">>>\ttimed by " + run.timer + " over " + std::to_string(run.timed_launches) + " launches";
    if (run.input_sets > 1) out += ", inputs rotated over " + std::to_string(run.input_sets) + " copies";
    out += "\n";
  }
  int64_t dispatches = 0;
  for (const bench::KernelTiming& k : run.kernels) {
    const bench::SampleStats s = bench::summarize(k.samples_us);
    dispatches += s.count;
    out += ">>>\t" + k.name + "\n>>>\t\tmin=" + format_us(s.min) + " max=" + format_us(s.max) +
           " mean=" + format_us(s.mean) + " stddev=" + format_us(s.stddev) +
           " num_dispatches=" + std::to_string(s.count) + "\n";
  }
  const bool gpu = run.device != "cpu";
  const double mean_us = per_launch_mean_us(run);
  out += ">>>\tPer-launch # " + std::string(gpu ? "GPU kernel" : "CPU") + " dispatches (" + backend + "): " +
         format_fixed(static_cast<double>(dispatches) / static_cast<double>(run.timed_launches), 1) + "\n";
  out += ">>>\tPer-launch " + std::string(gpu ? "GPU" : "CPU") + " mean time (" + backend + "): " +
         format_us(mean_us) + "\n";
  if (mean_us > 0) {
    const double seconds = mean_us * 1e-6;
    out += ">>>\tThroughput (" + backend + "): " + format_fixed(sig.flop_count() / seconds * 1e-9, 2) +
           " GFLOP/s, " + format_fixed(sig.min_bytes_moved() / seconds * 1e-9, 2) + " GB/s\n";
  }
  return out;
}

// Per-launch time of each backend over the baseline's: the vendor's (cudnn or
// cublaslt) when it ran, else the first backend.
std::string render_ratios(const std::vector<const BackendResult*>& ran) {
  size_t base = 0;
  for (size_t b = 0; b < ran.size(); ++b)
    if (canonical_backend(ran[b]->backend) == "cudnn" || canonical_backend(ran[b]->backend) == "cublaslt") base = b;
  if (ran.size() < 2 || ran[base]->run->kernels.empty()) return "";
  const double base_us = per_launch_mean_us(*ran[base]->run);
  std::string out;
  for (size_t b = 0; b < ran.size(); ++b) {
    if (b == base || ran[b]->run->kernels.empty()) continue;
    out += ">>>\tRatio " + ran[b]->backend + "/" + ran[base]->backend + ": " +
           format_fixed(per_launch_mean_us(*ran[b]->run) / base_us, 3) + " (time over time)\n";
  }
  return out;
}

// The verdict that speaks for the command in the CSV: the first judged backend's.
bench::NumericsVerdict csv_verdict(const std::vector<NumericsResult>& numerics) {
  return numerics.empty() ? bench::NumericsVerdict{} : numerics.front().verdict;
}

// Why the command's numerics failed: the reasons of the first failing verdict.
std::string numerics_failure_reasons(const std::vector<NumericsResult>& numerics) {
  for (const NumericsResult& n : numerics)
    if (!n.verdict.pass()) return n.verdict.failure_reasons();
  return "";
}

}  // namespace

const char* outcome_name(Outcome o) {
  return o == Outcome::kOk ? "ok" : o == Outcome::kUnsupported ? "unsupported" : "failed";
}

Outcome outcome_of(const std::string& name) {
  return name == "ok" ? Outcome::kOk : name == "unsupported" ? Outcome::kUnsupported : Outcome::kFailed;
}

bool CommandResult::numerics_pass() const {
  if (!numerics) return true;
  for (const NumericsResult& n : *numerics)
    if (!n.verdict.pass()) return false;
  return true;
}

// Commands and errors echo user input: their control bytes are escaped, so a line cannot drive the terminal.
std::string command_header(const std::string& text) { return "\n>>> " + base::escape_control(text) + "\n\n"; }

std::string failure_line(const CommandResult& r) {
  const char* tag = r.outcome == Outcome::kUnsupported ? "UNSUPPORTED" : "FAILED";
  const std::string where = r.line_number ? " (line " + std::to_string(r.line_number) + ")" : "";
  return ">>> " + std::string(tag) + where + ": " + base::escape_control(r.error) + "\n";
}

std::string render_text(const CommandResult& r, const TextStyle& style) {
  if (r.help) return *r.help + "\n";
  std::string out;
  if (const OpSignature* sig = r.signature()) {
    if (!r.parsed->ignored_flags.empty()) {
      out += ">>>\tnote: accepted without effect in boo:";
      for (const std::string& f : r.parsed->ignored_flags) out += " " + f;
      out += "\n";
    }
    if (r.dry_run) out += ">>>\tcanonical: " + sig->command() + "\n>>>\tfunc_name: " + sig->func_name() + "\n";
    std::vector<const BackendResult*> ran;
    for (const BackendResult& b : r.backends) {
      if (!b.run) {
        out += ">>>\t" + b.backend + ": not run: " + b.not_run + "\n";
        continue;
      }
      if (style.verbose) out += render_run(*sig, b.backend, *b.run);
      ran.push_back(&b);
    }
    if (r.all_backends_ran) out += render_ratios(ran);
  }
  if (!r.error.empty()) return out + failure_line(r);
  if (r.numerics) {
    for (const NumericsResult& n : *r.numerics) {
      if (style.numerics_verbose) {
        out += bench::format_verdict_verbose(n.verdict, r.text + " [" + n.backend + "]", "cuDNN GPU",
                                             style.reference_dtype);
      } else if (!n.verdict.pass()) {
        for (const std::string& note : n.verdict.notes) out += ">>>\tnote: " + note + "\n";
      }
      out += ">>>\t" + n.backend + " " + bench::format_verdict_line(n.verdict) +
             (n.verdict.reference.empty() ? "" : " [reference: " + n.verdict.reference + "]") + "\n";
    }
    out += r.numerics_pass() ? "Numerics: PASS\n" : "Numerics: FAIL (" + numerics_failure_reasons(*r.numerics) + ")\n";
  }
  return out;
}

size_t CsvLayout::numerics_cells() const {
  if (!numerics_) return 0;
  // BOO's eleven columns; boo's last one (numerics_reference) is an extra.
  const size_t all = bench::verdict_csv_header("cudnn").size();
  return extra_ ? all : all - 1;
}

std::vector<std::string> CsvLayout::header() const {
  std::vector<std::string> header{"arguments"};
  for (const std::string& b : backends_)
    for (const char* stat : {" min", " max", " mean", " stddev", " num_dispatches"}) header.push_back(b + stat);
  if (numerics_) {
    const std::vector<std::string> numerics = bench::verdict_csv_header(extra_ ? "cudnn" : "pytorch");
    header.insert(header.end(), numerics.begin(), numerics.begin() + static_cast<std::ptrdiff_t>(numerics_cells()));
  }
  if (extra_) header.insert(header.end(), {"flop_count", "min_bytes", "error"});
  return header;
}

std::optional<std::vector<std::string>> CsvLayout::row(const CommandResult& r) const {
  if (r.help) return std::nullopt;
  const size_t stat_cells = backends_.size() * kStatsPerBackend;
  const size_t numerics_cells = this->numerics_cells();
  std::vector<std::string> row{r.text};
  const OpSignature* sig = r.signature();
  if (!r.error.empty() || !sig) {
    row.insert(row.end(), stat_cells + numerics_cells, "N.A.");
    if (extra_) row.insert(row.end(), {"", "", r.error});
    return row;
  }
  if (r.dry_run) {
    row.insert(row.end(), stat_cells + numerics_cells, "dry-run");
  } else {
    for (const BackendResult& b : r.backends) {
      if (b.run) {
        const std::vector<std::string> cells = csv_stats(*b.run);
        row.insert(row.end(), cells.begin(), cells.end());
      } else {
        row.insert(row.end(), kStatsPerBackend, "N.A.");
      }
    }
    if (numerics_) {
      const std::vector<std::string> cells = bench::verdict_csv_cells(r.numerics ? csv_verdict(*r.numerics) : bench::NumericsVerdict{});
      row.insert(row.end(), cells.begin(), cells.begin() + static_cast<std::ptrdiff_t>(numerics_cells));
    }
  }
  if (!extra_) return row;
  row.insert(row.end(), {base::format_double(sig->flop_count()), base::format_double(sig->min_bytes_moved())});
  row.push_back(r.numerics_pass() ? "" : "numerics: " + numerics_failure_reasons(*r.numerics));
  return row;
}

}  // namespace boo::driver
