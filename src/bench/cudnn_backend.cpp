// boo: the cudnn backend — the same signatures through cuDNN 9's graph
// (backend) API, as the measured baseline. For each signature the engine
// configurations cuDNN's heuristics offer are built and timed once, best ranked
// first, and the fastest is kept: the baseline is cuDNN at its best. Some engines
// (the norm graphs' runtime-fused ones) compile when their plan is built, seconds
// each, so once one plan runs the search stops at kSearchBudget. The choice (engine and
// knobs) is remembered in the cache folder by cuDNN version, device and graph
// (bench/vendor_plans.hpp), so the next run builds that one plan and times
// nothing else. A plan cuDNN can serialize (its runtime-compiled engines: the
// norm graphs') is remembered whole as well, so the next run loads it instead
// of compiling it again.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <span>

#include "bench/backend.hpp"
#include "bench/cudnn_norm_graphs.hpp"
#include "bench/launch_timer.hpp"
#include "bench/vendor_plans.hpp"
#include "boo/batchnorm.hpp"
#include "boo/conv.hpp"
#include "boo/groupnorm.hpp"
#include "boo/norm.hpp"
#include "boo/runtime.hpp"
#include "cuda/cudnn_api.hpp"

namespace boo::bench {
namespace {

using cuda::CudnnApi;

#define BOO_CUDNN_RETURN_IF_ERROR(api, call)                                         \
  do {                                                                               \
    cudnnStatus_t boo_cudnn_status_ = (api).call;                                    \
    if (boo_cudnn_status_ != CUDNN_STATUS_SUCCESS)                                    \
      return ::boo::cuda::cudnn_status((api), boo_cudnn_status_, #call);             \
  } while (0)

/// An owned backend descriptor.
class Desc {
 public:
  Desc() = default;
  Desc(const CudnnApi* api, cudnnBackendDescriptor_t d) : api_(api), d_(d) {}
  Desc(Desc&& o) noexcept : api_(o.api_), d_(std::exchange(o.d_, nullptr)) {}
  Desc& operator=(Desc&& o) noexcept {
    if (this != &o) {
      reset();
      api_ = o.api_;
      d_ = std::exchange(o.d_, nullptr);
    }
    return *this;
  }
  ~Desc() { reset(); }

  static Result<Desc> make(const CudnnApi& api, cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t d = nullptr;
    BOO_CUDNN_RETURN_IF_ERROR(api, cudnnBackendCreateDescriptor(type, &d));
    return Desc(&api, d);
  }
  Status set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const void* value) {
    BOO_CUDNN_RETURN_IF_ERROR(*api_, cudnnBackendSetAttribute(d_, name, type, count, value));
    return ok_status();
  }
  Status finalize() {
    BOO_CUDNN_RETURN_IF_ERROR(*api_, cudnnBackendFinalize(d_));
    return ok_status();
  }
  cudnnBackendDescriptor_t get() const { return d_; }

 private:
  void reset() {
    if (d_) api_->cudnnBackendDestroyDescriptor(d_);
    d_ = nullptr;
  }
  const CudnnApi* api_ = nullptr;
  cudnnBackendDescriptor_t d_ = nullptr;
};

cudnnDataType_t cudnn_type(DType dtype) {
  switch (dtype) {
    case DType::kF16: return CUDNN_DATA_HALF;
    case DType::kBF16: return CUDNN_DATA_BFLOAT16;
    case DType::kF64: return CUDNN_DATA_DOUBLE;
    default: return CUDNN_DATA_FLOAT;
  }
}

// cuDNN convolutions need at least two spatial dims: a 1-D tensor gets a unit H.
void promote_1d(std::vector<int64_t>& dims, std::vector<int64_t>& strides) {
  if (dims.size() != 3) return;
  dims.insert(dims.begin() + 2, 1);
  strides.insert(strides.begin() + 2, strides[2] * dims[3]);
}

// Device pointers of a graph's tensors, by tensor name.
using Pointers = TensorAddresses;

/// One cuDNN graph with its chosen plan and the uids of its tensors, or one
/// call of cuDNN's legacy API (`legacy` set: it runs instead of a plan).
struct Graph {
  std::vector<Desc> keep;  // every descriptor the plan refers to
  Desc plan;
  std::string engine;      // "engine <global index>", or the legacy call's name
  int64_t workspace_bytes = 0;
  // (uid, which tensor): the variant pack binds args/results by name.
  std::vector<std::pair<int64_t, std::string>> tensors;
  // A norm graph's by-value float32 scalars (kCudnnEpsilon, kCudnnMomentum), bound by name.
  std::map<std::string, float> scalars;
  std::function<Status(const Pointers&)> legacy;
  // (result, argument): results the call updates in place, copied from their inputs before it first runs.
  std::vector<std::pair<std::string, std::string>> initial_copies;
};

class GraphBuilder {
 public:
  GraphBuilder(const CudnnApi& api, cudnnHandle_t handle) : api_(api), handle_(handle) {}

  /// A tensor descriptor for `spec` (virtual tensors are the intermediates of
  /// a fused graph; a by-value tensor is a host scalar, such as epsilon).
  Result<int64_t> tensor(Graph& g, const TensorSpec& spec, bool is_virtual, DType dtype, bool by_value = false) {
    std::vector<int64_t> dims = spec.shape, strides = spec.strides;
    promote_1d(dims, strides);
    BOO_ASSIGN_OR_RETURN(Desc d, Desc::make(api_, CUDNN_BACKEND_TENSOR_DESCRIPTOR));
    const int64_t uid = next_uid_++;
    const cudnnDataType_t type = cudnn_type(dtype);
    const int64_t alignment = 16;
    const bool virt = is_virtual;
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type));
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, static_cast<int64_t>(dims.size()), dims.data()));
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, static_cast<int64_t>(strides.size()), strides.data()));
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment));
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt));
    if (by_value) BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value));
    BOO_RETURN_IF_ERROR(d.finalize());
    descs_[uid] = d.get();
    g.keep.push_back(std::move(d));
    if (!is_virtual) g.tensors.emplace_back(uid, spec.name);
    return uid;
  }

  cudnnBackendDescriptor_t desc(int64_t uid) const { return descs_.at(uid); }

  Result<cudnnBackendDescriptor_t> conv_desc(Graph& g, const ConvSignature& sig) {
    BOO_ASSIGN_OR_RETURN(Desc d, Desc::make(api_, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
    std::vector<int64_t> stride = sig.stride, pad = sig.padding, dil = sig.dilation;
    if (sig.spatial_dims == 1) {
      stride.insert(stride.begin(), 1);
      pad.insert(pad.begin(), 0);
      dil.insert(dil.begin(), 1);
    }
    const int64_t dims = static_cast<int64_t>(stride.size());
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute));
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims));
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dims, dil.data()));
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, dims, stride.data()));
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, dims, pad.data()));
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, dims, pad.data()));
    BOO_RETURN_IF_ERROR(d.finalize());
    cudnnBackendDescriptor_t raw = d.get();
    g.keep.push_back(std::move(d));
    return raw;
  }

  // kind: forward (x, w -> y), data (dy, w -> dx), filter (x, dy -> dw), in cuDNN's regular-conv terms.
  Result<cudnnBackendDescriptor_t> conv_op(Graph& g, cudnnBackendDescriptorType_t kind, cudnnBackendDescriptor_t conv,
                                           int64_t x, int64_t w, int64_t y) {
    BOO_ASSIGN_OR_RETURN(Desc d, Desc::make(api_, kind));
    const float alpha = 1.f, beta = 0.f;
    cudnnBackendDescriptor_t dx = desc(x), dw = desc(w), dy = desc(y);
    if (kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR) {
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dx));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dw));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dy));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
    } else if (kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR) {
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dx));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dw));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dy));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
    } else {
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dx));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dw));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dy));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
      BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
    }
    BOO_RETURN_IF_ERROR(d.finalize());
    cudnnBackendDescriptor_t raw = d.get();
    g.keep.push_back(std::move(d));
    return raw;
  }

  /// y = mode(x[, b]) elementwise (b broadcast), float math.
  Result<cudnnBackendDescriptor_t> pointwise(Graph& g, cudnnPointwiseMode_t mode, int64_t x, int64_t b, int64_t y,
                                             const Activation* act = nullptr) {
    BOO_ASSIGN_OR_RETURN(Desc pw, Desc::make(api_, CUDNN_BACKEND_POINTWISE_DESCRIPTOR));
    const cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    BOO_RETURN_IF_ERROR(pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode));
    BOO_RETURN_IF_ERROR(pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec));
    if (act && act->kind == Activation::Kind::kLeakyRelu) {
      const double slope = act->alpha;
      BOO_RETURN_IF_ERROR(pw.set(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_DOUBLE, 1, &slope));
    }
    if (act && act->kind == Activation::Kind::kClamp) {
      const double lo = act->lo, hi = act->hi;
      BOO_RETURN_IF_ERROR(pw.set(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_TYPE_DOUBLE, 1, &lo));
      BOO_RETURN_IF_ERROR(pw.set(CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_DOUBLE, 1, &hi));
    }
    BOO_RETURN_IF_ERROR(pw.finalize());
    BOO_ASSIGN_OR_RETURN(Desc op, Desc::make(api_, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR));
    cudnnBackendDescriptor_t pwd = pw.get(), xd = desc(x), yd = desc(y);
    BOO_RETURN_IF_ERROR(op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pwd));
    BOO_RETURN_IF_ERROR(op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xd));
    if (b >= 0) {
      cudnnBackendDescriptor_t bd = desc(b);
      BOO_RETURN_IF_ERROR(op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &bd));
    }
    BOO_RETURN_IF_ERROR(op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yd));
    BOO_RETURN_IF_ERROR(op.finalize());
    cudnnBackendDescriptor_t raw = op.get();
    g.keep.push_back(std::move(pw));
    g.keep.push_back(std::move(op));
    return raw;
  }

  /// y = sum of x over the dims where y has extent 1.
  Result<cudnnBackendDescriptor_t> reduction_sum(Graph& g, int64_t x, int64_t y) {
    BOO_ASSIGN_OR_RETURN(Desc rd, Desc::make(api_, CUDNN_BACKEND_REDUCTION_DESCRIPTOR));
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    const cudnnReduceTensorOp_t mode = CUDNN_REDUCE_TENSOR_ADD;
    BOO_RETURN_IF_ERROR(rd.set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute));
    BOO_RETURN_IF_ERROR(rd.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode));
    BOO_RETURN_IF_ERROR(rd.finalize());
    BOO_ASSIGN_OR_RETURN(Desc op, Desc::make(api_, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR));
    cudnnBackendDescriptor_t rdd = rd.get(), xd = desc(x), yd = desc(y);
    BOO_RETURN_IF_ERROR(op.set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rdd));
    BOO_RETURN_IF_ERROR(op.set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xd));
    BOO_RETURN_IF_ERROR(op.set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yd));
    BOO_RETURN_IF_ERROR(op.finalize());
    cudnnBackendDescriptor_t raw = op.get();
    g.keep.push_back(std::move(rd));
    g.keep.push_back(std::move(op));
    return raw;
  }

  /// Binds an operation's tensor attributes (uids; -1: absent), finalizes it
  /// and keeps it alive with the graph.
  Result<cudnnBackendDescriptor_t> finish_operation(
      Graph& g, Desc op, std::span<const std::pair<cudnnBackendAttributeName_t, int64_t>> tensors) {
    for (const auto& [attr, uid] : tensors) {
      if (uid < 0) continue;
      cudnnBackendDescriptor_t d = desc(uid);
      BOO_RETURN_IF_ERROR(op.set(attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d));
    }
    BOO_RETURN_IF_ERROR(op.finalize());
    cudnnBackendDescriptor_t raw = op.get();
    g.keep.push_back(std::move(op));
    return raw;
  }

  /// The uids of a norm operation's tensors (-1: absent), as CudnnNormGraph names them.
  struct NormUids {
    int64_t x = -1, scale = -1, bias = -1, epsilon = -1, mean = -1, inv_variance = -1;
    int64_t momentum = -1, running_mean_in = -1, running_var_in = -1, running_mean = -1, running_var = -1;
    int64_t y = -1, dy = -1, dscale = -1, dbias = -1, dx = -1;
  };

  /// A normalization forward in its training phase (the statistics are outputs).
  Result<cudnnBackendDescriptor_t> norm_forward(Graph& g, cudnnBackendNormMode_t mode, const NormUids& u) {
    BOO_ASSIGN_OR_RETURN(Desc op, Desc::make(api_, CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR));
    const cudnnBackendNormFwdPhase_t phase = CUDNN_NORM_FWD_TRAINING;
    BOO_RETURN_IF_ERROR(op.set(CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode));
    BOO_RETURN_IF_ERROR(op.set(CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1, &phase));
    const std::pair<cudnnBackendAttributeName_t, int64_t> tensors[] = {
        {CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, u.x},
        {CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, u.mean},
        {CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, u.inv_variance},
        {CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, u.scale},
        {CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, u.bias},
        {CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, u.epsilon},
        {CUDNN_ATTR_OPERATION_NORM_FWD_EXP_AVG_FACTOR_DESC, u.momentum},
        {CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC, u.running_mean_in},
        {CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC, u.running_var_in},
        {CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC, u.running_mean},
        {CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC, u.running_var},
        {CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, u.y}};
    return finish_operation(g, std::move(op), tensors);
  }

  /// A normalization backward from the saved statistics.
  Result<cudnnBackendDescriptor_t> norm_backward(Graph& g, cudnnBackendNormMode_t mode, const NormUids& u) {
    BOO_ASSIGN_OR_RETURN(Desc op, Desc::make(api_, CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR));
    BOO_RETURN_IF_ERROR(op.set(CUDNN_ATTR_OPERATION_NORM_BWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode));
    const std::pair<cudnnBackendAttributeName_t, int64_t> tensors[] = {
        {CUDNN_ATTR_OPERATION_NORM_BWD_XDESC, u.x},
        {CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC, u.mean},
        {CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC, u.inv_variance},
        {CUDNN_ATTR_OPERATION_NORM_BWD_DYDESC, u.dy},
        {CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC, u.scale},
        {CUDNN_ATTR_OPERATION_NORM_BWD_EPSILON_DESC, u.epsilon},
        {CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC, u.dscale},
        {CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC, u.dbias},
        {CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC, u.dx}};
    return finish_operation(g, std::move(op), tensors);
  }

  Result<Desc> operation_graph(Graph& g, const std::vector<cudnnBackendDescriptor_t>& ops) {
    BOO_ASSIGN_OR_RETURN(Desc d, Desc::make(api_, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                              static_cast<int64_t>(ops.size()), ops.data()));
    BOO_RETURN_IF_ERROR(d.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_));
    BOO_RETURN_IF_ERROR(d.finalize());
    (void)g;
    return d;
  }

 private:
  const CudnnApi& api_;
  cudnnHandle_t handle_;
  int64_t next_uid_ = 1;
  std::map<int64_t, cudnnBackendDescriptor_t> descs_;
};

class CudnnBackend final : public Backend {
 public:
  CudnnBackend(Runtime& rt, const TimingOptions& timing, const CudnnApi& api, cudnnHandle_t handle)
      : rt_(rt),
        timing_(timing),
        api_(api),
        handle_(handle),
        plans_(timing.vendor_plan_dir, "cudnn"),
        serialized_plans_(timing.vendor_plan_dir, "cudnn-serialized"),
        plan_context_(vendor_plan_context("cudnn " + std::to_string(api.cudnnGetVersion()), rt.device())) {}
  ~CudnnBackend() override {
    graphs_.clear();
    api_.cudnnDestroy(handle_);
  }

  std::string name() const override { return "cudnn"; }

  Result<BackendRun> run(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                         const RunOptions& run) override {
    const auto* conv = dynamic_cast<const ConvSignature*>(&sig);
    const bool norm = dynamic_cast<const NormSignature*>(&sig) || dynamic_cast<const BatchNormSignature*>(&sig) ||
                      dynamic_cast<const GroupNormSignature*>(&sig);
    if (!conv && !norm)
      return unimplemented("the cudnn backend runs conv and norm signatures (" + std::string(sig.op_name()) +
                           " is none)");
    // A norm's graphs, or why cuDNN's graph API has none (then batch norm tries the legacy call).
    const Result<CudnnNormGraphs> norm_graphs =
        conv ? Result<CudnnNormGraphs>(CudnnNormGraphs{}) : cudnn_norm_graphs(sig);
    if (!norm_graphs.ok() && !dynamic_cast<const BatchNormSignature*>(&sig)) return norm_graphs.status();
    BOO_CUDNN_RETURN_IF_ERROR(api_, cudnnSetStream(handle_, static_cast<cudaStream_t>(rt_.stream())));

    BackendRun out;
    out.input_sets = run.time ? timed_input_sets(rt_, timing_, args) : 1;
    BOO_ASSIGN_OR_RETURN(BackendTensors tensors, upload_backend_tensors(rt_, sig, args, out.input_sets));
    std::vector<Pointers>& sets = tensors.sets;
    // Statistics cuDNN writes that the signature does not keep: one buffer each, shared by every input set.
    std::vector<DeviceBuffer> scratch;
    if (norm_graphs.ok())
      for (const TensorSpec& spec : norm_graphs->scratch) {
        BOO_ASSIGN_OR_RETURN(DeviceBuffer buf, rt_.allocate(spec.storage_bytes()));
        for (Pointers& set : sets) set[spec.name] = buf.data();
        scratch.push_back(std::move(buf));
      }
    // The first run of a signature chooses its plans (remembered, or searched); later runs reuse them.
    const auto tuning_start = std::chrono::steady_clock::now();
    BOO_ASSIGN_OR_RETURN(std::vector<Graph>* graphs,
                         conv ? graphs_for(*conv, sets[0]) : norm_graphs_for(sig, norm_graphs, sets[0]));
    out.vendor_tuning_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tuning_start).count();
    int64_t workspace_bytes = 0;
    for (const Graph& g : *graphs) workspace_bytes = std::max(workspace_bytes, g.workspace_bytes);
    BOO_ASSIGN_OR_RETURN(DeviceBuffer workspace, rt_.allocate(static_cast<size_t>(workspace_bytes)));
    // Results a call updates in place (the legacy batch norm's running statistics) start as their inputs.
    for (const Graph& g : *graphs)
      for (const auto& [result, argument] : g.initial_copies)
        BOO_RETURN_IF_ERROR(copy_argument(sig, args, tensors, result, argument));
    auto launch = [&](int64_t i) -> Status {
      for (Graph& g : *graphs)
        BOO_RETURN_IF_ERROR(execute(g, sets[static_cast<size_t>(i % out.input_sets)], workspace));
      return ok_status();
    };
    BOO_RETURN_IF_ERROR(launch(0));
    out.device = "cuda:" + std::to_string(rt_.device().ordinal);
    std::string engines;
    for (const Graph& g : *graphs) engines += (engines.empty() ? "" : "+") + g.engine;
    out.implementation = "cudnn:" + std::string(sig.op_name()) + " [" + engines + "]";
    BOO_RETURN_IF_ERROR(download_backend_results(rt_, sig, tensors, out));
    if (run.time) BOO_RETURN_IF_ERROR(time_backend_launches(rt_, timing_, run, launch, out.implementation, out));
    BOO_RETURN_IF_ERROR(rt_.synchronize());
    return out;
  }

 private:
  Status execute(Graph& g, const Pointers& buffers, const DeviceBuffer& workspace) {
    if (g.legacy) return g.legacy(buffers);
    std::vector<int64_t> uids;
    std::vector<void*> pointers;
    for (const auto& [uid, name] : g.tensors) {
      uids.push_back(uid);
      if (auto scalar = g.scalars.find(name); scalar != g.scalars.end()) {
        pointers.push_back(&scalar->second);
      } else {
        BOO_ASSIGN_OR_RETURN(void* p, pointer(buffers, name));
        pointers.push_back(p);
      }
    }
    BOO_ASSIGN_OR_RETURN(Desc pack, Desc::make(api_, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR));
    void* ws = workspace.data();
    BOO_RETURN_IF_ERROR(pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()), uids.data()));
    BOO_RETURN_IF_ERROR(pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                                 static_cast<int64_t>(pointers.size()), pointers.data()));
    BOO_RETURN_IF_ERROR(pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws));
    BOO_RETURN_IF_ERROR(pack.finalize());
    BOO_CUDNN_RETURN_IF_ERROR(api_, cudnnBackendExecute(handle_, g.plan.get(), pack.get()));
    return ok_status();
  }

  // Builds the graphs of a signature (one per direction) and picks each one's fastest plan.
  Result<std::vector<Graph>*> graphs_for(const ConvSignature& sig, const Pointers& buffers) {
    const std::string key = sig.command();
    if (auto it = graphs_.find(key); it != graphs_.end()) return &it->second;
    std::vector<Graph> graphs;
    const cudnnBackendDescriptorType_t fwd = CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR;
    const cudnnBackendDescriptorType_t bwd_data = CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR;
    const cudnnBackendDescriptorType_t bwd_filter = CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR;
    // A transposed conv is cuDNN's regular conv with the roles swapped: its
    // forward is a backward-data, its backward-data a forward.
    const TensorSpec x = sig.x_spec("x"), w = sig.w_spec("w"), y = sig.y_spec("y");
    auto renamed = [](TensorSpec s, const char* name) {
      s.name = name;
      return s;
    };
    if (sig.directions & kConvForward) {
      Graph g;
      GraphBuilder b(api_, handle_);
      BOO_ASSIGN_OR_RETURN(cudnnBackendDescriptor_t conv, b.conv_desc(g, sig));
      BOO_ASSIGN_OR_RETURN(int64_t xu, b.tensor(g, x, false, sig.dtype));
      BOO_ASSIGN_OR_RETURN(int64_t wu, b.tensor(g, w, false, sig.dtype));
      // conv -> [+ bias] -> [+ z] -> [activation] -> y (cuDNN's conv-bias-add-act): every stage but
      // the last writes a virtual fp32 tensor.
      const bool activated = sig.activation.kind != Activation::Kind::kNone;
      const bool fused = sig.bias || sig.residual || activated;
      BOO_ASSIGN_OR_RETURN(int64_t conv_out, b.tensor(g, y, fused, fused ? DType::kF32 : sig.dtype));
      std::vector<cudnnBackendDescriptor_t> ops;
      BOO_ASSIGN_OR_RETURN(cudnnBackendDescriptor_t op, sig.transposed ? b.conv_op(g, bwd_data, conv, conv_out, wu, xu)
                                                                       : b.conv_op(g, fwd, conv, xu, wu, conv_out));
      ops.push_back(op);
      int64_t last = conv_out;
      if (sig.bias) {
        TensorSpec bias_spec = sig.bias_spec("b");
        bias_spec.shape = std::vector<int64_t>(y.shape.size(), 1);
        bias_spec.shape[1] = sig.k;
        bias_spec.strides = contiguous_strides(bias_spec.shape);
        BOO_ASSIGN_OR_RETURN(int64_t bu, b.tensor(g, bias_spec, false, sig.dtype));
        const bool more = sig.residual || activated;
        BOO_ASSIGN_OR_RETURN(int64_t sum, b.tensor(g, more ? renamed(y, "y_biased") : y, more, more ? DType::kF32 : sig.dtype));
        BOO_ASSIGN_OR_RETURN(cudnnBackendDescriptor_t add, b.pointwise(g, CUDNN_POINTWISE_ADD, last, bu, sum));
        ops.push_back(add);
        last = sum;
      }
      if (sig.residual) {
        BOO_ASSIGN_OR_RETURN(int64_t zu, b.tensor(g, sig.y_spec("z"), false, sig.dtype));
        BOO_ASSIGN_OR_RETURN(int64_t sum, b.tensor(g, activated ? renamed(y, "y_residual") : y, activated,
                                                   activated ? DType::kF32 : sig.dtype));
        BOO_ASSIGN_OR_RETURN(cudnnBackendDescriptor_t add, b.pointwise(g, CUDNN_POINTWISE_ADD, last, zu, sum));
        ops.push_back(add);
        last = sum;
      }
      if (sig.activation.kind != Activation::Kind::kNone) {
        BOO_ASSIGN_OR_RETURN(cudnnPointwiseMode_t mode, activation_mode(sig.activation));
        BOO_ASSIGN_OR_RETURN(int64_t out, b.tensor(g, y, false, sig.dtype));
        BOO_ASSIGN_OR_RETURN(cudnnBackendDescriptor_t act, b.pointwise(g, mode, last, -1, out, &sig.activation));
        ops.push_back(act);
      }
      BOO_RETURN_IF_ERROR(finish(g, b, ops, ieee_fp32(sig), buffers, plan_record(sig, "forward", ieee_fp32(sig))));
      graphs.push_back(std::move(g));
    }
    if (sig.directions & kConvBackwardData) {
      Graph g;
      GraphBuilder b(api_, handle_);
      BOO_ASSIGN_OR_RETURN(cudnnBackendDescriptor_t conv, b.conv_desc(g, sig));
      BOO_ASSIGN_OR_RETURN(int64_t dyu, b.tensor(g, renamed(y, "dy"), false, sig.dtype));
      BOO_ASSIGN_OR_RETURN(int64_t wu, b.tensor(g, w, false, sig.dtype));
      BOO_ASSIGN_OR_RETURN(int64_t dxu, b.tensor(g, renamed(x, "dx"), false, sig.dtype));
      BOO_ASSIGN_OR_RETURN(cudnnBackendDescriptor_t op, sig.transposed ? b.conv_op(g, fwd, conv, dyu, wu, dxu)
                                                                       : b.conv_op(g, bwd_data, conv, dxu, wu, dyu));
      BOO_RETURN_IF_ERROR(finish(g, b, {op}, ieee_fp32(sig), buffers, plan_record(sig, "backward-data", ieee_fp32(sig))));
      graphs.push_back(std::move(g));
    }
    if (sig.directions & kConvBackwardWeight) {
      Graph g;
      GraphBuilder b(api_, handle_);
      BOO_ASSIGN_OR_RETURN(cudnnBackendDescriptor_t conv, b.conv_desc(g, sig));
      BOO_ASSIGN_OR_RETURN(int64_t xu, b.tensor(g, x, false, sig.dtype));
      BOO_ASSIGN_OR_RETURN(int64_t dyu, b.tensor(g, renamed(y, "dy"), false, sig.dtype));
      BOO_ASSIGN_OR_RETURN(int64_t dwu, b.tensor(g, renamed(w, "dw"), false, sig.dtype));
      BOO_ASSIGN_OR_RETURN(cudnnBackendDescriptor_t op, sig.transposed ? b.conv_op(g, bwd_filter, conv, dyu, dwu, xu)
                                                                       : b.conv_op(g, bwd_filter, conv, xu, dwu, dyu));
      BOO_RETURN_IF_ERROR(finish(g, b, {op}, ieee_fp32(sig), buffers, plan_record(sig, "backward-weight", ieee_fp32(sig))));
      graphs.push_back(std::move(g));
    }
    if (sig.directions & kConvBackwardBias) {
      Graph g;
      GraphBuilder b(api_, handle_);
      BOO_ASSIGN_OR_RETURN(int64_t dyu, b.tensor(g, renamed(y, "dy"), false, sig.dtype));
      TensorSpec db{"db", std::vector<int64_t>(y.shape.size(), 1), {}, sig.dtype, ""};
      db.shape[1] = sig.k;
      db.strides = contiguous_strides(db.shape);
      BOO_ASSIGN_OR_RETURN(int64_t dbu, b.tensor(g, db, false, sig.dtype));
      BOO_ASSIGN_OR_RETURN(cudnnBackendDescriptor_t op, b.reduction_sum(g, dyu, dbu));
      BOO_RETURN_IF_ERROR(finish(g, b, {op}, ieee_fp32(sig), buffers, plan_record(sig, "backward-bias", ieee_fp32(sig))));
      graphs.push_back(std::move(g));
    }
    return &graphs_.emplace(key, std::move(graphs)).first->second;
  }

  static bool ieee_fp32(const ConvSignature& sig) { return sig.dtype == DType::kF32 && !sig.fp32_tf32; }

  // The address bound to a tensor name; "" is a null pointer (a tensor a legacy call goes without).
  static Result<void*> pointer(const Pointers& buffers, const std::string& name) {
    if (name.empty()) return static_cast<void*>(nullptr);
    auto it = buffers.find(name);
    if (it == buffers.end()) return internal_error("the cudnn backend has no buffer for tensor '" + name + "'");
    return it->second;
  }

  // Copies argument `argument` (host) into result `result` on the device.
  Status copy_argument(const OpSignature& sig, const std::vector<base::HostTensor>& args, const BackendTensors& tensors,
                       const std::string& result, const std::string& argument) {
    const std::vector<TensorSpec> arg_specs = sig.arguments(), result_specs = sig.results();
    auto index_of = [](const std::vector<TensorSpec>& specs, const std::string& name) {
      auto named = [&](const TensorSpec& t) { return t.name == name; };
      return static_cast<size_t>(std::find_if(specs.begin(), specs.end(), named) - specs.begin());
    };
    const size_t a = index_of(arg_specs, argument), r = index_of(result_specs, result);
    if (a >= args.size() || r >= tensors.results.size())
      return internal_error("the cudnn backend cannot start result '" + result + "' as argument '" + argument + "'");
    return rt_.copy_to_device(tensors.results[r], args[a].data(), args[a].size_bytes());
  }

  // The graphs of a norm signature (cudnn_norm_graphs: each a norm operation,
  // fed by a pointwise add for add-layernorm) with each one's fastest plan;
  // a batch norm cuDNN's graphs decline runs on the legacy call. What cuDNN
  // declines, whether by its reason or by a BAD_PARAM, is UNIMPLEMENTED.
  Result<std::vector<Graph>*> norm_graphs_for(const OpSignature& sig, const Result<CudnnNormGraphs>& plan,
                                              const Pointers& buffers) {
    const std::string key = sig.command();
    if (auto it = graphs_.find(key); it != graphs_.end()) return &it->second;
    Status graph_status = plan.status();
    if (plan.ok()) {
      std::vector<Graph> graphs;
      for (const CudnnNormGraph& n : plan->graphs) {
        Graph g;
        graph_status = build_norm_graph(sig, *plan, n, buffers, g);
        if (!graph_status.ok()) break;
        graphs.push_back(std::move(g));
      }
      if (graph_status.ok()) return &graphs_.emplace(key, std::move(graphs)).first->second;
      if (graph_status.code() != StatusCode::kUnimplemented && graph_status.code() != StatusCode::kInvalidArgument)
        return graph_status;
    }
    const std::string graph_reason = graph_status.message();
    const auto* batch = dynamic_cast<const BatchNormSignature*>(&sig);
    if (!batch) return unimplemented("cuDNN declines this norm: " + graph_reason);
    Result<Graph> legacy = legacy_batch_norm(*batch, buffers);
    if (!legacy.ok())
      return unimplemented("cuDNN declines this batch norm: its graph API: " + graph_reason +
                           "; its legacy API: " + legacy.status().message());
    std::vector<Graph> graphs;
    graphs.push_back(std::move(*legacy));
    return &graphs_.emplace(key, std::move(graphs)).first->second;
  }

  // One norm graph into g, with its fastest plan.
  Status build_norm_graph(const OpSignature& sig, const CudnnNormGraphs& plan, const CudnnNormGraph& n,
                          const Pointers& buffers, Graph& g) {
    g.scalars = {{kCudnnEpsilon, plan.epsilon}, {kCudnnMomentum, plan.momentum}};
    GraphBuilder b(api_, handle_);
    auto uid = [&](const CudnnNormTensor& t) -> Result<int64_t> {
      if (!t.present()) return int64_t{-1};
      const bool by_value = g.scalars.count(t.name) > 0;
      return b.tensor(g, TensorSpec{t.name, t.dims, t.strides, t.dtype, ""}, false, t.dtype, by_value);
    };
    GraphBuilder::NormUids u;
    std::vector<cudnnBackendDescriptor_t> ops;
    BOO_ASSIGN_OR_RETURN(u.x, uid(n.x));
    if (n.x2.present()) {  // add-layernorm: the norm reads x + x2, a virtual float32 tensor
      BOO_ASSIGN_OR_RETURN(int64_t x2, uid(n.x2));
      BOO_ASSIGN_OR_RETURN(int64_t sum, b.tensor(g, TensorSpec{"x_plus_x2", n.x.dims, n.x.strides, DType::kF32, ""},
                                                 true, DType::kF32));
      BOO_ASSIGN_OR_RETURN(cudnnBackendDescriptor_t add, b.pointwise(g, CUDNN_POINTWISE_ADD, u.x, x2, sum));
      ops.push_back(add);
      u.x = sum;
    }
    std::pair<int64_t*, const CudnnNormTensor*> roles[] = {
        {&u.scale, &n.scale}, {&u.bias, &n.bias}, {&u.epsilon, &n.epsilon}, {&u.mean, &n.mean},
        {&u.inv_variance, &n.inv_variance}, {&u.momentum, &n.momentum}, {&u.running_mean_in, &n.running_mean_in},
        {&u.running_var_in, &n.running_var_in}, {&u.running_mean, &n.running_mean}, {&u.running_var, &n.running_var},
        {&u.y, &n.y}, {&u.dy, &n.dy}, {&u.dscale, &n.dscale}, {&u.dbias, &n.dbias}, {&u.dx, &n.dx}};
    for (auto& [field, tensor] : roles) {
      BOO_ASSIGN_OR_RETURN(*field, uid(*tensor));
    }
    const cudnnBackendNormMode_t mode = n.mode == CudnnNormMode::kBatch ? CUDNN_BATCH_NORM
                                        : n.mode == CudnnNormMode::kRms ? CUDNN_RMS_NORM
                                                                        : CUDNN_LAYER_NORM;
    BOO_ASSIGN_OR_RETURN(cudnnBackendDescriptor_t op, n.step == CudnnNormStep::kBackward ? b.norm_backward(g, mode, u)
                                                                                        : b.norm_forward(g, mode, u));
    ops.push_back(op);
    return finish(g, b, ops, false, buffers, plan_record(sig, n.name.c_str(), false));
  }

  // A batch norm on cuDNN's legacy API as a Graph whose `legacy` call runs
  // it, tried once on `buffers` (a call cuDNN refuses is UNIMPLEMENTED).
  Result<Graph> legacy_batch_norm(const BatchNormSignature& sig, const Pointers& buffers) {
    BOO_ASSIGN_OR_RETURN(CudnnLegacyBatchNorm c, cudnn_legacy_batch_norm(sig));
    if (!api_.has_legacy_batch_norm())
      return unimplemented("cuDNN at " + api_.library_path + " lacks the legacy batch norm calls");
    // The tensor descriptors, destroyed with the last copy of the call.
    struct Descriptors {
      const CudnnApi* api = nullptr;
      std::vector<cudnnTensorDescriptor_t> owned;
      ~Descriptors() {
        for (cudnnTensorDescriptor_t d : owned) api->cudnnDestroyTensorDescriptor(d);
      }
    };
    auto descs = std::make_shared<Descriptors>();
    descs->api = &api_;
    auto make = [&](const CudnnNormTensor& t) -> Result<cudnnTensorDescriptor_t> {
      if (!t.present() && t.dims.empty()) return static_cast<cudnnTensorDescriptor_t>(nullptr);
      std::vector<int> dims, strides;
      for (size_t d = 0; d < t.dims.size(); ++d) {
        if (t.dims[d] > INT32_MAX || t.strides[d] > INT32_MAX)
          return unimplemented("cuDNN's legacy tensor descriptors take 32-bit sizes and strides");
        dims.push_back(static_cast<int>(t.dims[d]));
        strides.push_back(static_cast<int>(t.strides[d]));
      }
      cudnnTensorDescriptor_t d = nullptr;
      BOO_CUDNN_RETURN_IF_ERROR(api_, cudnnCreateTensorDescriptor(&d));
      descs->owned.push_back(d);
      BOO_CUDNN_RETURN_IF_ERROR(api_, cudnnSetTensorNdDescriptor(d, cudnn_type(t.dtype), static_cast<int>(dims.size()),
                                                                dims.data(), strides.data()));
      return d;
    };
    BOO_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t x, make(c.x));
    BOO_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t y, make(c.y));
    BOO_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t dy, make(c.dy));
    BOO_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t dx, make(c.dx));
    BOO_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t param, make(c.param));
    const cudnnBatchNormMode_t mode = c.per_activation ? CUDNN_BATCHNORM_PER_ACTIVATION : CUDNN_BATCHNORM_SPATIAL;
    const CudnnApi* api = &api_;
    cudnnHandle_t handle = handle_;
    Graph g;
    g.engine = std::string("legacy cudnnBatchNormalization") +
               (c.call == CudnnLegacyBatchNorm::Call::kBackward           ? "Backward"
                : c.call == CudnnLegacyBatchNorm::Call::kForwardInference ? "ForwardInference"
                                                                          : "ForwardTraining");
    if (!c.running_mean.empty())
      g.initial_copies = {{c.running_mean, c.running_mean_in}, {c.running_var, c.running_var_in}};
    g.legacy = [=](const Pointers& buffers) -> Status {
      (void)descs;  // kept alive with the call
      const float one = 1.f, zero = 0.f;
      std::map<std::string, void*> p;
      for (const std::string* name : {&c.x.name, &c.y.name, &c.dy.name, &c.dx.name, &c.scale, &c.bias, &c.dscale,
                                      &c.dbias, &c.saved_mean, &c.saved_inv_variance, &c.running_mean, &c.running_var,
                                      &c.estimated_mean, &c.estimated_variance}) {
        BOO_ASSIGN_OR_RETURN(p[*name], pointer(buffers, *name));
      }
      switch (c.call) {
        case CudnnLegacyBatchNorm::Call::kForwardTraining:
          BOO_CUDNN_RETURN_IF_ERROR(*api, cudnnBatchNormalizationForwardTraining(
                                              handle, mode, &one, &zero, x, p[c.x.name], y, p[c.y.name], param,
                                              p[c.scale], p[c.bias], c.factor, p[c.running_mean], p[c.running_var],
                                              c.epsilon, p[c.saved_mean], p[c.saved_inv_variance]));
          break;
        case CudnnLegacyBatchNorm::Call::kForwardInference:
          BOO_CUDNN_RETURN_IF_ERROR(*api, cudnnBatchNormalizationForwardInference(
                                              handle, mode, &one, &zero, x, p[c.x.name], y, p[c.y.name], param,
                                              p[c.scale], p[c.bias], p[c.estimated_mean], p[c.estimated_variance],
                                              c.epsilon));
          break;
        case CudnnLegacyBatchNorm::Call::kBackward:
          BOO_CUDNN_RETURN_IF_ERROR(*api, cudnnBatchNormalizationBackward(
                                              handle, mode, &one, &zero, &one, &zero, x, p[c.x.name], dy, p[c.dy.name],
                                              dx, p[c.dx.name], param, p[c.scale], p[c.dscale], p[c.dbias], c.epsilon,
                                              p[c.saved_mean], p[c.saved_inv_variance]));
          break;
      }
      return ok_status();
    };
    // cuDNN checks the descriptors when called: a refusal is a decline, not the command's failure.
    if (Status st = g.legacy(buffers); !st.ok()) {
      if (st.code() == StatusCode::kUnimplemented || st.code() == StatusCode::kInvalidArgument)
        return unimplemented(st.message());
      return st;
    }
    return g;
  }

  static Result<cudnnPointwiseMode_t> activation_mode(const Activation& a) {
    switch (a.kind) {
      case Activation::Kind::kRelu:
      case Activation::Kind::kLeakyRelu:
      case Activation::Kind::kClamp: return CUDNN_POINTWISE_RELU_FWD;
      case Activation::Kind::kSigmoid: return CUDNN_POINTWISE_SIGMOID_FWD;
      case Activation::Kind::kTanh: return CUDNN_POINTWISE_TANH_FWD;
      case Activation::Kind::kSilu: return CUDNN_POINTWISE_SWISH_FWD;
      case Activation::Kind::kGelu: return CUDNN_POINTWISE_GELU_FWD;
      case Activation::Kind::kGeluTanh: return CUDNN_POINTWISE_GELU_APPROX_TANH_FWD;
      default: return unimplemented("activation " + a.to_string() + " has no cuDNN pointwise mode");
    }
  }

  // What a graph's plan is chosen for: the cuDNN version and device (plan_context_), the
  // signature, which of its graphs, and whether tensor-core (TF32) engines were allowed.
  std::string plan_record(const OpSignature& sig, const char* graph, bool ieee_fp32) const {
    return plan_context_ + " | " + sig.command() + " | " + graph + " | " + (ieee_fp32 ? "ieee fp32" : "any math");
  }

  void warn(const std::string& message) { std::fprintf(stderr, "boo: warning: %s\n", message.c_str()); }

  // Operation graph -> the plan remembered for `record`, else every heuristic engine
  // config -> the fastest plan that builds (then remembered).
  // `ieee_fp32`: fp32 data that must not be computed in TF32 (engines on tensor cores are skipped).
  Status finish(Graph& g, GraphBuilder& b, const std::vector<cudnnBackendDescriptor_t>& ops, bool ieee_fp32,
                const Pointers& buffers, const std::string& record) {
    BOO_ASSIGN_OR_RETURN(Desc graph, b.operation_graph(g, ops));
    if (!timing_.vendor_retune) {
      if (load_serialized(g, record)) {
        g.keep.push_back(std::move(graph));
        return ok_status();
      }
      Result<std::string> remembered = plans_.find(record);
      if (remembered.ok()) {
        Result<EngineChoice> choice = EngineChoice::parse(*remembered);
        Status built = choice.ok() ? build_chosen(g, graph, *choice) : choice.status();
        if (built.ok()) {
          store_serialized(g, record);
          g.keep.push_back(std::move(graph));
          return ok_status();
        }
        warn("the remembered cuDNN plan in " + plans_.path_of(record) + " does not build (" + built.to_string() +
             "); searching again");
      } else if (remembered.status().code() != StatusCode::kNotFound) {
        warn(remembered.status().to_string() + "; searching again");
      }
    }
    return search(g, graph, ieee_fp32, buffers, record);
  }

  // Builds the plan of a remembered choice into g (its engine, knobs and config kept with it).
  Status build_chosen(Graph& g, const Desc& graph, const EngineChoice& choice) {
    BOO_ASSIGN_OR_RETURN(Desc engine, Desc::make(api_, CUDNN_BACKEND_ENGINE_DESCRIPTOR));
    cudnnBackendDescriptor_t gd = graph.get();
    BOO_RETURN_IF_ERROR(engine.set(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &gd));
    BOO_RETURN_IF_ERROR(engine.set(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &choice.engine));
    BOO_RETURN_IF_ERROR(engine.finalize());
    std::vector<Desc> knobs;
    std::vector<cudnnBackendDescriptor_t> raw_knobs;
    for (const auto& [type, value] : choice.knobs) {
      BOO_ASSIGN_OR_RETURN(Desc knob, Desc::make(api_, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR));
      const auto knob_type = static_cast<cudnnBackendKnobType_t>(type);
      BOO_RETURN_IF_ERROR(knob.set(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &knob_type));
      BOO_RETURN_IF_ERROR(knob.set(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &value));
      BOO_RETURN_IF_ERROR(knob.finalize());
      raw_knobs.push_back(knob.get());
      knobs.push_back(std::move(knob));
    }
    BOO_ASSIGN_OR_RETURN(Desc config, Desc::make(api_, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    cudnnBackendDescriptor_t ed = engine.get();
    BOO_RETURN_IF_ERROR(config.set(CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &ed));
    if (!raw_knobs.empty())
      BOO_RETURN_IF_ERROR(config.set(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                     static_cast<int64_t>(raw_knobs.size()), raw_knobs.data()));
    BOO_RETURN_IF_ERROR(config.finalize());
    BOO_ASSIGN_OR_RETURN(Desc plan, Desc::make(api_, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR));
    cudnnBackendDescriptor_t cd = config.get();
    BOO_RETURN_IF_ERROR(plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_));
    BOO_RETURN_IF_ERROR(plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cd));
    BOO_RETURN_IF_ERROR(plan.finalize());
    int64_t ws = 0, n = 0;
    BOO_CUDNN_RETURN_IF_ERROR(api_, cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                            CUDNN_TYPE_INT64, 1, &n, &ws));
    g.plan = std::move(plan);
    g.workspace_bytes = ws;
    g.engine = "engine " + std::to_string(choice.engine);
    g.keep.push_back(std::move(engine));
    for (Desc& k : knobs) g.keep.push_back(std::move(k));
    g.keep.push_back(std::move(config));
    return ok_status();
  }

  // The engine and knob settings of an engine configuration, as remembered.
  Result<EngineChoice> choice_of(cudnnBackendDescriptor_t cfg) const {
    EngineChoice choice;
    choice.engine = engine_index(cfg);
    if (choice.engine < 0) return internal_error("cuDNN did not say the engine of its chosen configuration");
    std::vector<Desc> knobs;
    std::vector<cudnnBackendDescriptor_t> raw(CUDNN_KNOB_TYPE_COUNTS);
    for (cudnnBackendDescriptor_t& r : raw) {
      BOO_ASSIGN_OR_RETURN(Desc knob, Desc::make(api_, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR));
      r = knob.get();
      knobs.push_back(std::move(knob));
    }
    int64_t count = 0;
    BOO_CUDNN_RETURN_IF_ERROR(api_, cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_KNOB_TYPE_COUNTS,
                                                            &count, raw.data()));
    for (int64_t i = 0; i < count && i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
      cudnnBackendKnobType_t type{};
      int64_t value = 0, n = 0;
      BOO_CUDNN_RETURN_IF_ERROR(api_, cudnnBackendGetAttribute(raw[static_cast<size_t>(i)], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                                              CUDNN_TYPE_KNOB_TYPE, 1, &n, &type));
      BOO_CUDNN_RETURN_IF_ERROR(api_, cudnnBackendGetAttribute(raw[static_cast<size_t>(i)], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                                              CUDNN_TYPE_INT64, 1, &n, &value));
      choice.knobs.emplace_back(static_cast<int64_t>(type), value);
    }
    return choice;
  }

  // Every heuristic engine config -> the fastest plan that builds, remembered for `record`.
  Status search(Graph& g, Desc& graph, bool ieee_fp32, const Pointers& buffers, const std::string& record) {
    BOO_ASSIGN_OR_RETURN(Desc heur, Desc::make(api_, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR));
    cudnnBackendDescriptor_t gd = graph.get();
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    BOO_RETURN_IF_ERROR(heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &gd));
    BOO_RETURN_IF_ERROR(heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode));
    BOO_RETURN_IF_ERROR(heur.finalize());
    int64_t count = 0;
    BOO_CUDNN_RETURN_IF_ERROR(api_, cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
    if (count == 0) return unimplemented("cuDNN has no engine for this graph");
    std::vector<Desc> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      BOO_ASSIGN_OR_RETURN(Desc c, Desc::make(api_, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      raw.push_back(c.get());
      configs.push_back(std::move(c));
    }
    BOO_CUDNN_RETURN_IF_ERROR(api_, cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count, raw.data()));
    double best_us = 1e30;
    cudnnBackendDescriptor_t best_config = nullptr;
    const auto started = std::chrono::steady_clock::now();
    Status last_error = unimplemented("no cuDNN engine configuration builds for this graph");
    for (int64_t i = 0; i < count; ++i) {
      if (best_config != nullptr && std::chrono::steady_clock::now() - started > kSearchBudget) break;
      if (ieee_fp32 && uses_tensor_cores(raw[static_cast<size_t>(i)])) continue;
      Result<Desc> plan = Desc::make(api_, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      if (!plan.ok()) return plan.status();
      cudnnBackendDescriptor_t cfg = raw[static_cast<size_t>(i)];
      if (Status st = plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_); !st.ok()) continue;
      if (Status st = plan->set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
          !st.ok())
        continue;
      if (Status st = plan->finalize(); !st.ok()) {
        last_error = st;
        continue;
      }
      int64_t ws = 0, n = 0;
      api_.cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws);
      Result<DeviceBuffer> workspace = rt_.allocate(static_cast<size_t>(ws));
      if (!workspace.ok()) continue;  // a plan that needs more memory than there is
      Graph candidate;
      candidate.plan = std::move(*plan);
      candidate.tensors = g.tensors;
      candidate.scalars = g.scalars;
      candidate.workspace_bytes = ws;
      auto launch = [&] { return execute(candidate, buffers, *workspace); };
      if (Status st = launch(); !st.ok()) {
        last_error = st;
        continue;
      }
      Result<std::vector<double>> samples = rt_.time_on_stream([&](int64_t) { return launch(); }, 5);
      if (!samples.ok()) {
        last_error = samples.status();
        continue;
      }
      const double us = *std::min_element(samples->begin(), samples->end());
      if (us < best_us) {
        best_us = us;
        best_config = cfg;
        g.plan = std::move(candidate.plan);
        g.workspace_bytes = ws;
        g.engine = "engine " + std::to_string(engine_index(cfg));
      }
    }
    if (best_us == 1e30) return last_error;
    remember(record, best_config);
    store_serialized(g, record);
    g.keep.push_back(std::move(graph));
    for (Desc& c : configs) g.keep.push_back(std::move(c));  // the plan refers to its engine config
    return ok_status();
  }

  // The plan serialized for `record` by an earlier run, loaded into g: true when it loads. Only
  // runtime-compiled engines serialize, and a plan that no longer loads (another driver, a changed
  // file) is built again from its remembered choice, so a miss or a failure here is not reported.
  bool load_serialized(Graph& g, const std::string& record) {
    Result<std::string> json = serialized_plans_.find(record);
    if (!json.ok()) return false;
    Result<Desc> plan = Desc::make(api_, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    if (!plan.ok() || !plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_).ok() ||
        !plan->set(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, static_cast<int64_t>(json->size()),
                   json->data())
             .ok() ||
        !plan->finalize().ok())
      return false;
    int64_t ws = 0, n = 0;
    if (api_.cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                      &ws) != CUDNN_STATUS_SUCCESS)
      return false;
    g.plan = std::move(*plan);
    g.workspace_bytes = ws;
    g.engine = "serialized plan";
    return true;
  }

  // Stores g's plan whole for the next run when cuDNN can serialize it (its runtime-compiled
  // engines); for the others the remembered engine choice is all there is.
  void store_serialized(const Graph& g, const std::string& record) {
    int64_t size = 0;
    if (api_.cudnnBackendGetAttribute(g.plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, 0,
                                      &size, nullptr) != CUDNN_STATUS_SUCCESS ||
        size <= 0)
      return;
    std::string json(static_cast<size_t>(size), '\0');
    if (api_.cudnnBackendGetAttribute(g.plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
                                      size, &size, json.data()) != CUDNN_STATUS_SUCCESS)
      return;
    json.resize(static_cast<size_t>(size));
    while (!json.empty() && json.back() == '\0') json.pop_back();  // a C string's terminator
    if (Status stored = serialized_plans_.store(record, json); !stored.ok() && !store_failure_reported_) {
      warn("cannot remember serialized cuDNN plans (" + stored.to_string() + "); each run compiles them again");
      store_failure_reported_ = true;
    }
  }

  // Stores the chosen configuration for the next run. Failing to is not the
  // command's failure: the plan is in hand; an unwritable folder is reported once.
  void remember(const std::string& record, cudnnBackendDescriptor_t config) {
    Result<EngineChoice> choice = choice_of(config);
    Status stored = choice.ok() ? plans_.store(record, choice->to_text()) : choice.status();
    if (!stored.ok() && !store_failure_reported_) {
      warn("cannot remember cuDNN plans (" + stored.to_string() + "); each run searches again");
      store_failure_reported_ = true;
    }
  }

  // Whether an engine configuration computes on tensor cores (TF32 for fp32 data).
  bool uses_tensor_cores(cudnnBackendDescriptor_t cfg) const {
    Result<Desc> engine = Desc::make(api_, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    if (!engine.ok()) return false;
    cudnnBackendDescriptor_t e = engine->get();
    int64_t n = 0;
    if (api_.cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e) !=
        CUDNN_STATUS_SUCCESS)
      return false;
    cudnnBackendNumericalNote_t notes[16];
    if (api_.cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, 16, &n, notes) !=
        CUDNN_STATUS_SUCCESS)
      return false;
    for (int64_t i = 0; i < n; ++i)
      if (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE) return true;
    return false;
  }

  int64_t engine_index(cudnnBackendDescriptor_t cfg) const {
    Result<Desc> engine = Desc::make(api_, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    if (!engine.ok()) return -1;
    cudnnBackendDescriptor_t e = engine->get();
    int64_t n = 0, index = -1;
    if (api_.cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e) !=
        CUDNN_STATUS_SUCCESS)
      return -1;
    api_.cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index);
    return index;
  }

  // How long a search goes on building and timing further engine configurations once one plan runs:
  // a conv's dozen configurations take well under it; a norm graph's runtime-compiled engines ~1-10 s each.
  static constexpr std::chrono::seconds kSearchBudget{3};

  Runtime& rt_;
  TimingOptions timing_;
  const CudnnApi& api_;
  cudnnHandle_t handle_;
  std::map<std::string, std::vector<Graph>> graphs_;  // by canonical command: tuned once per signature
  VendorPlanStore plans_;
  VendorPlanStore serialized_plans_;  // whole plans of the engines cuDNN can serialize, by the same records
  const std::string plan_context_;  // "cudnn <version> | <device>": what every remembered plan depends on
  bool store_failure_reported_ = false;
};

}  // namespace

Result<std::unique_ptr<Backend>> make_cudnn_backend(Runtime& runtime, const TimingOptions& timing) {
  BOO_ASSIGN_OR_RETURN(const CudnnApi* api, cuda::cudnn_api());
  BOO_RETURN_IF_ERROR(runtime.synchronize());  // makes the runtime's context current on this thread
  cudnnHandle_t handle = nullptr;
  BOO_CUDNN_RETURN_IF_ERROR(*api, cudnnCreate(&handle));
  return std::unique_ptr<Backend>(std::make_unique<CudnnBackend>(runtime, timing, *api, handle));
}

}  // namespace boo::bench
