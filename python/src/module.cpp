// boo._C: the Python extension over boo's C++ API (nanobind).
//
// Signatures parse from MIOpenDriver commands; tensors cross by DLPack
// (nanobind ndarrays: PyTorch tensors, NumPy arrays), zero-copy on the GPU.
// Errors become Python exceptions by Status code: INVALID_ARGUMENT ->
// ValueError, UNIMPLEMENTED -> NotImplementedError, anything else (INTERNAL
// included) -> RuntimeError.
#include <cuda.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "base/host_tensor.hpp"
#include "base/version.hpp"
#include "bench/backend.hpp"
#include "boo/registry.hpp"
#include "boo/runtime.hpp"
#include "cuda/driver_api.hpp"
#include "cuda/nvrtc_api.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "ops/op_registry.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace boo::python {
namespace {

// The exception type says whose the error is: ValueError the caller's (a bad
// signature or tensor), NotImplementedError a gap in boo, RuntimeError the
// machine's or boo's own (INTERNAL: a kernel that does not generate or compile).
PyObject* exception_type(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument: return PyExc_ValueError;
    case StatusCode::kUnimplemented: return PyExc_NotImplementedError;
    default: return PyExc_RuntimeError;
  }
}

[[noreturn]] void raise(const Status& status) {
  PyErr_SetString(exception_type(status.code()), status.to_string().c_str());
  throw nb::python_error();
}

template <typename T>
T value_or_raise(Result<T>&& r) {
  if (!r.ok()) raise(r.status());
  return std::move(*r);
}

void ok_or_raise(const Status& st) {
  if (!st.ok()) raise(st);
}

// A parsed signature, shared between Python objects and launch caches. The
// launchable of its last GPU is kept, so a repeated launch looks nothing up.
struct Signature {
  std::shared_ptr<const OpSignature> sig;
  std::vector<TensorSpec> arguments, results;  // sig's, built once (launch checks them every call)
  size_t hash = 0;                             // of its canonical command, for Python's dict and lru_cache keys
  std::shared_ptr<Launchable> launchable;
  int launchable_device = -1;
};

// A tensor from Python: any device, any dtype, any strides (DLPack).
using AnyArray = nb::ndarray<nb::ro>;

Result<DType> dtype_of(const nb::dlpack::dtype& t) {
  if (t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float) && t.bits == 32 && t.lanes == 1) return DType::kF32;
  if (t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float) && t.bits == 16 && t.lanes == 1) return DType::kF16;
  if (t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat) && t.bits == 16 && t.lanes == 1) return DType::kBF16;
  if (t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float) && t.bits == 64 && t.lanes == 1) return DType::kF64;
  return invalid_argument("unsupported tensor dtype (code " + std::to_string(t.code) + ", " + std::to_string(t.bits) +
                          " bits); boo takes float32, float16 and bfloat16");
}

// Checks one array against its spec (shape and dtype; strides are the caller's).
Status check_array(const AnyArray& a, const TensorSpec& spec, const char* what) {
  std::vector<int64_t> shape(a.ndim());
  for (size_t d = 0; d < a.ndim(); ++d) shape[d] = static_cast<int64_t>(a.shape(d));
  BOO_ASSIGN_OR_RETURN(DType dtype, dtype_of(a.dtype()));
  if (shape != spec.shape || dtype != spec.dtype)
    return invalid_argument(std::string(what) + " '" + spec.name + "': expected shape " + format_dims(spec.shape) +
                            " " + std::string(dtype_name(spec.dtype)) + ", got " + format_dims(shape) + " " +
                            std::string(dtype_name(dtype)));
  return ok_status();
}

TensorRef tensor_ref(const AnyArray& a, const TensorSpec& spec) {
  TensorRef ref{const_cast<void*>(a.data()), spec.shape, {}, spec.dtype};
  for (size_t d = 0; d < a.ndim(); ++d) ref.strides.push_back(static_cast<int64_t>(a.stride(d)));
  return ref;
}

// A host copy of a CPU array in its spec's strides (element by element, any source strides).
Result<base::HostTensor> host_copy(const AnyArray& a, const TensorSpec& spec) {
  BOO_RETURN_IF_ERROR(check_array(a, spec, "argument"));
  base::HostTensor t(spec);
  const size_t elem = dtype_size_bytes(spec.dtype);
  const auto* src = static_cast<const std::byte*>(a.data());
  std::vector<int64_t> index(spec.shape.size(), 0);
  const int64_t n = spec.numel();
  for (int64_t linear = 0; linear < n; ++linear) {
    int64_t rest = linear, src_offset = 0;
    for (size_t d = spec.shape.size(); d-- > 0;) {
      index[d] = rest % spec.shape[d];
      rest /= spec.shape[d];
      src_offset += index[d] * static_cast<int64_t>(a.stride(d));
    }
    std::memcpy(t.data() + t.offset_of(index.data()) * static_cast<int64_t>(elem),
                src + src_offset * static_cast<int64_t>(elem), elem);
  }
  return t;
}

// One Runtime per GPU for the process, created on first use.
Runtime& runtime_for(int device) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<Runtime>> runtimes;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = runtimes.find(device);
  if (it == runtimes.end()) {
    RuntimeOptions o = RuntimeOptions::from_environment();
    o.device = device;
    it = runtimes.emplace(device, value_or_raise(Runtime::create(o))).first;
  }
  return *it->second;
}

void check_counts(const Signature& s, size_t args, size_t results) {
  if (args != s.arguments.size() || results != s.results.size())
    raise(invalid_argument(s.sig->func_name() + " takes " + std::to_string(s.arguments.size()) + " arguments and " +
                           std::to_string(s.results.size()) + " results, got " + std::to_string(args) + " and " +
                           std::to_string(results)));
}

// Launches `s` on GPU `device` (its launchable kept in `s`), the GIL released.
void launch_on(Signature& s, const std::vector<TensorRef>& args, const std::vector<TensorRef>& results, int device,
               uintptr_t stream) {
  if (!s.launchable || s.launchable_device != device) {
    s.launchable = value_or_raise(runtime_for(device).get_launchable(*s.sig));
    s.launchable_device = device;
  }
  std::shared_ptr<Launchable> launchable = s.launchable;
  Status st;
  {
    nb::gil_scoped_release release;
    // PyTorch names its default stream 0, the legacy default stream; to a
    // Launchable nullptr means the runtime's own (non-blocking) stream,
    // which is not ordered with PyTorch's work. So 0 is CU_STREAM_LEGACY.
    void* handle = stream ? reinterpret_cast<void*>(stream) : static_cast<void*>(CU_STREAM_LEGACY);
    st = launchable->launch(args, results, handle);
  }
  ok_or_raise(st);
}

nb::list specs_to_list(const std::vector<TensorSpec>& specs) {
  nb::list out;
  for (const TensorSpec& s : specs) out.append(nb::cast(s));
  return out;
}

}  // namespace
}  // namespace boo::python

NB_MODULE(_C, m) {
  using namespace boo;
  using namespace boo::python;
  m.doc() = "boo's C++ runtime: signatures, kernels, the CPU reference";
  // Signatures cached by boo.ops (functools.lru_cache) are still alive while
  // the interpreter tears modules down; that is not a leak worth a warning.
  nb::set_leak_warnings(false);
  m.attr("__version__") = std::string(base::library_version());
  m.attr("git_commit") = std::string(base::git_commit());

  nb::class_<TensorSpec>(m, "TensorSpec", "The logical shape, strides (in elements), dtype and layout of one tensor.")
      .def_ro("name", &TensorSpec::name)
      .def_ro("shape", &TensorSpec::shape)
      .def_ro("strides", &TensorSpec::strides)
      .def_prop_ro("dtype", [](const TensorSpec& s) { return std::string(dtype_name(s.dtype)); })
      .def_ro("layout", &TensorSpec::layout)
      .def_prop_ro("storage_elems", &TensorSpec::storage_elems)
      .def("__repr__", [](const TensorSpec& s) {
        return "TensorSpec(" + s.name + ", shape=" + format_dims(s.shape) + ", strides=" + format_dims(s.strides) +
               ", " + std::string(dtype_name(s.dtype)) + (s.layout.empty() ? "" : ", " + s.layout) + ")";
      });

  nb::class_<Signature>(m, "Signature", "One operation: shapes, layouts, dtype, direction and fusions.")
      .def_static(
          "from_command",
          [](const std::string& command) {
            ParsedCommand parsed = value_or_raise(parse_command(std::string_view(command)));
            std::shared_ptr<const OpSignature> sig(std::move(parsed.signature));
            return Signature{sig, sig->arguments(), sig->results(), std::hash<std::string>{}(sig->command())};
          },
          "command"_a, "Parses a MIOpenDriver command, e.g. 'convbfp16 -n 8 -c 64 ...'.")
      .def_prop_ro("command", [](const Signature& s) { return s.sig->command(); })
      .def_prop_ro("func_name", [](const Signature& s) { return s.sig->func_name(); })
      .def_prop_ro("op_name", [](const Signature& s) { return std::string(s.sig->op_name()); })
      .def_prop_ro("arguments", [](const Signature& s) { return specs_to_list(s.arguments); })
      .def_prop_ro("results", [](const Signature& s) { return specs_to_list(s.results); })
      .def_prop_ro("flop_count", [](const Signature& s) { return s.sig->flop_count(); })
      .def_prop_ro("min_bytes", [](const Signature& s) { return s.sig->min_bytes_moved(); })
      .def("__eq__", [](const Signature& a, const Signature& b) { return a.sig->equals(*b.sig); })
      .def("__hash__", [](const Signature& s) { return s.hash; })
      .def("__repr__", [](const Signature& s) { return "Signature('" + s.sig->command() + "')"; });

  m.def(
      "sample_args",
      [](const Signature& s, uint64_t seed) {
        const ops::OpDefinition* op = ops::find_op(s.sig->op_name());
        std::vector<base::HostTensor> args = value_or_raise(op->make_arguments(*s.sig, ops::InputOptions{seed, {}}));
        nb::list out;
        for (const base::HostTensor& t : args) out.append(nb::bytes(reinterpret_cast<const char*>(t.data()), t.size_bytes()));
        return out;
      },
      "signature"_a, "seed"_a,
      "The driver's seeded inputs, as the storage bytes of each argument in its spec's strides and dtype.");

  m.def(
      "run_reference",
      [](const Signature& s, const std::vector<AnyArray>& arrays) {
        const std::vector<TensorSpec> specs = s.sig->arguments();
        if (arrays.size() != specs.size())
          raise(invalid_argument(s.sig->func_name() + " takes " + std::to_string(specs.size()) + " tensors, got " +
                                 std::to_string(arrays.size())));
        std::vector<base::HostTensor> args;
        for (size_t i = 0; i < arrays.size(); ++i) {
          if (arrays[i].device_type() != nb::device::cpu::value)
            raise(invalid_argument("run_reference takes CPU tensors ('" + specs[i].name + "' is not)"));
          args.push_back(value_or_raise(host_copy(arrays[i], specs[i])));
        }
        std::vector<base::HostTensor> results;
        {
          nb::gil_scoped_release release;
          std::unique_ptr<bench::Backend> cpu = bench::make_cpu_backend(1);
          Result<bench::BackendRun> run = cpu->run(*s.sig, args, RunOptions{1, false});
          if (!run.ok()) {
            nb::gil_scoped_acquire acquire;
            raise(run.status());
          }
          results = std::move(run->results);
        }
        nb::list out;
        for (const base::HostTensor& t : results)
          out.append(nb::bytes(reinterpret_cast<const char*>(t.data()), t.size_bytes()));
        return out;
      },
      "signature"_a, "args"_a,
      "Runs the float64 CPU reference on CPU tensors; returns each result's storage bytes in its spec's strides "
      "and dtype.");

  m.def(
      "launch",
      [](Signature& s, const std::vector<AnyArray>& args, const std::vector<AnyArray>& results, int device,
         uintptr_t stream) {
        check_counts(s, args.size(), results.size());
        std::vector<TensorRef> arg_refs, result_refs;
        auto bind = [&](const std::vector<AnyArray>& arrays, const std::vector<TensorSpec>& specs, const char* what,
                        std::vector<TensorRef>& refs) {
          for (size_t i = 0; i < arrays.size(); ++i) {
            if (arrays[i].device_type() != nb::device::cuda::value || arrays[i].device_id() != device)
              raise(invalid_argument(std::string(what) + " '" + specs[i].name + "' is not on cuda:" +
                                     std::to_string(device)));
            ok_or_raise(check_array(arrays[i], specs[i], what));
            refs.push_back(tensor_ref(arrays[i], specs[i]));
          }
        };
        bind(args, s.arguments, "argument", arg_refs);
        bind(results, s.results, "result", result_refs);
        launch_on(s, arg_refs, result_refs, device, stream);
      },
      "signature"_a, "args"_a, "results"_a, "device"_a, "stream"_a,
      "Launches the signature's kernels on `stream` (a CUstream handle) of GPU `device` over DLPack arrays "
      "(any strides; checked here); compiles or loads the kernels from the cache on first use.");

  m.def(
      "launch_addresses",
      [](Signature& s, const std::vector<uintptr_t>& args, const std::vector<uintptr_t>& results, int device,
         uintptr_t stream) {
        check_counts(s, args.size(), results.size());
        std::vector<TensorRef> arg_refs, result_refs;
        auto bind = [](const std::vector<uintptr_t>& addresses, const std::vector<TensorSpec>& specs,
                       std::vector<TensorRef>& refs) {
          for (size_t i = 0; i < addresses.size(); ++i)
            refs.push_back(TensorRef{reinterpret_cast<void*>(addresses[i]), specs[i].shape, specs[i].strides,
                                     specs[i].dtype});
        };
        bind(args, s.arguments, arg_refs);
        bind(results, s.results, result_refs);
        launch_on(s, arg_refs, result_refs, device, stream);
      },
      "signature"_a, "args"_a, "results"_a, "device"_a, "stream"_a,
      "launch() for tensors the caller has checked against the signature (device, shape, dtype, strides, "
      "alignment), passed by address: boo.Launchable's path for PyTorch tensors, which skips the DLPack "
      "round trip (several microseconds a tensor).");

  m.def(
      "libraries",
      [] {
        // What this process resolved: inside PyTorch, NVRTC may be the copy its wheels preloaded.
        nb::dict out;
        Result<const cuda::DriverApi*> driver = cuda::driver_api();
        Result<std::string> driver_version = cuda_driver_version();
        out["cuda_driver"] = driver.ok() && driver_version.ok()
                                 ? *driver_version + " (" + (*driver)->library_path + ")"
                                 : "unavailable (" + driver.status().message() + ")";
        Result<std::string> nvrtc = jit::nvrtc_version();
        Result<const cuda::NvrtcApi*> nvrtc_api = cuda::nvrtc_api();
        out["nvrtc"] = nvrtc.ok() && nvrtc_api.ok() ? *nvrtc + " (" + (*nvrtc_api)->library_path + ")"
                                                   : "unavailable (" + nvrtc.status().message() + ")";
        return out;
      },
      "The CUDA driver and NVRTC this process uses: version and path.");

  m.def(
      "implementation",
      [](const Signature& s, int device) {
        return std::string(value_or_raise(runtime_for(device).get_launchable(*s.sig))->implementation());
      },
      "signature"_a, "device"_a, "The GPU implementation that runs the signature, e.g. 'gpu:conv:implicit_gemm'.");
}
