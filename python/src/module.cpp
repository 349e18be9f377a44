// boo._C: the Python extension over boo's C++ API (nanobind).
//
// Signatures are built from typed fields (Signature.conv, .layer_norm,
// .rms_norm, .batch_norm, .group_norm) or parsed from MIOpenDriver commands; tensors cross by DLPack
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
#include <deque>
#include <map>
#include <memory>
#include <mutex>

#include "base/host_tensor.hpp"
#include "bench/backend.hpp"
#include "cache/artifact_cache.hpp"
#include "boo/registry.hpp"
#include "boo/runtime.hpp"
#include "boo/version.hpp"
#include "cuda/driver_api.hpp"
#include "cuda/nvrtc_api.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "ops/op_registry.hpp"
#include "ops/signature_fields.hpp"
#include "runtime/preload.hpp"
#include "torch_bridge.h"

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

Signature wrap(std::unique_ptr<OpSignature> parsed) {
  std::shared_ptr<const OpSignature> sig(std::move(parsed));
  return Signature{sig, sig->arguments(), sig->results(), std::hash<std::string>{}(sig->command())};
}

// A dtype argument: boo.DType, or a torch.dtype or its name ("bfloat16", "torch.bfloat16").
DType dtype_argument(nb::handle value) {
  if (nb::isinstance<DType>(value)) return nb::cast<DType>(value);
  std::string name = nb::str(value).c_str();
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16})
    if (name == dtype_name(d)) return d;
  raise(invalid_argument("dtype " + std::string(nb::repr(value).c_str()) +
                         ": boo takes float32, float16 and bfloat16 (a boo.DType, a torch.dtype or its name)"));
}

// A list of ints from an int or a sequence of ints (stride=2 or stride=(2, 1)).
std::vector<int64_t> ints_argument(nb::handle value, const char* name) {
  if (PyLong_Check(value.ptr())) return {nb::cast<int64_t>(value)};
  std::vector<int64_t> out;
  if (!PySequence_Check(value.ptr()) || PyUnicode_Check(value.ptr()))
    raise(invalid_argument(std::string(name) + "=" + nb::repr(value).c_str() +
                           ": expected an int or a sequence of ints"));
  for (nb::handle item : nb::borrow<nb::sequence>(value)) {
    if (!PyLong_Check(item.ptr()))
      raise(invalid_argument(std::string(name) + "=" + nb::repr(value).c_str() + ": expected ints, got " +
                             nb::repr(item).c_str()));
    out.push_back(nb::cast<int64_t>(item));
  }
  return out;
}

// The fused activation: a boo.Activation, or a boo.ActivationKind without parameters.
Activation activation_argument(nb::handle value) {
  if (nb::isinstance<Activation>(value)) return nb::cast<Activation>(value);
  if (nb::isinstance<Activation::Kind>(value)) {
    Activation a;
    a.kind = nb::cast<Activation::Kind>(value);
    if (a.kind == Activation::Kind::kClamp)
      raise(invalid_argument("activation=ActivationKind.CLAMP needs its bounds: boo.Activation(ActivationKind.CLAMP, "
                             "lo=..., hi=...)"));
    return a;
  }
  raise(invalid_argument("activation=" + std::string(nb::repr(value).c_str()) +
                         ": expected a boo.ActivationKind or a boo.Activation"));
}

// A bit set of direction flags (a boo.*Direction value, or their | combination).
template <typename Flags>
uint8_t directions_argument(nb::handle value, const char* name) {
  if (!nb::isinstance<Flags>(value))
    raise(invalid_argument(std::string("direction=") + nb::repr(value).c_str() + ": expected a boo." + name +
                           " (flags combine with |)"));
  return static_cast<uint8_t>(nb::cast<int>(value.attr("value")));
}

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

// The process's Runtimes, one per GPU, created on first use with the kernel
// cache settings of the moment. Changing the settings (boo.set_cache_dir,
// boo.toggle_cache_on) retires the current Runtimes: kernels they loaded keep
// running (their launchables are held by signatures), and kernels compiled
// from then on go through Runtimes with the new settings.
struct Runtimes {
  std::mutex mutex;
  cache::CacheConfig cache = cache::CacheConfig::from_environment();
  std::map<int, std::unique_ptr<Runtime>> current;
  std::vector<std::unique_ptr<Runtime>> retired;  // kept: their launchables may still be in use

  static Runtimes& get() {
    static Runtimes runtimes;
    return runtimes;
  }
};

Result<Runtime*> find_runtime(int device) {
  Runtimes& r = Runtimes::get();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.current.find(device);
  if (it == r.current.end()) {
    RuntimeOptions o = RuntimeOptions::from_environment();
    o.device = device;
    o.cache_dir = r.cache.dir;
    o.cache_enabled = r.cache.enabled;
    BOO_ASSIGN_OR_RETURN(std::unique_ptr<Runtime> made, Runtime::create(o));
    it = r.current.emplace(device, std::move(made)).first;
  }
  return it->second.get();
}

Runtime& runtime_for(int device) { return *value_or_raise(find_runtime(device)); }

// PyTorch names its default stream 0, the legacy default stream; to a Launchable nullptr means the
// runtime's own (non-blocking) stream, which is not ordered with PyTorch's work. So 0 is CU_STREAM_LEGACY.
void* launch_stream(uintptr_t stream) {
  return stream ? reinterpret_cast<void*>(stream) : static_cast<void*>(CU_STREAM_LEGACY);
}

// Whether `stream` is being captured into a CUDA graph (the legacy default stream never is: PyTorch
// refuses to capture it).
Result<bool> stream_capturing(uintptr_t stream) {
  if (!stream) return false;
  BOO_ASSIGN_OR_RETURN(const cuda::DriverApi* api, cuda::driver_api());
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  BOO_CU_RETURN_IF_ERROR(*api, cuStreamIsCapturing(reinterpret_cast<CUstream>(stream), &status));
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

Status not_loaded_for_capture(const OpSignature& sig) {
  return Status(StatusCode::kFailedPrecondition,
                "the kernels of '" + sig.command() + "' are not compiled yet, and the stream is being captured into "
                "a CUDA graph, where they cannot be loaded: run the op once before the capture (a warm-up)");
}

// The launchable of `sig` on GPU `device` for a launch on `stream`: made now (planned, compiled or
// loaded), but while the stream is captured into a CUDA graph only one loaded already: loading a module
// is not capturable, so the kernels must be ready before the capture (a first call, or a warm-up).
Result<std::shared_ptr<Launchable>> launchable_for_stream(const OpSignature& sig, int device, uintptr_t stream) {
  BOO_ASSIGN_OR_RETURN(Runtime * rt, find_runtime(device));
  BOO_ASSIGN_OR_RETURN(bool capturing, stream_capturing(stream));
  if (!capturing) return rt->get_launchable(sig);
  if (std::shared_ptr<Launchable> loaded = rt->find_launchable(sig)) return loaded;
  return not_loaded_for_capture(sig);
}

void set_cache_config(const cache::CacheConfig& config) {
  Runtimes& r = Runtimes::get();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.cache = config;
  for (auto& [device, runtime] : r.current) r.retired.push_back(std::move(runtime));
  r.current.clear();
}

cache::CacheConfig cache_config() {
  Runtimes& r = Runtimes::get();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.cache;
}

void check_counts(const Signature& s, size_t args, size_t results) {
  if (args != s.arguments.size() || results != s.results.size())
    raise(invalid_argument(s.sig->func_name() + " takes " + std::to_string(s.arguments.size()) + " arguments and " +
                           std::to_string(s.results.size()) + " results, got " + std::to_string(args) + " and " +
                           std::to_string(results)));
}

// The launchable of `s` on GPU `device` for a launch on `stream`, kept in `s`.
std::shared_ptr<Launchable> signature_launchable(Signature& s, int device, uintptr_t stream) {
  if (!s.launchable || s.launchable_device != device) {
    s.launchable = value_or_raise(launchable_for_stream(*s.sig, device, stream));
    s.launchable_device = device;
  }
  return s.launchable;
}

// Launches `s` on GPU `device` (its launchable kept in `s`), the GIL released. `workspace`: the caller's
// (PyTorch's caching allocator's), or 0 for the launchable's own.
void launch_on(Signature& s, const std::vector<TensorRef>& args, const std::vector<TensorRef>& results, int device,
               uintptr_t stream, uintptr_t workspace) {
  std::shared_ptr<Launchable> launchable = signature_launchable(s, device, stream);
  Status st;
  {
    nb::gil_scoped_release release;
    st = workspace || launchable->workspace_bytes() == 0
             ? launchable->launch(args, results, launch_stream(stream), reinterpret_cast<void*>(workspace))
             : launchable->launch(args, results, launch_stream(stream));
  }
  ok_or_raise(st);
}


// ---------------------------------------------------------------------------------------------------
// The C interface of boo's PyTorch library (torch_bridge.h). No Python here: the library calls it from
// PyTorch's kernels, the GIL not held.

int32_t bridge_fail(const Status& st, boo_bridge_status* out) {
  out->code = static_cast<int32_t>(st.code());
  std::snprintf(out->message, sizeof out->message, "%s", st.to_string().c_str());
  return out->code;
}

// A launchable handed to the library: kept for the process (the library keeps its address).
struct BridgeLaunchable {
  std::shared_ptr<Launchable> launchable;
  std::vector<boo_bridge_tensor> arguments, results;
  std::vector<TensorRef> argument_refs, result_refs;  // the specs, addresses filled per launch
  std::string name;
};

Result<std::vector<boo_bridge_tensor>> bridge_tensors(const std::vector<TensorSpec>& specs) {
  std::vector<boo_bridge_tensor> out;
  for (const TensorSpec& s : specs) {
    boo_bridge_tensor t{};
    if (s.shape.size() > BOO_TORCH_MAX_RANK || s.name.size() >= sizeof t.name)
      return internal_error("tensor '" + s.name + "' does not fit the PyTorch bridge's description");
    std::snprintf(t.name, sizeof t.name, "%s", s.name.c_str());
    t.rank = static_cast<int32_t>(s.shape.size());
    t.dtype = s.dtype == DType::kF32 ? 0 : s.dtype == DType::kF16 ? 1 : s.dtype == DType::kBF16 ? 2 : -1;
    if (t.dtype < 0) return internal_error("tensor '" + s.name + "' has a dtype PyTorch's boo ops do not take");
    for (int32_t d = 0; d < t.rank; ++d) {
      t.shape[d] = s.shape[d];
      t.strides[d] = s.strides[d];
    }
    out.push_back(t);
  }
  return out;
}

Result<DType> bridge_dtype(int32_t dtype) {
  switch (dtype) {
    case 0: return DType::kF32;
    case 1: return DType::kF16;
    case 2: return DType::kBF16;
    default: return invalid_argument("dtype code " + std::to_string(dtype) + ": boo takes float32, float16 and bfloat16");
  }
}

Result<std::unique_ptr<OpSignature>> bridge_conv_signature(const boo_bridge_conv& c) {
  if (c.rank < 3 || c.rank > 5) return invalid_argument("conv: rank " + std::to_string(c.rank) + ", expected 3 to 5");
  ops::ConvFields f;
  BOO_ASSIGN_OR_RETURN(f.dtype, bridge_dtype(c.dtype));
  f.input_shape.assign(c.x_shape, c.x_shape + c.rank);
  f.weight_shape.assign(c.w_shape, c.w_shape + c.rank);
  f.stride.assign(c.stride, c.stride + c.rank - 2);
  f.padding.assign(c.padding, c.padding + c.rank - 2);
  f.dilation.assign(c.dilation, c.dilation + c.rank - 2);
  f.groups = c.groups;
  // The strings are the library's copies of the op's arguments: bounded, terminated.
  f.input_layout = std::string(c.layouts[0], strnlen(c.layouts[0], sizeof c.layouts[0]));
  f.weight_layout = std::string(c.layouts[1], strnlen(c.layouts[1], sizeof c.layouts[1]));
  f.output_layout = std::string(c.layouts[2], strnlen(c.layouts[2], sizeof c.layouts[2]));
  f.directions = c.directions;
  f.bias = c.bias != 0;
  f.fp32_tf32 = c.tf32 != 0;
  BOO_ASSIGN_OR_RETURN(f.activation,
                       Activation::parse(std::string_view(c.activation, strnlen(c.activation, sizeof c.activation))));
  BOO_ASSIGN_OR_RETURN(std::unique_ptr<ConvSignature> sig, ops::conv_signature_from_fields(f));
  return std::unique_ptr<OpSignature>(std::move(sig));
}

int32_t bridge_stream_capturing(int32_t, void* stream, int32_t* capturing, boo_bridge_status* status) {
  Result<bool> r = stream_capturing(reinterpret_cast<uintptr_t>(stream));
  if (!r.ok()) return bridge_fail(r.status(), status);
  *capturing = *r ? 1 : 0;
  return 0;
}

// The launchable of `sig` on GPU `device` handed to the library (see boo_bridge::conv).
int32_t bridge_ready(Result<std::unique_ptr<OpSignature>> sig, int32_t device, int32_t loaded_only,
                     boo_bridge_launchable* out, boo_bridge_status* status) {
  static std::mutex mutex;
  static std::deque<BridgeLaunchable> kept;
  if (!sig.ok()) return bridge_fail(sig.status(), status);
  Result<Runtime*> rt = find_runtime(device);
  if (!rt.ok()) return bridge_fail(rt.status(), status);
  std::shared_ptr<Launchable> launchable;
  if (loaded_only) {
    launchable = (*rt)->find_launchable(**sig);
    if (!launchable)
      return bridge_fail(not_loaded_for_capture(**sig), status);
  } else {
    Result<std::shared_ptr<Launchable>> made = (*rt)->get_launchable(**sig);
    if (!made.ok()) return bridge_fail(made.status(), status);
    launchable = *made;
  }
  BridgeLaunchable b;
  b.launchable = launchable;
  Result<std::vector<boo_bridge_tensor>> arguments = bridge_tensors((*sig)->arguments());
  if (!arguments.ok()) return bridge_fail(arguments.status(), status);
  Result<std::vector<boo_bridge_tensor>> results = bridge_tensors((*sig)->results());
  if (!results.ok()) return bridge_fail(results.status(), status);
  b.arguments = std::move(*arguments);
  b.results = std::move(*results);
  for (const TensorSpec& s : (*sig)->arguments()) b.argument_refs.push_back(TensorRef{nullptr, s.shape, s.strides, s.dtype});
  for (const TensorSpec& s : (*sig)->results()) b.result_refs.push_back(TensorRef{nullptr, s.shape, s.strides, s.dtype});
  b.name = (*sig)->command();
  std::lock_guard<std::mutex> lock(mutex);
  const BridgeLaunchable& k = kept.emplace_back(std::move(b));
  out->handle = const_cast<BridgeLaunchable*>(&k);
  out->argument_count = static_cast<int32_t>(k.arguments.size());
  out->result_count = static_cast<int32_t>(k.results.size());
  out->arguments = k.arguments.data();
  out->results = k.results.data();
  out->workspace_bytes = k.launchable->workspace_bytes();
  out->name = k.name.c_str();
  return 0;
}

int32_t bridge_conv(const boo_bridge_conv* conv, int32_t device, int32_t loaded_only, boo_bridge_launchable* out,
                    boo_bridge_status* status) {
  return bridge_ready(bridge_conv_signature(*conv), device, loaded_only, out, status);
}

Result<std::unique_ptr<OpSignature>> bridge_batch_norm_signature(const boo_bridge_batch_norm& n) {
  if (n.rank < 4 || n.rank > 5)
    return invalid_argument("batch_norm: rank " + std::to_string(n.rank) + ", expected 4 or 5");
  if (n.pass_ < 1 || n.pass_ > 3)
    return invalid_argument("batch_norm: pass " + std::to_string(n.pass_) + ", expected 1 to 3");
  ops::BatchNormFields f;
  BOO_ASSIGN_OR_RETURN(f.dtype, bridge_dtype(n.dtype));
  f.input_shape.assign(n.x_shape, n.x_shape + n.rank);
  f.layout = std::string(n.layout, strnlen(n.layout, sizeof n.layout));
  f.mode = BatchNormMode::kSpatial;
  f.pass = static_cast<BatchNormPass>(n.pass_);
  f.save = n.save != 0;
  f.running = n.running != 0;
  f.eps = n.eps;
  f.momentum = n.momentum;
  BOO_ASSIGN_OR_RETURN(std::unique_ptr<BatchNormSignature> sig, ops::batch_norm_signature_from_fields(f));
  return std::unique_ptr<OpSignature>(std::move(sig));
}

int32_t bridge_batch_norm(const boo_bridge_batch_norm* batch_norm, int32_t device, int32_t loaded_only,
                          boo_bridge_launchable* out, boo_bridge_status* status) {
  return bridge_ready(bridge_batch_norm_signature(*batch_norm), device, loaded_only, out, status);
}

int32_t bridge_launch(void* handle, const uint64_t* arguments, const uint64_t* results, void* workspace,
                      void* stream, boo_bridge_status* status) {
  const auto& b = *static_cast<const BridgeLaunchable*>(handle);
  // This thread's copies of the specs with this launch's addresses: after a thread's first launch of a
  // signature the copies reuse their memory, so a launch allocates nothing.
  thread_local std::vector<TensorRef> args, outs;
  args = b.argument_refs;
  outs = b.result_refs;
  for (size_t i = 0; i < args.size(); ++i) args[i].data = reinterpret_cast<void*>(arguments[i]);
  for (size_t i = 0; i < outs.size(); ++i) outs[i].data = reinterpret_cast<void*>(results[i]);
  Status st = b.launchable->launch(args, outs, launch_stream(reinterpret_cast<uintptr_t>(stream)), workspace);
  if (!st.ok()) return bridge_fail(st, status);
  return 0;
}

const boo_bridge torch_bridge = {BOO_TORCH_BRIDGE_VERSION, bridge_stream_capturing, bridge_conv, bridge_launch,
                                 bridge_batch_norm};

// The fields of a signature, as the keywords of the Signature constructor that builds it
// (Signature.conv(**sig.fields) == sig).
nb::dict fields_of(const OpSignature& sig) {
  nb::dict f;
  if (const auto* conv = dynamic_cast<const ConvSignature*>(&sig)) {
    f["dtype"] = conv->dtype;
    f["input_shape"] = conv->x_spec().shape;
    f["weight_shape"] = conv->w_spec().shape;
    f["stride"] = conv->stride;
    f["padding"] = conv->padding;
    f["dilation"] = conv->dilation;
    f["output_padding"] = conv->output_padding;
    f["groups"] = conv->groups;
    f["transposed"] = conv->transposed;
    f["input_layout"] = conv->input_layout;
    f["weight_layout"] = conv->filter_layout;
    f["output_layout"] = conv->output_layout;
    f["direction"] = static_cast<ConvDirection>(conv->directions);
    f["bias"] = conv->bias;
    f["activation"] = conv->activation;
    f["tf32"] = conv->fp32_tf32;
    f["residual"] = conv->residual;
  } else if (const auto* ln = dynamic_cast<const LayerNormSignature*>(&sig)) {
    f["dtype"] = ln->dtype;
    f["input_shape"] = ln->input_shape;
    f["normalized_shape"] = ln->normalized_shape();
    f["eps"] = ln->eps;
    f["weight"] = ln->weight;
    f["bias"] = ln->bias;
    f["direction"] = static_cast<LayerNormDirection>(ln->directions);
    f["input_permutation"] = ln->input_permutation;
    f["use_aten"] = ln->use_aten;
  } else if (const auto* rms = dynamic_cast<const RmsNormSignature*>(&sig)) {
    f["dtype"] = rms->dtype;
    f["input_shape"] = rms->input_shape;
    f["normalized_shape"] = rms->normalized_shape();
    f["eps"] = rms->eps;
    f["weight"] = rms->weight;
    f["direction"] = static_cast<RmsNormDirection>(rms->directions);
  } else if (const auto* bn = dynamic_cast<const BatchNormSignature*>(&sig)) {
    f["dtype"] = bn->dtype;
    f["input_shape"] = bn->input_shape;
    f["layout"] = bn->layout;
    f["mode"] = bn->mode;
    f["pass_"] = bn->pass;
    f["save"] = bn->save;
    f["running"] = bn->running;
    f["eps"] = bn->eps;
    f["momentum"] = bn->momentum;
    f["mixed"] = bn->mixed();
  } else if (const auto* gn = dynamic_cast<const GroupNormSignature*>(&sig)) {
    f["dtype"] = gn->dtype;
    f["input_shape"] = gn->input_shape;
    f["groups"] = gn->groups;
    f["eps"] = gn->eps;
    f["affine"] = gn->affine;
    f["direction"] = static_cast<NormDirection>(gn->directions);
    f["layout"] = gn->layout;
  } else {
    raise(unimplemented("Signature.fields: " + std::string(sig.op_name()) + " signatures have no typed fields"));
  }
  return f;
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
  m.attr("__version__") = std::string(library_version());
  m.attr("git_commit") = std::string(git_commit());

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

  nb::enum_<DType>(m, "DType", "A tensor element type (PyTorch's names).")
      .value("float32", DType::kF32)
      .value("float16", DType::kF16)
      .value("bfloat16", DType::kBF16);

  nb::enum_<Activation::Kind>(m, "ActivationKind", "An activation fused after a forward convolution's bias.")
      .value("NONE", Activation::Kind::kNone)
      .value("RELU", Activation::Kind::kRelu)
      .value("SIGMOID", Activation::Kind::kSigmoid)
      .value("TANH", Activation::Kind::kTanh)
      .value("SILU", Activation::Kind::kSilu)
      .value("GELU", Activation::Kind::kGelu)
      .value("GELU_TANH", Activation::Kind::kGeluTanh)
      .value("LEAKY_RELU", Activation::Kind::kLeakyRelu)
      .value("CLAMP", Activation::Kind::kClamp);

  nb::class_<Activation>(m, "Activation",
                         "A fused activation with its parameters (leaky_relu's alpha, clamp's bounds).")
      .def(
          "__init__",
          [](Activation* self, Activation::Kind kind, double alpha, nb::object lo, nb::object hi) {
            const bool clamp = kind == Activation::Kind::kClamp;
            if (clamp != (!lo.is_none() && !hi.is_none()) || (!clamp && (!lo.is_none() || !hi.is_none())))
              raise(invalid_argument(clamp ? "Activation(CLAMP) needs both bounds, lo and hi"
                                           : "Activation: lo and hi are CLAMP's bounds only"));
            if (kind != Activation::Kind::kLeakyRelu && alpha != Activation{}.alpha)
              raise(invalid_argument("Activation: alpha is LEAKY_RELU's slope only"));
            Activation a;
            a.kind = kind;
            a.alpha = alpha;
            if (clamp) {
              a.lo = nb::cast<double>(lo);
              a.hi = nb::cast<double>(hi);
              if (a.lo > a.hi) raise(invalid_argument("Activation(CLAMP): lo must not exceed hi"));
            }
            new (self) Activation(a);
          },
          "kind"_a, "alpha"_a = Activation{}.alpha, "lo"_a = nb::none(), "hi"_a = nb::none())
      .def_ro("kind", &Activation::kind)
      .def_ro("alpha", &Activation::alpha)
      .def_ro("lo", &Activation::lo)
      .def_ro("hi", &Activation::hi)
      .def("__eq__", [](const Activation& a, const Activation& b) { return a == b; })
      .def("__repr__", [](const Activation& a) { return "Activation('" + a.to_string() + "')"; });

  nb::enum_<ConvDirection>(m, "ConvDirection", nb::is_flag(),
                           "What a convolution signature computes; combine with |.")
      .value("FORWARD", kConvForward)
      .value("BACKWARD_DATA", kConvBackwardData)
      .value("BACKWARD_WEIGHT", kConvBackwardWeight)
      .value("BACKWARD_BIAS", kConvBackwardBias);
  // Layer and RMS norm share one direction type (boo/norm.hpp); RMS norm has no bias, so its
  // signatures reject BACKWARD_BIAS. The per-op names stay as aliases.
  nb::enum_<NormDirection>(m, "NormDirection", nb::is_flag(),
                           "What a layer or RMS norm signature computes: FORWARD, or backward flags combined with |.")
      .value("FORWARD", kNormForward)
      .value("BACKWARD_DATA", kNormBackwardData)
      .value("BACKWARD_WEIGHT", kNormBackwardWeight)
      .value("BACKWARD_BIAS", kNormBackwardBias);
  nb::enum_<BatchNormMode>(m, "BatchNormMode", "Which elements a batch norm statistic summarizes (MIOpen's -m).")
      .value("PER_ACTIVATION", BatchNormMode::kPerActivation)
      .value("SPATIAL", BatchNormMode::kSpatial);
  nb::enum_<BatchNormPass>(m, "BatchNormPass", "What a batch norm signature computes (MIOpen's -F and -b).")
      .value("TRAINING", BatchNormPass::kTraining)
      .value("INFERENCE", BatchNormPass::kInference)
      .value("BACKWARD", BatchNormPass::kBackward);
  m.attr("LayerNormDirection") = m.attr("NormDirection");
  m.attr("RmsNormDirection") = m.attr("NormDirection");

  nb::class_<Signature>(m, "Signature", "One operation: shapes, layouts, dtype, direction and fusions.")
      .def_static(
          "conv",
          [](std::vector<int64_t> input_shape, std::vector<int64_t> weight_shape, nb::handle dtype, nb::handle stride,
             nb::handle padding, nb::handle dilation, int64_t groups, bool transposed, nb::handle output_padding,
             std::string input_layout, std::string weight_layout, std::string output_layout, nb::handle direction,
             bool bias, nb::handle activation, bool tf32, bool residual) {
            ops::ConvFields f;
            f.dtype = dtype_argument(dtype);
            f.input_shape = std::move(input_shape);
            f.weight_shape = std::move(weight_shape);
            f.stride = ints_argument(stride, "stride");
            f.padding = ints_argument(padding, "padding");
            f.dilation = ints_argument(dilation, "dilation");
            f.output_padding = ints_argument(output_padding, "output_padding");
            f.groups = groups;
            f.transposed = transposed;
            f.input_layout = std::move(input_layout);
            f.weight_layout = std::move(weight_layout);
            f.output_layout = std::move(output_layout);
            f.directions = directions_argument<ConvDirection>(direction, "ConvDirection");
            f.bias = bias;
            f.activation = activation_argument(activation);
            f.fp32_tf32 = tf32;
            f.residual = residual;
            return wrap(value_or_raise(ops::conv_signature_from_fields(f)));
          },
          "input_shape"_a, "weight_shape"_a, "dtype"_a, nb::kw_only(), "stride"_a = 1, "padding"_a = 0,
          "dilation"_a = 1, "groups"_a = 1, "transposed"_a = false, "output_padding"_a = 0, "input_layout"_a = "",
          "weight_layout"_a = "", "output_layout"_a = "", "direction"_a = kConvForward, "bias"_a = false,
          "activation"_a = Activation::Kind::kNone, "tf32"_a = false, "residual"_a = false,
          "A convolution from its fields. Shapes are logical: input (N, C, spatial...), weight (K, C/groups, "
          "filter...) or transposed (C, K/groups, filter...), whatever the layouts; layouts are permutations of "
          "'NC' + spatial letters (default channels-first; the output's defaults to the input's). stride, padding, "
          "dilation, output_padding: an int or one per spatial dimension. direction: ConvDirection flags; bias: "
          "the forward adds a bias (with forward and backward directions, BACKWARD_BIAS goes with it). activation: "
          "an ActivationKind or an Activation (forward only). tf32: fp32 on TF32 tensor cores. residual: the forward "
          "adds z, an argument of y's shape and layout, before the activation: act(conv(x, w) + bias + z).")
      .def_static(
          "layer_norm",
          [](std::vector<int64_t> input_shape, std::vector<int64_t> normalized_shape, nb::handle dtype, double eps,
             bool weight, bool bias, nb::handle direction, std::vector<int> input_permutation, bool use_aten) {
            ops::LayerNormFields f;
            f.dtype = dtype_argument(dtype);
            f.input_shape = std::move(input_shape);
            f.normalized_shape = std::move(normalized_shape);
            f.eps = eps;
            f.weight = weight;
            f.bias = bias;
            f.directions = directions_argument<LayerNormDirection>(direction, "LayerNormDirection");
            f.input_permutation = std::move(input_permutation);
            f.use_aten = use_aten;
            return wrap(value_or_raise(ops::layer_norm_signature_from_fields(f)));
          },
          "input_shape"_a, "normalized_shape"_a, "dtype"_a, nb::kw_only(), "eps"_a = 1e-5, "weight"_a = false,
          "bias"_a = false, "direction"_a = kLayerNormForward, "input_permutation"_a = std::vector<int>{},
          "use_aten"_a = true,
          "A layer norm over the trailing `normalized_shape` of `input_shape` from its fields. weight and bias: "
          "the elementwise affine parameters (a bias needs the weight). direction: LayerNormDirection.FORWARD, or "
          "backward flags combined with |. input_permutation: the memory order of the input, outermost first. "
          "use_aten: BOO's flag, which only changes func_name.")
      .def_static(
          "rms_norm",
          [](std::vector<int64_t> input_shape, std::vector<int64_t> normalized_shape, nb::handle dtype, double eps,
             bool weight, nb::handle direction) {
            ops::RmsNormFields f;
            f.dtype = dtype_argument(dtype);
            f.input_shape = std::move(input_shape);
            f.normalized_shape = std::move(normalized_shape);
            f.eps = eps;
            f.weight = weight;
            f.directions = directions_argument<RmsNormDirection>(direction, "RmsNormDirection");
            return wrap(value_or_raise(ops::rms_norm_signature_from_fields(f)));
          },
          "input_shape"_a, "normalized_shape"_a, "dtype"_a, nb::kw_only(), "eps"_a = 1e-5, "weight"_a = true,
          "direction"_a = kRmsNormForward,
          "An RMS norm over the trailing `normalized_shape` of `input_shape` from its fields. direction: "
          "RmsNormDirection.FORWARD and/or the backward (BACKWARD_DATA, with BACKWARD_WEIGHT when there is a "
          "weight).")
      .def_static(
          "batch_norm",
          [](std::vector<int64_t> input_shape, nb::handle dtype, std::string layout, BatchNormMode mode,
             BatchNormPass pass, bool save, bool running, double eps, double momentum, bool mixed) {
            ops::BatchNormFields f;
            f.dtype = dtype_argument(dtype);
            f.input_shape = std::move(input_shape);
            f.layout = std::move(layout);
            f.mode = mode;
            f.pass = pass;
            f.save = save;
            f.running = running;
            f.eps = eps;
            f.momentum = momentum;
            f.mixed = mixed;
            return wrap(value_or_raise(ops::batch_norm_signature_from_fields(f)));
          },
          "input_shape"_a, "dtype"_a, nb::kw_only(), "layout"_a = "", "mode"_a = BatchNormMode::kSpatial,
          "pass_"_a = BatchNormPass::kTraining, "save"_a = false, "running"_a = false, "eps"_a = 1e-5,
          "momentum"_a = 0.1, "mixed"_a = false,
          "A batch norm from its fields. input_shape: (N, C, H, W) or (N, C, D, H, W), logical; layout: NCHW, "
          "NHWC, NCDHW or NDHWC (default channels-first). mode: BatchNormMode.SPATIAL (PyTorch's: one statistic "
          "per channel) or PER_ACTIVATION. pass_: BatchNormPass.TRAINING (batch statistics; save: also the mean "
          "and inverse variance; running: also the running statistics updated with `momentum`, the variance "
          "unbiased), INFERENCE (running: from the running statistics) or BACKWARD (dx, dscale, dbias; save: from "
          "the saved statistics). Scale, bias and statistics are float32; mixed: 16-bit scale and bias with "
          "float32 gradients (MIOpen's bnormfp16fp32, bnormbfp16fp32).")
      .def_static(
          "group_norm",
          [](std::vector<int64_t> input_shape, nb::handle dtype, int64_t groups, double eps, bool affine,
             nb::handle direction, std::string layout) {
            ops::GroupNormFields f;
            f.dtype = dtype_argument(dtype);
            f.input_shape = std::move(input_shape);
            f.groups = groups;
            f.eps = eps;
            f.affine = affine;
            f.directions = directions_argument<NormDirection>(direction, "NormDirection");
            f.layout = std::move(layout);
            return wrap(value_or_raise(ops::group_norm_signature_from_fields(f)));
          },
          "input_shape"_a, "dtype"_a, nb::kw_only(), "groups"_a = 1, "eps"_a = 1e-5, "affine"_a = true,
          "direction"_a = kNormForward, "layout"_a = "",
          "A group norm from its fields. input_shape: (N, C, W), (N, C, H, W) or (N, C, D, H, W), logical; "
          "groups divides C. affine: weight and bias, [C] in the data type. direction: NormDirection.FORWARD "
          "(y, and float32 mean and rstd [N, groups]), the whole backward (BACKWARD_DATA, with BACKWARD_WEIGHT "
          "| BACKWARD_BIAS when affine), or both. layout: channels-first (NCW, NCHW, NCDHW, the default) or "
          "channels-last (NWC, NHWC, NDHWC).")
      .def_static(
          "from_command",
          [](const std::string& command) {
            return wrap(value_or_raise(parse_command(std::string_view(command))).signature);
          },
          "command"_a, "Parses a MIOpenDriver command, e.g. 'convbfp16 -n 8 -c 64 ...'.")
      .def_prop_ro("fields", [](const Signature& s) { return fields_of(*s.sig); },
                   "The typed fields, as the keywords of the constructor that builds the signature: "
                   "Signature.conv(**sig.fields) == sig for a conv (op_name 'conv'), likewise layer_norm "
                   "('layernorm'), rms_norm ('rmsnorm'), batch_norm ('batchnorm', 'batchnorm_mixed') and "
                   "group_norm ('groupnorm').")
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
        launch_on(s, arg_refs, result_refs, device, stream, 0);
      },
      "signature"_a, "args"_a, "results"_a, "device"_a, "stream"_a,
      "Launches the signature's kernels on `stream` (a CUstream handle) of GPU `device` over DLPack arrays "
      "(any strides; checked here); compiles or loads the kernels from the cache on first use.");

  m.def(
      "launch_addresses",
      [](Signature& s, const std::vector<uintptr_t>& args, const std::vector<uintptr_t>& results, int device,
         uintptr_t stream, uintptr_t workspace) {
        check_counts(s, args.size(), results.size());
        // This thread's refs, their shapes and strides assigned in place: after a thread's first launch of a
        // signature of this rank they reuse their memory, so the eager hot path allocates nothing here.
        thread_local std::vector<TensorRef> arg_refs, result_refs;
        auto bind = [](const std::vector<uintptr_t>& addresses, const std::vector<TensorSpec>& specs,
                       std::vector<TensorRef>& refs) {
          refs.resize(addresses.size());
          for (size_t i = 0; i < addresses.size(); ++i) {
            refs[i].data = reinterpret_cast<void*>(addresses[i]);
            refs[i].shape = specs[i].shape;
            refs[i].strides = specs[i].strides;
            refs[i].dtype = specs[i].dtype;
          }
        };
        bind(args, s.arguments, arg_refs);
        bind(results, s.results, result_refs);
        launch_on(s, arg_refs, result_refs, device, stream, workspace);
      },
      "signature"_a, "args"_a, "results"_a, "device"_a, "stream"_a, "workspace"_a = 0,
      "launch() for tensors the caller has checked against the signature (device, shape, dtype, strides, "
      "alignment), passed by address: boo.Launchable's path for PyTorch tensors, which skips the DLPack "
      "round trip (several microseconds a tensor). workspace: the address of workspace_bytes() bytes of "
      "device memory (256-byte aligned) the launch uses, or 0 for memory the launchable allocates once.");
  m.def(
      "workspace_bytes",
      [](Signature& s, int device, uintptr_t stream) { return signature_launchable(s, device, stream)->workspace_bytes(); },
      "signature"_a, "device"_a, "stream"_a,
      "The scratch device memory a launch of the signature on GPU `device` needs, in bytes; compiles or loads "
      "the kernels as a launch on `stream` would (while the stream is captured into a CUDA graph, only kernels "
      "loaded already are found).");
  m.def(
      "_torch_bridge", [] { return reinterpret_cast<uintptr_t>(&torch_bridge); },
      "The address of the C interface boo's PyTorch library reaches the runtime through (torch_bridge.h).");

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
      "cache_settings",
      [] {
        const cache::CacheConfig c = cache_config();
        return nb::make_tuple(c.dir, c.enabled);
      },
      "The kernel cache of kernels compiled from now on: (folder, enabled). Starts from BOO_CACHE_DIR and "
      "BOO_CACHE_ON.");
  m.def(
      "set_cache_settings",
      [](const std::string& dir, bool enabled) {
        if (dir.empty()) raise(invalid_argument("the kernel cache folder must not be empty"));
        set_cache_config(cache::CacheConfig{dir, enabled});
      },
      "dir"_a, "enabled"_a,
      "Sets the kernel cache for kernels compiled from now on; kernels already loaded stay loaded.");
  m.def(
      "clear_cache",
      [] { ok_or_raise(cache::ArtifactCache(cache_config()).clear()); },
      "Removes every kernel from the cache folder (its versioned contents; the folder stays).");

  m.def(
      "prepare",
      [](const nb::sequence& signatures, int device, int threads) {
        // Held here: the Python objects may go while the GIL is released.
        std::vector<std::shared_ptr<const OpSignature>> held;
        for (nb::handle item : signatures) held.push_back(nb::cast<const Signature&>(item).sig);
        std::vector<const OpSignature*> sigs;
        for (const auto& sig : held) sigs.push_back(sig.get());
        Runtime& rt = runtime_for(device);
        std::vector<runtime::PreloadFailure> failures;
        {
          nb::gil_scoped_release release;
          failures = runtime::make_launchables(rt, sigs, threads);
        }
        nb::list out;
        for (const runtime::PreloadFailure& f : failures) out.append(nb::make_tuple(f.what, f.reason.to_string()));
        return out;
      },
      "signatures"_a, "device"_a, "threads"_a,
      "Compiles (or loads from the cache) and loads the kernels of `signatures` on GPU `device` on `threads` "
      "threads, the GIL released, so that their first launches find them loaded (with the disk cache off too). "
      "A signature that fails is returned as (command, error), not raised: it is left to its first use, which "
      "reports it. Raises only when the GPU's runtime cannot be created.");
  m.def(
      "runtime_stats",
      [](int device) {
        const RuntimeStats s = runtime_for(device).stats();
        nb::dict out;
        out["compiled"] = s.compiled;
        out["disk_hits"] = s.disk_hits;
        out["memory_hits"] = s.memory_hits;
        out["compile_ms"] = s.compile_ms;
        out["load_ms"] = s.load_ms;
        return out;
      },
      "device"_a,
      "Where the launchables of GPU `device`'s current runtime came from: modules compiled with NVRTC, "
      "loaded from the disk cache, launchables found in the process; total compile and load milliseconds. "
      "A new cache setting starts a new runtime, counting from zero.");

  m.def(
      "implementation",
      [](const Signature& s, int device) {
        return std::string(value_or_raise(runtime_for(device).get_launchable(*s.sig))->implementation());
      },
      "signature"_a, "device"_a, "The GPU implementation that runs the signature, e.g. 'gpu:conv:implicit_gemm'.");
}
