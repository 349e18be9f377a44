// boo example: one convolution through the C++ API, from a MIOpenDriver
// command to results on the GPU.
//
//   build/examples/launchable_example ["<command>"]
//
// Parses the command, asks the runtime for a launchable (compiled with NVRTC
// on first use, then loaded from the kernel cache), runs it on seeded inputs
// and prints a few output values next to the CPU reference.
#include <cstdio>
#include <vector>

#include "base/host_tensor.hpp"
#include "boo/registry.hpp"
#include "boo/runtime.hpp"
#include "ops/op_registry.hpp"

int main(int argc, char** argv) {
  const char* command = argc > 1 ? argv[1]
                                 : "convbfp16 -n 2 -c 16 -H 14 -W 14 -k 32 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 "
                                   "--activation relu --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  boo::Result<boo::ParsedCommand> parsed = boo::parse_command(std::string_view(command));
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n", parsed.status().to_string().c_str());
    return 1;
  }
  const boo::OpSignature& sig = *parsed->signature;
  std::printf("signature: %s\nfunc_name: %s\n", sig.command().c_str(), sig.func_name().c_str());

  // Seeded host inputs and the float64 reference.
  const boo::ops::OpDefinition* op = boo::ops::find_op(sig.op_name());
  std::vector<boo::base::HostTensor> args = *op->make_arguments(sig, {});
  std::vector<boo::base::HostTensor> reference = *op->reference(sig, args);

  boo::Result<std::unique_ptr<boo::Runtime>> runtime = boo::Runtime::create(boo::RuntimeOptions::from_environment());
  if (!runtime.ok()) {
    std::printf("no GPU (%s): the CPU reference gives y[0..3] = %.5f %.5f %.5f %.5f\n",
                runtime.status().message().c_str(), reference[0].load(0), reference[0].load(1), reference[0].load(2),
                reference[0].load(3));
    return 0;
  }
  boo::Runtime& rt = **runtime;
  boo::Result<std::shared_ptr<boo::Launchable>> launchable = rt.get_launchable(sig);
  if (!launchable.ok()) {
    std::fprintf(stderr, "%s\n", launchable.status().to_string().c_str());
    return 1;
  }
  std::printf("device: %s, implementation: %s\n", rt.device().name.c_str(),
              std::string((*launchable)->implementation()).c_str());

  // Device copies of the inputs, and room for the results.
  std::vector<boo::DeviceBuffer> buffers;
  std::vector<boo::TensorRef> arg_refs, result_refs;
  for (const boo::base::HostTensor& t : args) {
    boo::DeviceBuffer buf = std::move(*rt.allocate(t.size_bytes()));
    (void)rt.copy_to_device(buf, t.data(), t.size_bytes());
    arg_refs.push_back({buf.data(), t.spec().shape, t.spec().strides, t.spec().dtype});
    buffers.push_back(std::move(buf));
  }
  boo::base::HostTensor y(sig.results()[0]);
  boo::DeviceBuffer y_buf = std::move(*rt.allocate(y.size_bytes()));
  result_refs.push_back({y_buf.data(), y.spec().shape, y.spec().strides, y.spec().dtype});

  if (boo::Status st = (*launchable)->launch(arg_refs, result_refs, rt.stream()); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.to_string().c_str());
    return 1;
  }
  (void)rt.copy_to_host(y.data(), y_buf, y.size_bytes());
  for (int64_t i = 0; i < 4; ++i)
    std::printf("y[%lld] = %.5f (reference %.5f)\n", static_cast<long long>(i), y.load(i), reference[0].load(i));
  const boo::RuntimeStats s = rt.stats();
  std::printf("kernels compiled: %lld, loaded from the cache: %lld\n", static_cast<long long>(s.compiled),
              static_cast<long long>(s.disk_hits));
  return 0;
}
