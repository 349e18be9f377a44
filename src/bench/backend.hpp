// boo: a backend runs one signature on given inputs, returns its results and
// the timing of every kernel it launched.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/host_tensor.hpp"
#include "boo/registry.hpp"
#include "boo/signature.hpp"

namespace boo {
class Launchable;
class Runtime;
}

namespace boo::bench {

/// The time samples of one kernel name over the timed launches.
struct KernelTiming {
  std::string name;
  std::vector<double> samples_us;
};

/// One kernel (or memset) execution of a timed launch, as CUPTI saw it.
struct KernelRecord {
  std::string name;
  uint64_t start_ns = 0, end_ns = 0;  ///< GPU timestamps (CUPTI's clock)
  uint32_t device = 0, stream = 0;
  int64_t launch = -1;                ///< index of the timed launch that issued it
};

/// How backends measure: how launches are timed (the driver's --flush-l2 and
/// --timer) and how a vendor's plan is chosen (--vendor-tune).
struct TimingOptions {
  bool flush_l2 = false;     ///< overwrite L2 before each timed launch instead of rotating inputs
  bool prefer_cupti = true;  ///< CUPTI activity records when CUPTI loads, else CUDA events
  /// The cache folder where vendor plans are remembered (bench/vendor_plans.hpp); "" remembers none.
  std::string vendor_plan_dir;
  bool vendor_retune = false;  ///< search the vendor's plans afresh, ignoring (and replacing) remembered ones
};

struct BackendRun {
  /// Host copies of the results, in sig.results() order and dtype.
  std::vector<base::HostTensor> results;
  /// One entry per distinct kernel name, in order of first launch.
  std::vector<KernelTiming> kernels;
  int64_t timed_launches = 0;  ///< invocations of the op that were timed
  std::string timer;           ///< what timed them: "cupti", "cuda events", "wall clock"
  int64_t input_sets = 1;      ///< copies of the inputs the timed launches rotated through
  std::vector<KernelRecord> kernel_records;  ///< every timed kernel (CUPTI only), for traces
  std::string device;          ///< "cpu", "cuda:0", ...
  std::string implementation;  ///< the implementation that ran, e.g. "cpu:conv:reference"
  double vendor_tuning_s = 0;  ///< seconds spent choosing the vendor's plans (cuDNN's engine search)
  double timing_s = 0;         ///< seconds of warm-up and timed launches
};

class Backend {
 public:
  virtual ~Backend() = default;
  /// The --backend name: "cpu", "boo", "cudnn".
  virtual std::string name() const = 0;
  /// Runs `sig` on `args` (host tensors as sig.arguments()); with run.time,
  /// times run.iterations launches (a backend may cap this, and says so
  /// through timed_launches).
  virtual Result<BackendRun> run(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                 const RunOptions& run) = 0;
};

/// boo's GPU kernels, through `runtime` (which must outlive the backend).
std::unique_ptr<Backend> make_boo_backend(Runtime& runtime, const TimingOptions& timing);
/// The same, running `launchable` (made by runtime::load_plan with a config of
/// boo's choosing: boo tune's candidates) for its own signature only.
std::unique_ptr<Backend> make_boo_backend_of(Runtime& runtime, const TimingOptions& timing,
                                             std::shared_ptr<Launchable> launchable);

/// cuDNN 9 through its graph API, the measured baseline: the fastest engine
/// configuration of each signature is chosen by timing every candidate once,
/// and remembered under timing.vendor_plan_dir for the next run.
/// Fails when cuDNN cannot be loaded, and in a build without cuDNN's headers
/// (kFailedPrecondition, saying so).
Result<std::unique_ptr<Backend>> make_cudnn_backend(Runtime& runtime, const TimingOptions& timing);

/// cuBLASLt for GEMMs (any signature whose problem is a GemmProblem: gemm
/// commands, ATen's mm family), the GEMM baseline: the fastest of the
/// algorithms cuBLASLt's heuristics offer, timed once each and remembered
/// under timing.vendor_plan_dir. Fails when cuBLASLt cannot be loaded, and in
/// a build without its header (kFailedPrecondition, saying so).
Result<std::unique_ptr<Backend>> make_cublaslt_backend(Runtime& runtime, const TimingOptions& timing);

/// The vendor baseline the driver compares against (its `cudnn` backend):
/// GEMMs on cuBLASLt, everything else on cuDNN. Each library is opened when
/// a signature first needs it, so either may be missing: only the commands
/// that need it fail, saying why.
std::unique_ptr<Backend> make_vendor_backend(Runtime& runtime, const TimingOptions& timing);

/// The CPU reference as a backend. The reference is not a benchmark, so at
/// most `max_iterations` launches are timed (wall clock).
std::unique_ptr<Backend> make_cpu_backend(int64_t max_iterations);

}  // namespace boo::bench
