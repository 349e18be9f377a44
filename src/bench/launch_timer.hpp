// boo: timing the launches of an op, kernel by kernel.
//
// With CUPTI, every kernel's (and memset's) GPU start and end come from
// activity records, and the kernels of launch i are those whose correlation
// id CUPTI maps to the external id pushed around launch i: an op that
// launches several kernels (split-K + reduce, cuDNN's multi-kernel plans) is
// attributed exactly, per kernel name and per launch. Without CUPTI, CUDA
// events around each launch give per-launch times only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/backend.hpp"
#include "boo/registry.hpp"
#include "boo/runtime.hpp"

namespace boo::bench {

struct TimedLaunches {
  std::vector<KernelTiming> kernels;  ///< per kernel name, one sample per execution (µs); CUPTI only
  std::vector<double> per_launch_us;  ///< GPU time of each launch: its kernels' sum (CUPTI) or the event interval
  std::vector<KernelRecord> records;  ///< CUPTI only
  std::string source;                 ///< "cupti" or "cuda events"
};

class LaunchTimer {
 public:
  virtual ~LaunchTimer() = default;
  /// Times launch(i) for i in [0, iterations) on the runtime's stream;
  /// before_each (optional: an L2 flush) runs before each launch, untimed.
  virtual Result<TimedLaunches> time(Runtime& rt, const std::function<Status(int64_t)>& launch, int64_t iterations,
                                     const std::function<Status()>& before_each) = 0;
};

/// The process's CUPTI timer, or why there is none (CUPTI missing, or
/// another profiler holds its activity API).
Result<LaunchTimer*> cupti_timer();
/// The process's CUDA-event timer.
LaunchTimer& event_timer();

/// How many copies of the inputs the timed launches rotate through, so that
/// consecutive launches read memory the previous one did not leave in L2:
/// enough copies to span twice the L2 (at most 8, and within `memory_budget`
/// bytes); 1 when L2 is flushed instead or when the inputs alone exceed L2.
int64_t input_rotation_count(size_t input_bytes, int64_t l2_bytes, bool flush_l2, size_t memory_budget);

/// input_rotation_count for these inputs on this runtime's GPU, within 1 GiB.
int64_t timed_input_sets(const Runtime& rt, const TimingOptions& options, const std::vector<base::HostTensor>& args);

/// Device addresses of a vendor backend's tensors, by tensor name.
using TensorAddresses = std::map<std::string, void*>;

/// A vendor backend's device tensors: `sets` has one map per input copy, the
/// arguments copied once per set, the results allocated once and shared by
/// every set, filled with 0xff bytes (NaN where nothing is written).
struct BackendTensors {
  std::vector<TensorAddresses> sets;
  std::vector<DeviceBuffer> arguments;  ///< set by set, in sig.arguments() order
  std::vector<DeviceBuffer> results;    ///< in sig.results() order
};

/// `args` (sig.arguments()'s host tensors) on the device, `input_sets` times, and the results.
Result<BackendTensors> upload_backend_tensors(Runtime& rt, const OpSignature& sig,
                                              const std::vector<base::HostTensor>& args, int64_t input_sets);

/// Appends the results in `tensors`, copied to the host, to out.results.
Status download_backend_results(Runtime& rt, const OpSignature& sig, const BackendTensors& tensors, BackendRun& out);

/// Launch counts sized by a launch's duration (RunOptions::min_time_s).
struct LaunchCounts {
  int64_t warmup = 1;  ///< untimed launches, every input copy at least once
  int64_t timed = 1;
};

/// The most launches --min-time times (or warms up with): more samples add
/// no precision, only records to hold.
constexpr int64_t kMostSizedLaunches = 10000;
/// The fewest it times: enough for a spread.
constexpr int64_t kFewestSizedLaunches = 3;

/// Launches of `launch_us` each for about a quarter of `min_time_s` of
/// warm-up (at least `input_sets`) and about `min_time_s` timed, within
/// [kFewestSizedLaunches, kMostSizedLaunches].
LaunchCounts launch_counts_for_min_time(double launch_us, double min_time_s, int64_t input_sets);

/// Times the launches of an op for a backend: launch(i) must read input copy
/// i % out.input_sets. Warms up first (every input copy once, or with
/// run.min_time_s by duration: a first round timed with CUDA events sizes
/// both the warm-up and the timed launches; else run.iterations are timed),
/// then flushes L2 before each launch when asked, and fills out.kernels (per
/// kernel name with CUPTI, else one entry named `label` with each launch's
/// event time), out.timed_launches, out.timer, out.kernel_records and
/// out.timing_s (the seconds all of this took).
Status time_backend_launches(Runtime& rt, const TimingOptions& options, const RunOptions& run,
                             const std::function<Status(int64_t)>& launch, const std::string& label, BackendRun& out);

}  // namespace boo::bench
