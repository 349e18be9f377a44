// boo-driver: runs commands on the backends and returns what each produced.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/backend.hpp"
#include "bench/numerics.hpp"
#include "bench/reference.hpp"
#include "bench/trace.hpp"
#include "boo/runtime.hpp"
#include "command_result.hpp"
#include "common/commands_file.hpp"
#include "driver_options.hpp"
#include "ops/op_definition.hpp"

namespace boo::driver {

/// The backends of one process and the steps of a command: parse, generate
/// inputs, run every backend, dump, check numerics. Prints nothing.
class CommandRunner {
 public:
  explicit CommandRunner(DriverOptions opts) : opts_(std::move(opts)) {}

  /// Creates the backends. Without --backend: boo when a GPU is usable, else
  /// cpu (with a note in `notice`, for stdout).
  Status open_backends(std::string& notice);

  /// Runs one command (`index`: its 1-based position in the run), and says where its time went.
  CommandResult run(const tools::CommandLine& cmd, int index);

  const std::vector<std::string>& backend_names() const { return backend_names_; }
  /// ">>>\tdevice memory in use: ..." after a command on a GPU, so a long run
  /// shows whether memory stays flat; "" without a GPU.
  std::string memory_report();
  /// "boo-driver: kernels compiled=2 (...) ..." when the GPU backend ran; "" otherwise.
  std::string runtime_summary() const;
  /// Why the GPU context is unusable (a sticky fault), or OK.
  Status context_health() { return runtime_ ? runtime_->context_health() : ok_status(); }
  /// Closes this process's trace part (before the driver merges it).
  void close_trace() { trace_.reset(); }

 private:
  CommandResult run_steps(const tools::CommandLine& cmd, int index);
  /// NVRTC compile and cache load time of this process so far.
  double compile_seconds() const;
  /// The cudnn backend numerics compare against: the one the run has, else
  /// one made for numerics when a GPU and cuDNN are there; null otherwise
  /// (and with --numerics-vendor none).
  bench::Backend* numerics_vendor();
  /// Seeded inputs (the command's, or a numerics batch's): on the GPU where there is one and the op's
  /// are the default's, else on the CPU (the same bytes either way).
  Result<std::vector<base::HostTensor>> make_arguments(const ops::OpDefinition& op, const OpSignature& sig,
                                                       const ops::InputOptions& options);
  void run_backends(const OpSignature& sig, const RunOptions& run, const std::vector<base::HostTensor>& args,
                    CommandResult& result);
  /// Judges every non-vendor backend; returns where the checks' time went.
  bench::NumericsSeconds check_numerics(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                        CommandResult& result);

  DriverOptions opts_;
  std::vector<std::string> backend_names_;
  std::unique_ptr<Runtime> runtime_;  // declared before the backends that use it
  std::vector<std::unique_ptr<bench::Backend>> backends_;
  std::unique_ptr<bench::Backend> numerics_cudnn_;  // the vendor for --verify-numerics when not a --backend
  std::unique_ptr<bench::Reference> reference_;      // --verify-numerics on the GPU (null: the CPU reference)
  std::optional<bench::TracePart> trace_;  // this process's part of the --trace file
};

}  // namespace boo::driver
