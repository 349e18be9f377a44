// boo: what the cudnn backend asks of cuDNN for a norm signature, decided on
// the host without cuDNN: the norm operations of its graph API (their tensors
// by role: the signature's own by name, with cuDNN's dims and strides), or
// the legacy batch norm call for what those graphs do not express, or why
// cuDNN has nothing for the signature. bench/cudnn_backend.cpp turns these
// into descriptors; tests/unit/cudnn_norm_graphs_test.cpp checks them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "boo/batchnorm.hpp"
#include "boo/signature.hpp"
#include "boo/status.hpp"

namespace boo::bench {

/// cuDNN's cudnnBackendNormMode_t values boo uses.
enum class CudnnNormMode : uint8_t { kLayer, kRms, kBatch };

/// Which norm operation: CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR in
/// its training phase (the statistics are outputs) or NORM_BACKWARD.
enum class CudnnNormStep : uint8_t { kForwardTraining, kBackward };

/// A tensor of a norm graph, bound at execution by `name`: a tensor of the
/// signature, a scratch buffer (kScratchPrefix) or a by-value float32 scalar
/// (kEpsilon, kMomentum). Dims and strides in cuDNN's order (N, C, [D,] H, W;
/// rank 4 or 5). An empty name: the operation has no such tensor.
struct CudnnNormTensor {
  std::string name;
  std::vector<int64_t> dims, strides;
  DType dtype = DType::kF32;

  bool present() const { return !name.empty(); }
  bool operator==(const CudnnNormTensor&) const = default;
};

/// The names of the by-value scalars and the prefix of scratch buffers.
inline constexpr const char* kCudnnEpsilon = "#epsilon";
inline constexpr const char* kCudnnMomentum = "#momentum";
inline constexpr const char* kCudnnScratchPrefix = "scratch:";

/// One cuDNN operation graph: a norm operation, fed by a pointwise add of x
/// and x2 where x2 is present (add-layernorm: the norm reads x + x2, a
/// virtual tensor). Training forward reads x, scale, bias, epsilon (and, with
/// running statistics, momentum and running_*_in) and writes y, mean,
/// inv_variance (and running_*); backward reads x, dy, scale, mean,
/// inv_variance (epsilon where present) and writes dx, dscale, dbias.
struct CudnnNormGraph {
  std::string name;  ///< "forward" or "backward": which plan of the signature (vendor_plans.hpp's record)
  CudnnNormMode mode = CudnnNormMode::kLayer;
  CudnnNormStep step = CudnnNormStep::kForwardTraining;
  CudnnNormTensor x, x2, scale, bias, epsilon, mean, inv_variance;
  CudnnNormTensor momentum, running_mean_in, running_var_in, running_mean, running_var;
  CudnnNormTensor y, dy, dscale, dbias, dx;
};

/// A signature's graphs, run in order, and the device buffers they need that
/// are no tensor of the signature (statistics cuDNN writes that the
/// signature does not keep): allocated once, bound by name.
struct CudnnNormGraphs {
  std::vector<CudnnNormGraph> graphs;
  std::vector<TensorSpec> scratch;
  float epsilon = 0, momentum = 0;  ///< the values of kCudnnEpsilon, kCudnnMomentum
};

/// The graphs of a layernorm, addlayernorm, t5layernorm or bnorm signature;
/// UNIMPLEMENTED saying why cuDNN's graph API does not express it (group norm
/// has no such operation; batch norm per activation, inference from running
/// statistics and a backward without saved statistics go to the legacy call).
Result<CudnnNormGraphs> cudnn_norm_graphs(const OpSignature& sig);

/// cuDNN's legacy batch norm (cudnnBatchNormalizationForwardTraining,
/// ForwardInference, Backward), for the bnorm signatures its graphs decline.
/// MIOpen's API is this one's, so the arguments map one to one; the running
/// statistics are updated in place, so running_mean and running_var start as
/// copies of running_mean_in and running_var_in.
struct CudnnLegacyBatchNorm {
  enum class Call : uint8_t { kForwardTraining, kForwardInference, kBackward };
  Call call = Call::kForwardTraining;
  bool per_activation = false;  ///< CUDNN_BATCHNORM_PER_ACTIVATION, else CUDNN_BATCHNORM_SPATIAL
  /// x and y (dy, dx); `param` is the one descriptor of scale, bias and the
  /// statistics (float32: cuDNN's for every data type), its name unused.
  CudnnNormTensor x, y, dy, dx, param;
  /// Bound by name; "" passes a null pointer (no saved or running statistics).
  std::string scale, bias, dscale, dbias, saved_mean, saved_inv_variance;
  std::string running_mean_in, running_var_in, running_mean, running_var;
  std::string estimated_mean, estimated_variance;
  double epsilon = 0, factor = 0;
};

/// The legacy call of a bnorm signature; UNIMPLEMENTED where cuDNN's legacy
/// batch norm cannot take it (16-bit scale and bias: its statistics and
/// parameters share one float32 descriptor).
Result<CudnnLegacyBatchNorm> cudnn_legacy_batch_norm(const BatchNormSignature& sig);

}  // namespace boo::bench
