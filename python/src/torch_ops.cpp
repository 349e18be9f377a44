// boo's ops for PyTorch registered in C++ (TORCH_LIBRARY), so that a call costs PyTorch's dispatch
// and a launch rather than a trip through Python: what compiled graphs (torch.ops.boo.*) and eager
// calls pay per op.
//
// Built against the user's PyTorch by `pip install .` (python/CMakeLists.txt) as boo/_torch_ops.so;
// boo.ops loads it (torch.ops.load_library) and hands it boo._C's runtime through the C interface
// of torch_bridge.h. Without it (no PyTorch headers at build time, another PyTorch installed since,
// BOO_TORCH_LIBRARY=0) boo.ops registers the same schemas from Python.
//
// What is here: every op's schema (the same the Python registration infers); for conv, conv_backward
// and batch_norm the CUDA kernels (signature by a per-call key, tensors by address, results and the
// workspace from PyTorch's caching allocator, launched on the current stream: capturable into CUDA
// graphs) and conv's and batch_norm's autograd. The rest is boo.ops' (Python), registered onto these
// schemas: the CPU kernels (the float64 reference), conv_residual's and the other norms' kernels and
// autograd, every fake implementation, and the fallback to PyTorch when boo declines a signature: a CUDA kernel here that
// cannot run its call passes it to the op's Python kernel (registered for the CPU key, device-generic),
// which warns once and runs PyTorch, or raises with BOO_STRICT=1, as without this library.
#include <ATen/Context.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/full.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/leaky_relu.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/tanh.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/SmallVector.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "torch_bridge.h"

namespace {

const boo_bridge* bridge = nullptr;  // set once by boo_torch_init before any op runs

// enable_backward()/disable_backward()'s choice (1, 0), or -1: BOO_USE_BACKWARD_KERNELS decides (read
// per backward, as boo.ops does: tests and users change the environment while running).
std::atomic<int> backward_kernels{-1};

bool boo_backward_enabled() {
  const int mode = backward_kernels.load(std::memory_order_relaxed);
  if (mode >= 0) return mode != 0;
  const char* env = std::getenv("BOO_USE_BACKWARD_KERNELS");
  return env == nullptr || std::string_view(env) != "0";
}

// The CUDA kernels' launches and the inputs they copied (conform) so far: what boo.launch.Launchable's
// calls and boo._tensors.copied_inputs count on the Python path, which these launches bypass. Read by
// boo.ops._cpp_counters() (tests); a relaxed increment costs a launch nothing measurable.
std::atomic<uint64_t> launches{0}, copied_inputs{0};

using SymInts = c10::SymIntArrayRef;
using ConvFn = at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, SymInts, SymInts,
                          SymInts, c10::SymInt, c10::string_view, c10::string_view);
using ConvBackwardFn = std::vector<at::Tensor>(const at::Tensor&, const at::Tensor&, const at::Tensor&, bool,
                                               SymInts, SymInts, SymInts, c10::SymInt, c10::string_view,
                                               c10::List<bool>);

using BatchNormFn = std::vector<at::Tensor>(const at::Tensor&, const std::optional<at::Tensor>&,
                                            const std::optional<at::Tensor>&, const std::optional<at::Tensor>&,
                                            const std::optional<at::Tensor>&, bool, double, double);
using BatchNormBackwardFn = std::vector<at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                    const std::optional<at::Tensor>&, const at::Tensor&,
                                                    const at::Tensor&, double, c10::List<bool>);

const c10::TypedOperatorHandle<ConvFn>& conv_op() {
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("boo::conv", "").typed<ConvFn>();
  return op;
}

const c10::TypedOperatorHandle<ConvBackwardFn>& conv_backward_op() {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("boo::conv_backward", "").typed<ConvBackwardFn>();
  return op;
}

const c10::TypedOperatorHandle<BatchNormFn>& batch_norm_op() {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("boo::batch_norm", "").typed<BatchNormFn>();
  return op;
}

const c10::TypedOperatorHandle<BatchNormBackwardFn>& batch_norm_backward_op() {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("boo::batch_norm_backward", "").typed<BatchNormBackwardFn>();
  return op;
}

// The op's Python kernel, for a call the CUDA kernel here cannot run (see the top): boo.ops registers it
// for the CPU key, and it takes tensors of any device.
template <typename Fn, typename... Args>
auto python_kernel(const c10::TypedOperatorHandle<Fn>& op, Args&&... args) {
  return op.redispatch(c10::DispatchKeySet(c10::DispatchKey::CPU), std::forward<Args>(args)...);
}

int32_t bridge_dtype(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return 0;
    case at::kHalf: return 1;
    case at::kBFloat16: return 2;
    default: return -1;
  }
}

at::ScalarType torch_dtype(int32_t dtype) {
  return dtype == 0 ? at::kFloat : dtype == 1 ? at::kHalf : at::kBFloat16;
}

c10::IntArrayRef dims(const int64_t* values, int32_t rank) { return c10::IntArrayRef(values, static_cast<size_t>(rank)); }

// `t` as the launch reads it: its spec's shape and dtype (nullopt otherwise: the call is not the
// signature's), in the spec's strides (those of size-1 dimensions are free) at a 16-byte aligned
// address, else copied into them. A `t` of another rank is the spec's shape when it is once the size-1
// dimensions are left out: a batch norm's [C] parameters are the (1, C, 1, 1) its signature reads.
std::optional<at::Tensor> conform(const at::Tensor& t, const boo_bridge_tensor& spec) {
  const c10::IntArrayRef shape = dims(spec.shape, spec.rank);
  if (t.scalar_type() != torch_dtype(spec.dtype)) return std::nullopt;
  bool same = reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
  if (t.dim() == spec.rank) {
    if (t.sizes() != shape) return std::nullopt;
    for (int32_t d = 0; same && d < spec.rank; ++d) same = spec.shape[d] == 1 || t.stride(d) == spec.strides[d];
  } else {
    int64_t i = 0;
    for (int32_t d = 0; d < spec.rank; ++d) {
      if (spec.shape[d] == 1) continue;
      while (i < t.dim() && t.size(i) == 1) ++i;
      if (i == t.dim() || t.size(i) != spec.shape[d]) return std::nullopt;
      same = same && t.stride(i) == spec.strides[d];
      ++i;
    }
    while (i < t.dim() && t.size(i) == 1) ++i;
    if (i != t.dim()) return std::nullopt;
  }
  if (same) return t;
  copied_inputs.fetch_add(1, std::memory_order_relaxed);
  return at::empty_strided(shape, dims(spec.strides, spec.rank), t.options()).copy_(t.reshape(shape));
}

// A call's identity: everything its signature is made of (the same key gives the same signature).
struct CallKey {
  std::vector<int64_t> ints;
  std::string text;
  bool operator==(const CallKey&) const = default;
};

struct CallKeyHash {
  size_t operator()(const CallKey& k) const {
    size_t h = std::hash<std::string>{}(k.text);
    for (int64_t v : k.ints) h = h * 1000003u ^ std::hash<int64_t>{}(v);
    return h;
  }
};

// What a key became: a launchable, or nothing (boo declines the signature: its calls go to the
// Python kernel).
struct Ready {
  bool runs = false;
  boo_bridge_launchable launchable{};
};

// The signatures of one op's calls so far, by key.
class ReadyCache {
 public:
  // The entry of `key`, made by `make(capturing)` on a miss. While `stream` is being captured into a
  // CUDA graph, `make` may only find kernels loaded already (see boo_bridge::conv).
  template <typename Make>
  Ready get(const CallKey& key, int device, void* stream, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = ready_.find(key); it != ready_.end()) return it->second;
    }
    TORCH_CHECK(bridge != nullptr, "boo: boo/_torch_ops.so was loaded without boo.ops (import boo.ops to use it)");
    boo_bridge_status status{};
    int32_t capturing = 0;
    TORCH_CHECK(bridge->stream_capturing(device, stream, &capturing, &status) == 0, "boo: ", status.message);
    Ready ready;
    const int32_t code = make(capturing != 0, &ready.launchable, &status);
    // FAILED_PRECONDITION from a capture (the kernels are not loaded) is the caller's to fix; it is
    // not kept, so the call after a warm-up finds the kernels.
    TORCH_CHECK(!capturing || code == 0, "boo: ", status.message);
    ready.runs = code == 0;
    std::lock_guard<std::mutex> lock(mutex_);
    return ready_.emplace(key, ready).first->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<CallKey, Ready, CallKeyHash> ready_;
};

// Runs `l` with its arguments by name from `inputs` (name, tensor): results from PyTorch's caching
// allocator, the workspace too, on the current stream. nullopt when a tensor is not the signature's
// (the caller then passes the call to the Python kernel).
std::optional<std::vector<at::Tensor>> launch(const boo_bridge_launchable& l,
                                              std::initializer_list<std::pair<const char*, const at::Tensor*>> inputs,
                                              const at::Tensor& like, void* stream) {
  // On the stack (no allocation per call): conformed copies live until the launch is enqueued.
  c10::SmallVector<at::Tensor, 4> keep;
  c10::SmallVector<uint64_t, 4> arguments, results;
  for (int32_t i = 0; i < l.argument_count; ++i) {
    const boo_bridge_tensor& spec = l.arguments[i];
    const at::Tensor* t = nullptr;
    for (const auto& [name, tensor] : inputs)
      if (std::strcmp(name, spec.name) == 0) t = tensor;
    TORCH_CHECK(t != nullptr && t->defined(), "boo: ", l.name, " takes '", spec.name, "', which the op has not");
    std::optional<at::Tensor> c = conform(*t, spec);
    if (!c) return std::nullopt;
    arguments.push_back(reinterpret_cast<uint64_t>(c->data_ptr()));
    keep.push_back(std::move(*c));
  }
  std::vector<at::Tensor> out;
  out.reserve(static_cast<size_t>(l.result_count));
  for (int32_t i = 0; i < l.result_count; ++i) {
    const boo_bridge_tensor& spec = l.results[i];
    out.push_back(at::empty_strided(dims(spec.shape, spec.rank), dims(spec.strides, spec.rank),
                                    like.options().dtype(torch_dtype(spec.dtype))));
    results.push_back(reinterpret_cast<uint64_t>(out.back().data_ptr()));
  }
  // Freed when this returns, the workspace's block is reused only by work the caching allocator orders
  // after this launch on the stream.
  at::Tensor workspace;
  if (l.workspace_bytes > 0)
    workspace = at::empty({static_cast<int64_t>(l.workspace_bytes)}, like.options().dtype(at::kByte));
  boo_bridge_status status{};
  TORCH_CHECK(bridge->launch(l.handle, arguments.data(), results.data(),
                             workspace.defined() ? workspace.data_ptr() : nullptr, stream, &status) == 0,
              "boo: ", status.message);
  launches.fetch_add(1, std::memory_order_relaxed);
  return out;
}

// The result of `l` called `name` (each op's results are the launchable's, by name).
at::Tensor result(const boo_bridge_launchable& l, const std::vector<at::Tensor>& got, const char* name) {
  for (int32_t i = 0; i < l.result_count; ++i)
    if (std::strcmp(l.results[i].name, name) == 0) return got[i];
  return at::Tensor();
}

// ---------------------------------------------------------------------------------------------------
// Convolution.

// The key and the bridge's description of a convolution; false when it is none boo describes (the
// Python kernel then decides: it falls back, or raises the error the user should see).
bool describe_conv(const at::Tensor& x, const at::Tensor& w, bool bias, SymInts stride, SymInts padding,
                   SymInts dilation, int64_t groups,
                   std::string_view activation, std::string_view layouts, uint8_t directions, CallKey& key,
                   boo_bridge_conv& conv) {
  const int64_t rank = x.dim();
  const size_t spatial = static_cast<size_t>(rank - 2);
  const int32_t dtype = bridge_dtype(x.scalar_type());
  if (rank < 3 || rank > 5 || w.dim() != rank || dtype < 0 || stride.size() != spatial ||
      padding.size() != spatial || dilation.size() != spatial || activation.size() >= sizeof conv.activation)
    return false;
  conv = boo_bridge_conv{};
  conv.rank = static_cast<int32_t>(rank);
  conv.dtype = dtype;
  for (int64_t d = 0; d < rank; ++d) {
    conv.x_shape[d] = x.size(d);
    conv.w_shape[d] = w.size(d);
  }
  for (size_t d = 0; d < spatial; ++d) {
    conv.stride[d] = stride[d].expect_int();
    conv.padding[d] = padding[d].expect_int();
    conv.dilation[d] = dilation[d].expect_int();
  }
  conv.groups = groups;
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t end = i < 2 ? layouts.find(',', start) : layouts.size();
    if (end == std::string_view::npos || end - start >= sizeof conv.layouts[i]) return false;
    std::memcpy(conv.layouts[i], layouts.data() + start, end - start);
    start = end + 1;
  }
  conv.directions = directions;
  conv.bias = bias ? 1 : 0;
  // float32 on TF32 tensor cores where PyTorch's own convolutions would be (boo.ops.conv_signature's rule).
  conv.tf32 = x.scalar_type() == at::kFloat && at::globalContext().allowTF32CuDNN() ? 1 : 0;
  std::memcpy(conv.activation, activation.data(), activation.size());

  key.ints.clear();
  key.ints.insert(key.ints.end(),
                  {static_cast<int64_t>(x.get_device()), dtype, rank, groups, directions, bias, conv.tf32});
  key.ints.insert(key.ints.end(), x.sizes().begin(), x.sizes().end());
  key.ints.insert(key.ints.end(), w.sizes().begin(), w.sizes().end());
  key.ints.insert(key.ints.end(), conv.stride, conv.stride + spatial);
  key.ints.insert(key.ints.end(), conv.padding, conv.padding + spatial);
  key.ints.insert(key.ints.end(), conv.dilation, conv.dilation + spatial);
  key.text.assign(layouts);
  key.text.push_back('|');
  key.text.append(activation);
  return true;
}

constexpr uint8_t kForward = 1, kBackwardData = 2, kBackwardWeight = 4, kBackwardBias = 8;  // boo::ConvDirection

// The launchable of a convolution call on x's GPU, or nullptr when boo does not run it.
const boo_bridge_launchable* conv_launchable(ReadyCache& cache, const at::Tensor& x, const at::Tensor& w, bool bias,
                                             SymInts stride, SymInts padding, SymInts dilation, int64_t groups,
                                             std::string_view activation, std::string_view layouts,
                                             uint8_t directions, void* stream, Ready& ready) {
  thread_local CallKey key;
  boo_bridge_conv conv;
  if (!describe_conv(x, w, bias, stride, padding, dilation, groups, activation, layouts, directions, key, conv))
    return nullptr;
  const int device = x.get_device();
  ready = cache.get(key, device, stream, [&](bool capturing, boo_bridge_launchable* out, boo_bridge_status* status) {
    return bridge->conv(&conv, device, capturing ? 1 : 0, out, status);
  });
  return ready.runs ? &ready.launchable : nullptr;
}

at::Tensor conv_cuda(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias, SymInts stride,
                     SymInts padding, SymInts dilation, c10::SymInt groups, c10::string_view activation,
                     c10::string_view layouts) {
  static ReadyCache cache;
  void* stream = c10::cuda::getCurrentCUDAStream(x.get_device()).stream();
  const bool has_bias = bias.has_value() && bias->defined();
  Ready ready;
  if (const boo_bridge_launchable* l = conv_launchable(cache, x, w, has_bias, stride, padding, dilation,
                                                       groups.expect_int(), activation, layouts, kForward, stream,
                                                       ready)) {
    if (auto got = launch(*l, {{"x", &x}, {"w", &w}, {"b", has_bias ? &*bias : nullptr}}, x, stream))
      return (*got)[0];
  }
  return python_kernel(conv_op(), x, w, bias, stride, padding, dilation, std::move(groups), activation, layouts);
}

std::vector<at::Tensor> conv_backward_cuda(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w,
                                           bool has_bias, SymInts stride, SymInts padding, SymInts dilation,
                                           c10::SymInt groups, c10::string_view layouts, c10::List<bool> mask) {
  static ReadyCache cache;
  TORCH_CHECK(mask.size() == 3, "boo::conv_backward: output_mask has 3 entries (dx, dw, db), got ", mask.size());
  const bool want_x = mask.get(0), want_w = mask.get(1), want_b = mask.get(2);
  void* stream = c10::cuda::getCurrentCUDAStream(x.get_device()).stream();
  // One launchable per gradient (boo.ops.conv_backward_signatures' rule): the Hopper tier plans one direction
  // at a time, so dx and dw asked together would both run on the tier that plans every face at once.
  // Gradients not asked for come back as distinct empty tensors (outputs may not alias).
  at::Tensor dx = at::empty({0}, x.options()), dw = at::empty({0}, w.options()), db = at::empty({0}, w.options());
  const std::pair<bool, uint8_t> gradients[] = {
      {want_x, kBackwardData}, {want_w, kBackwardWeight}, {want_b && has_bias, kBackwardBias}};
  bool all_ran = true;
  for (const auto& [wanted, direction] : gradients) {
    if (!wanted) continue;
    Ready ready;
    const boo_bridge_launchable* l = conv_launchable(cache, x, w, false, stride, padding, dilation,
                                                     groups.expect_int(), "none", layouts, direction, stream, ready);
    std::optional<std::vector<at::Tensor>> got;
    if (l) got = launch(*l, {{"dy", &dy}, {"x", &x}, {"w", &w}}, x, stream);
    if (!got) {
      all_ran = false;
      break;
    }
    at::Tensor& out = direction == kBackwardData ? dx : direction == kBackwardWeight ? dw : db;
    out = result(*l, *got, direction == kBackwardData ? "dx" : direction == kBackwardWeight ? "dw" : "db");
    if (!out.defined()) {
      all_ran = false;
      break;
    }
  }
  if (all_ran) return {dx, dw, db};
  return python_kernel(conv_backward_op(), dy, x, w, has_bias, stride, padding, dilation, std::move(groups), layouts,
                       std::move(mask));
}

// z's gradient through boo's activation spelling (as boo.ops' _activation_fn applies it), by autograd.
at::Tensor activation_backward(std::string_view activation, const at::Tensor& z_in, const at::Tensor& dy) {
  at::AutoGradMode grad(true);
  at::Tensor z = z_in.detach().requires_grad_(true);
  const size_t colon = activation.find(':');
  const std::string_view name = activation.substr(0, colon);
  const std::string args(colon == std::string_view::npos ? std::string_view() : activation.substr(colon + 1));
  at::Tensor y;
  if (name == "relu") y = at::relu(z);
  else if (name == "sigmoid") y = at::sigmoid(z);
  else if (name == "tanh") y = at::tanh(z);
  else if (name == "silu") y = at::silu(z);
  else if (name == "gelu") y = at::gelu(z);
  else if (name == "gelu_tanh") y = at::gelu(z, "tanh");
  else if (name == "leaky_relu") y = at::leaky_relu(z, args.empty() ? 0.01 : std::stod(args));
  else if (name == "clamp") {
    const size_t split = args.find(':');
    y = at::clamp(z, std::stod(args.substr(0, split)), std::stod(args.substr(split + 1)));
  } else {
    TORCH_CHECK(false, "boo::conv: unknown activation '", std::string(activation), "'");
  }
  return torch::autograd::grad({y}, {z}, {dy})[0];
}

// conv's autograd: saves x, w and the bias, and differentiates through boo::conv_backward (or ATen's
// convolution_backward with boo's backward kernels off), the fused activation's gradient first (its
// input recomputed by boo::conv without it). The rules of boo.ops' Python registration.
class ConvFunction : public torch::autograd::Function<ConvFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w,
                            const std::optional<at::Tensor>& bias, SymInts stride, SymInts padding, SymInts dilation,
                            c10::SymInt groups, c10::string_view activation, c10::string_view layouts) {
    ctx->save_for_backward({x, w, bias.value_or(at::Tensor())});
    ctx->saved_data["stride"] = c10::IValue(stride);
    ctx->saved_data["padding"] = c10::IValue(padding);
    ctx->saved_data["dilation"] = c10::IValue(dilation);
    ctx->saved_data["groups"] = groups;
    ctx->saved_data["activation"] = std::string(activation);
    ctx->saved_data["layouts"] = std::string(layouts);
    at::AutoDispatchBelowADInplaceOrView below;
    return conv_op().call(x, w, bias, stride, padding, dilation, std::move(groups), activation, layouts);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &w = saved[1], &b = saved[2];
    const std::vector<c10::SymInt> stride = ctx->saved_data["stride"].toSymIntVector();
    const std::vector<c10::SymInt> padding = ctx->saved_data["padding"].toSymIntVector();
    const std::vector<c10::SymInt> dilation = ctx->saved_data["dilation"].toSymIntVector();
    const c10::SymInt groups = ctx->saved_data["groups"].toSymInt();
    const std::string activation = ctx->saved_data["activation"].toStringRef();
    const std::string layouts = ctx->saved_data["layouts"].toStringRef();
    const bool has_bias = b.defined();
    // The node's edges are the tensor inputs given: x, w, and the bias only when there is one.
    const bool need_x = ctx->needs_input_grad(0), need_w = ctx->needs_input_grad(1),
               need_b = has_bias && ctx->needs_input_grad(2);
    at::Tensor dy = grads[0];
    if (activation != "none") {
      const std::optional<at::Tensor> bias = has_bias ? std::optional<at::Tensor>(b) : std::nullopt;
      at::Tensor z = conv_op().call(x, w, bias, stride, padding, dilation, groups, "none", layouts);
      dy = activation_backward(activation, z, dy);
    }
    torch::autograd::variable_list out(9);
    if (!boo_backward_enabled()) {
      const std::vector<c10::SymInt> zeros(stride.size(), c10::SymInt(0));
      const std::vector<c10::SymInt> bias_sizes{w.sym_size(0)};
      auto [dx, dw, db] = at::convolution_backward_symint(
          dy, x, w, has_bias ? std::optional<c10::SymIntArrayRef>(bias_sizes) : std::nullopt, stride, padding,
          dilation, false, zeros, groups, {need_x, need_w, need_b});
      out[0] = need_x ? dx : at::Tensor();
      out[1] = need_w ? dw : at::Tensor();
      out[2] = need_b ? db : at::Tensor();
      return out;
    }
    c10::List<bool> mask({need_x, need_w, need_b});
    std::vector<at::Tensor> got =
        conv_backward_op().call(dy, x, w, has_bias, stride, padding, dilation, groups, layouts, mask);
    out[0] = need_x ? got[0] : at::Tensor();
    out[1] = need_w ? got[1] : at::Tensor();
    out[2] = need_b ? got[2] : at::Tensor();
    return out;
  }
};

at::Tensor conv_autograd(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias,
                         SymInts stride, SymInts padding, SymInts dilation, c10::SymInt groups,
                         c10::string_view activation, c10::string_view layouts) {
  // Nothing to record (inference, no_grad, a compiled graph's forward): straight to the kernel below
  // autograd. Function::apply would still build a node and save the arguments (several microseconds).
  if (!at::GradMode::is_enabled() ||
      !(x.requires_grad() || w.requires_grad() || (bias.has_value() && bias->defined() && bias->requires_grad()))) {
    at::AutoDispatchBelowADInplaceOrView below;
    return conv_op().call(x, w, bias, stride, padding, dilation, std::move(groups), activation, layouts);
  }
  return ConvFunction::apply(x, w, bias, stride, padding, dilation, std::move(groups), activation, layouts);
}

// ---------------------------------------------------------------------------------------------------
// Batch norm.

bool given(const std::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

// Whether a batch norm's x is read channels-last (boo.ops._norm_layout's rule: PyTorch's channels_last,
// or the channels innermost by the order of the strides; anything else is channels-first, copied).
bool channels_last(const at::Tensor& x) {
  const int64_t rank = x.dim();
  if (x.is_contiguous()) return false;
  if ((rank == 4 && x.is_contiguous(at::MemoryFormat::ChannelsLast)) ||
      (rank == 5 && x.is_contiguous(at::MemoryFormat::ChannelsLast3d)))
    return true;
  c10::SmallVector<int64_t, 5> order(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return x.stride(a) > x.stride(b); });
  if (order[0] != 0 || order[rank - 1] != 1) return false;
  for (int64_t d = 1; d + 1 < rank; ++d)
    if (order[d] != d + 1) return false;
  return true;
}

// `t` in the strides of x's norm layout (channels-first or -last), as boo.ops' results are.
at::Tensor in_norm_layout(const at::Tensor& t, bool last) {
  const int64_t rank = t.dim();
  c10::SmallVector<int64_t, 5> strides(static_cast<size_t>(rank));
  int64_t step = 1;
  auto place = [&](int64_t d) {
    strides[d] = step;
    step *= t.size(d);
  };
  if (last) {
    place(1);
    for (int64_t d = rank - 1; d >= 2; --d) place(d);
    place(0);
  } else {
    for (int64_t d = rank - 1; d >= 0; --d) place(d);
  }
  if (t.strides() == c10::IntArrayRef(strides)) return t;
  return at::empty_strided(t.sizes(), strides, t.options()).copy_(t);
}

constexpr uint8_t kTrainingPass = 1, kInferencePass = 2;  // boo::BatchNormPass

// The launchable of a batch norm forward on x's GPU (boo.ops._batch_norm_forward's signature), or nullptr
// when boo does not run it.
const boo_bridge_launchable* batch_norm_launchable(ReadyCache& cache, const at::Tensor& x, bool training,
                                                   bool running, double momentum, double eps, void* stream,
                                                   Ready& ready) {
  const int64_t rank = x.dim();
  const int32_t dtype = bridge_dtype(x.scalar_type());
  if (rank < 4 || rank > 5 || dtype < 0 || (!training && !running)) return nullptr;
  boo_bridge_batch_norm bn{};
  bn.rank = static_cast<int32_t>(rank);
  bn.dtype = dtype;
  for (int64_t d = 0; d < rank; ++d) bn.x_shape[d] = x.size(d);
  const bool last = channels_last(x);
  std::snprintf(bn.layout, sizeof bn.layout, "%s",
                rank == 4 ? (last ? "NHWC" : "NCHW") : (last ? "NDHWC" : "NCDHW"));
  bn.pass_ = training ? kTrainingPass : kInferencePass;
  bn.save = training ? 1 : 0;
  bn.running = running ? 1 : 0;
  bn.eps = eps;
  // boo.ops.batch_norm_signature's rule: momentum only where the running statistics are updated.
  bn.momentum = training && running ? momentum : 1.0;

  thread_local CallKey key;
  key.ints.clear();
  int64_t eps_bits, momentum_bits;
  std::memcpy(&eps_bits, &bn.eps, sizeof eps_bits);
  std::memcpy(&momentum_bits, &bn.momentum, sizeof momentum_bits);
  key.ints.insert(key.ints.end(), {static_cast<int64_t>(x.get_device()), dtype, rank, bn.pass_, bn.running,
                                   eps_bits, momentum_bits});
  key.ints.insert(key.ints.end(), x.sizes().begin(), x.sizes().end());
  key.text.assign(bn.layout);
  const int device = x.get_device();
  ready = cache.get(key, device, stream, [&](bool capturing, boo_bridge_launchable* out, boo_bridge_status* status) {
    return bridge->batch_norm(&bn, device, capturing ? 1 : 0, out, status);
  });
  return ready.runs ? &ready.launchable : nullptr;
}

// A per-channel parameter as the kernel reads it: float32 [C] (PyTorch's mixed batch norm takes 16-bit
// ones too), or `value` in every channel where there is none.
at::Tensor float_or_full(const std::optional<at::Tensor>& t, int64_t channels, double value, const at::Tensor& x) {
  if (!given(t)) return at::full({channels}, value, x.options().dtype(at::kFloat));
  return t->scalar_type() == at::kFloat ? *t : t->to(at::kFloat);
}

// (y, saved mean, saved inverse std, new running mean, new running variance), the statistics float32 [C]
// and empty where the pass has none: boo.ops._batch_norm_forward's results.
std::vector<at::Tensor> batch_norm_cuda(const at::Tensor& x, const std::optional<at::Tensor>& weight,
                                        const std::optional<at::Tensor>& bias,
                                        const std::optional<at::Tensor>& running_mean,
                                        const std::optional<at::Tensor>& running_var, bool training, double momentum,
                                        double eps) {
  static ReadyCache cache;
  void* stream = c10::cuda::getCurrentCUDAStream(x.get_device()).stream();
  const bool running = given(running_mean) && given(running_var);
  // One running statistic without the other is no call boo runs: the Python kernel raises its error.
  const bool statistics_paired = running || (!given(running_mean) && !given(running_var));
  Ready ready;
  if (const boo_bridge_launchable* l =
          statistics_paired ? batch_norm_launchable(cache, x, training, running, momentum, eps, stream, ready)
                            : nullptr) {
    const int64_t channels = x.size(1);
    const at::Tensor scale = float_or_full(weight, channels, 1.0, x), shift = float_or_full(bias, channels, 0.0, x);
    at::Tensor mean, var;
    if (running) {
      mean = running_mean->scalar_type() == at::kFloat ? *running_mean : running_mean->to(at::kFloat);
      var = running_var->scalar_type() == at::kFloat ? *running_var : running_var->to(at::kFloat);
    }
    if (auto got = launch(*l, {{"x", &x}, {"scale", &scale}, {"bias", &shift},
                               {training ? "running_mean_in" : "estimated_mean", &mean},
                               {training ? "running_variance_in" : "estimated_variance", &var}},
                          x, stream)) {
      std::vector<at::Tensor> out{result(*l, *got, "y")};
      for (const char* name : {"saved_mean", "saved_inv_variance", "running_mean", "running_variance"}) {
        const at::Tensor r = result(*l, *got, name);
        out.push_back(r.defined() ? r.view({channels}) : at::empty({0}, x.options().dtype(at::kFloat)));
      }
      return out;
    }
  }
  return python_kernel(batch_norm_op(), x, weight, bias, running_mean, running_var, training, momentum, eps);
}

// (dx, dweight, dbias) by PyTorch in float32, through the batch statistics in training, through fixed
// (running) statistics in inference: boo.ops._batch_norm_backward_torch.
std::vector<at::Tensor> batch_norm_backward_torch(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& weight,
                                                  const at::Tensor& mean, const at::Tensor& invstd, bool training) {
  const int64_t rank = x.dim(), channels = x.size(1);
  std::vector<int64_t> reduce{0}, bshape(static_cast<size_t>(rank), 1);
  for (int64_t d = 2; d < rank; ++d) reduce.push_back(d);
  bshape[1] = channels;
  const at::Tensor g = dy.to(at::kFloat);
  const at::Tensor xhat = (x.to(at::kFloat) - mean.view(bshape)) * invstd.view(bshape);
  const at::Tensor dbias = g.sum(reduce), dweight = (g * xhat).sum(reduce);
  const at::Tensor scale = (weight.defined() ? invstd * weight.to(at::kFloat) : invstd).view(bshape);
  at::Tensor dx;
  if (training) {
    const double n = static_cast<double>(x.numel() / channels);
    dx = scale * (g - (dbias / n).view(bshape) - xhat * (dweight / n).view(bshape));
  } else {
    dx = scale * g;
  }
  return {in_norm_layout(dx.to(x.scalar_type()), channels_last(x)), dweight, dbias};
}

// batch_norm's autograd: the rules of boo.ops' _batch_norm_setup_context and _batch_norm_backward_rule. The
// statistics are not differentiated; the running statistics are saved in inference (autograd's version
// counter catches a training step overwriting them).
class BatchNormFunction : public torch::autograd::Function<BatchNormFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                                                const std::optional<at::Tensor>& weight,
                                                const std::optional<at::Tensor>& bias,
                                                const std::optional<at::Tensor>& running_mean,
                                                const std::optional<at::Tensor>& running_var, bool training,
                                                double momentum, double eps) {
    std::vector<at::Tensor> out;
    {
      at::AutoDispatchBelowADInplaceOrView below;
      out = batch_norm_op().call(x, weight, bias, running_mean, running_var, training, momentum, eps);
    }
    const at::Tensor w = weight.value_or(at::Tensor());
    if (training) ctx->save_for_backward({x, w, out[1], out[2]});
    else ctx->save_for_backward({x, w, running_mean.value_or(at::Tensor()), running_var.value_or(at::Tensor())});
    ctx->saved_data["training"] = training;
    ctx->saved_data["eps"] = eps;
    ctx->saved_data["has_weight"] = given(weight);
    ctx->saved_data["bias_dtype"] = given(bias) ? static_cast<int64_t>(bias->scalar_type()) : int64_t{-1};
    ctx->mark_non_differentiable({out[1], out[2], out[3], out[4]});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &weight = saved[1], &a = saved[2], &b = saved[3];
    const bool training = ctx->saved_data["training"].toBool(), has_weight = ctx->saved_data["has_weight"].toBool();
    const double eps = ctx->saved_data["eps"].toDouble();
    const int64_t bias_dtype = ctx->saved_data["bias_dtype"].toInt();
    // The node's edges are the tensor inputs given, in order: x, then the weight and the bias where present.
    const bool need_x = ctx->needs_input_grad(0), need_w = has_weight && ctx->needs_input_grad(1),
               need_b = bias_dtype >= 0 && ctx->needs_input_grad(has_weight ? 2 : 1);
    torch::autograd::variable_list out(8);
    if (!need_x && !need_w && !need_b) return out;
    std::vector<at::Tensor> got;
    if (training && boo_backward_enabled()) {
      got = batch_norm_backward_op().call(grads[0], x, has_weight ? std::optional<at::Tensor>(weight) : std::nullopt,
                                          a, b, eps, c10::List<bool>({need_x, need_w, need_b}));
    } else if (training) {
      got = batch_norm_backward_torch(grads[0], x, weight, a, b, true);
    } else {
      // boo's backward kernels (MIOpen's) are the training one's: with fixed statistics dx is
      // dy * weight * invstd, PyTorch's elementwise ops.
      got = batch_norm_backward_torch(grads[0], x, weight, a.to(at::kFloat), at::rsqrt(b.to(at::kFloat) + eps), false);
    }
    out[0] = need_x ? got[0] : at::Tensor();
    out[1] = need_w ? got[1].to(weight.scalar_type()) : at::Tensor();
    out[2] = need_b ? got[2].to(static_cast<at::ScalarType>(bias_dtype)) : at::Tensor();
    return out;
  }
};

std::vector<at::Tensor> batch_norm_autograd(const at::Tensor& x, const std::optional<at::Tensor>& weight,
                                            const std::optional<at::Tensor>& bias,
                                            const std::optional<at::Tensor>& running_mean,
                                            const std::optional<at::Tensor>& running_var, bool training,
                                            double momentum, double eps) {
  // Nothing to record: straight to the kernel below autograd (see conv_autograd).
  if (!at::GradMode::is_enabled() || !(x.requires_grad() || (given(weight) && weight->requires_grad()) ||
                                       (given(bias) && bias->requires_grad()))) {
    at::AutoDispatchBelowADInplaceOrView below;
    return batch_norm_op().call(x, weight, bias, running_mean, running_var, training, momentum, eps);
  }
  return BatchNormFunction::apply(x, weight, bias, running_mean, running_var, training, momentum, eps);
}

}  // namespace

// The schemas are those boo.ops' torch.library.custom_op registration infers from its Python
// signatures (tests/python/test_torch_library.py compares them).
TORCH_LIBRARY(boo, m) {
  // Fake (meta) implementations, the CPU kernels and the norms' kernels are boo.ops'.
  m.set_python_module("boo.ops");
  m.def("conv(Tensor x, Tensor w, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, SymInt groups, "
        "str activation, str layouts) -> Tensor");
  m.def("conv_residual(Tensor x, Tensor w, Tensor? bias, Tensor residual, SymInt[] stride, SymInt[] padding, "
        "SymInt[] dilation, SymInt groups, str activation, str layouts) -> Tensor");
  m.def("conv_backward(Tensor dy, Tensor x, Tensor w, bool has_bias, SymInt[] stride, SymInt[] padding, "
        "SymInt[] dilation, SymInt groups, str layouts, bool[] output_mask) -> Tensor[]");
  m.def("layer_norm(Tensor x, SymInt normalized_ndim, Tensor? weight, Tensor? bias, float eps) -> Tensor[]");
  m.def("layer_norm_backward(Tensor dy, Tensor x, SymInt normalized_ndim, Tensor? weight, bool has_bias, "
        "Tensor mean, Tensor rstd, float eps, bool[] output_mask) -> Tensor[]");
  m.def("rms_norm(Tensor x, SymInt normalized_ndim, Tensor? weight, float eps) -> Tensor[]");
  m.def("rms_norm_backward(Tensor dy, Tensor x, SymInt normalized_ndim, Tensor? weight, Tensor rstd, float eps) "
        "-> Tensor[]");
  m.def("batch_norm(Tensor x, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
        "bool training, float momentum, float eps) -> Tensor[]");
  m.def("batch_norm_backward(Tensor dy, Tensor x, Tensor? weight, Tensor save_mean, Tensor save_invstd, float eps, "
        "bool[] output_mask) -> Tensor[]");
  m.def("group_norm(Tensor x, SymInt num_groups, Tensor? weight, Tensor? bias, float eps) -> Tensor[]");
  m.def("group_norm_backward(Tensor dy, Tensor x, SymInt num_groups, Tensor? weight, bool affine, Tensor mean, "
        "Tensor rstd, float eps, bool[] output_mask) -> Tensor[]");
  m.def("matmul(Tensor a, Tensor b) -> Tensor");
}

TORCH_LIBRARY_IMPL(boo, CUDA, m) {
  m.impl("conv", TORCH_FN(conv_cuda));
  m.impl("conv_backward", TORCH_FN(conv_backward_cuda));
  m.impl("batch_norm", TORCH_FN(batch_norm_cuda));
}

TORCH_LIBRARY_IMPL(boo, Autograd, m) {
  m.impl("conv", TORCH_FN(conv_autograd));
  m.impl("batch_norm", TORCH_FN(batch_norm_autograd));
}

// Called by boo.ops (ctypes) right after loading, before any op runs.
extern "C" {

// Hands the library boo._C's interface; 0 when its version is this library's, else the version it has.
__attribute__((visibility("default"))) uint32_t boo_torch_init(const boo_bridge* b) {
  if (b == nullptr || b->version != BOO_TORCH_BRIDGE_VERSION) return b == nullptr ? 0xffffffffu : b->version;
  bridge = b;
  return 0;
}

// enable_backward()/disable_backward() (1, 0), or -1: BOO_USE_BACKWARD_KERNELS decides.
__attribute__((visibility("default"))) void boo_torch_set_backward_kernels(int mode) { backward_kernels = mode; }

// The CUDA kernels' launches and copied inputs so far (see `launches`): out[0], out[1].
__attribute__((visibility("default"))) void boo_torch_counters(uint64_t* out) {
  out[0] = launches.load(std::memory_order_relaxed);
  out[1] = copied_inputs.load(std::memory_order_relaxed);
}

// The PyTorch version this library was built against (boo.ops loads it only into that version).
__attribute__((visibility("default"))) const char* boo_torch_built_for() { return BOO_TORCH_VERSION; }
}
