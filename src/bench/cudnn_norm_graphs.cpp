// boo: the cuDNN graphs (or legacy call) of a norm signature.
#include "bench/cudnn_norm_graphs.hpp"

#include "boo/groupnorm.hpp"
#include "boo/norm.hpp"
#include "ops/norm/norm_problem.hpp"

namespace boo::bench {
namespace {

CudnnNormTensor tensor(std::string name, std::vector<int64_t> dims, std::vector<int64_t> strides, DType dtype) {
  return CudnnNormTensor{std::move(name), std::move(dims), std::move(strides), dtype};
}

CudnnNormTensor contiguous(std::string name, std::vector<int64_t> dims, DType dtype) {
  std::vector<int64_t> strides = contiguous_strides(dims);
  return tensor(std::move(name), std::move(dims), std::move(strides), dtype);
}

// A signature tensor as cuDNN sees it: its own shape and strides (batch norm's
// are already N, C, [D,] H, W in the layout's strides).
CudnnNormTensor of(const TensorSpec& spec) { return tensor(spec.name, spec.shape, spec.strides, spec.dtype); }

// A by-value float32 scalar.
CudnnNormTensor scalar(const char* name) { return contiguous(name, {1, 1, 1, 1}, DType::kF32); }

// Layer and RMS norm (and add-layernorm): rows x cols as cuDNN's [rows, cols,
// 1, 1] with [1, cols, 1, 1] parameters and [rows, 1, 1, 1] float32
// statistics, the same memory as boo's row-major tensors.
Result<CudnnNormGraphs> row_norm_graphs(const NormSignature& sig) {
  const ops::norm::NormProblem p(sig);
  const bool ln = !p.rms();
  if (!p.contiguous) return unimplemented("cuDNN's layer and RMS norm take a contiguous input");
  if (ln && !(p.weight && p.bias))
    return unimplemented("cuDNN's layer norm takes a scale and a bias (-m 1 with the bias)");
  if (!ln && !p.weight) return unimplemented("cuDNN's RMS norm takes a scale (-m 5)");
  if (p.backward() && !(p.dx && p.dweight && (p.dbias || !ln)))
    return unimplemented(std::string("cuDNN's ") + (ln ? "layer" : "RMS") + " norm backward computes dx, dweight" +
                         (ln ? " and dbias" : "") + " together" + (ln ? " (-F 14)" : ""));
  const std::vector<int64_t> data{p.rows, p.cols, 1, 1}, param{1, p.cols, 1, 1}, stat{p.rows, 1, 1, 1};
  const DType t = p.dtype;
  CudnnNormGraphs out;
  out.epsilon = static_cast<float>(p.eps);
  CudnnNormGraph common;
  common.mode = ln ? CudnnNormMode::kLayer : CudnnNormMode::kRms;
  common.x = contiguous("x", data, t);
  if (p.fused_add) common.x2 = contiguous("x2", data, t);
  common.scale = contiguous("weight", param, t);
  common.epsilon = scalar(kCudnnEpsilon);
  if (ln) common.mean = contiguous("mean", stat, DType::kF32);
  common.inv_variance = contiguous("rstd", stat, DType::kF32);
  if (p.forward) {
    CudnnNormGraph g = common;
    g.name = "forward";
    g.step = CudnnNormStep::kForwardTraining;
    if (ln) g.bias = contiguous("bias", param, t);
    g.y = contiguous("y", data, t);
    out.graphs.push_back(std::move(g));
  }
  if (p.backward()) {
    CudnnNormGraph g = common;
    g.name = "backward";
    g.step = CudnnNormStep::kBackward;
    g.dy = contiguous("dy", data, t);
    g.dscale = contiguous("dweight", param, t);
    if (ln) g.dbias = contiguous("dbias", param, t);
    g.dx = contiguous("dx", data, t);
    out.graphs.push_back(std::move(g));
  }
  return out;
}

// Batch norm per channel on cuDNN's graph API: x and the per-channel tensors
// in the signature's layout ([N, C, [D,] H, W] and [1, C, 1...] with the
// layout's strides). Inference from the batch's statistics is the training
// forward without running statistics, its statistics in scratch buffers.
Result<CudnnNormGraphs> batch_norm_graphs(const BatchNormSignature& sig) {
  if (!sig.spatial())
    return unimplemented("cuDNN's graph API batch norm normalizes per channel (-m 1), not per activation");
  if (sig.pass == BatchNormPass::kInference && sig.running)
    return unimplemented("cuDNN's graph API batch norm inference reads the inverse standard deviation, not the "
                         "running variance (-r 1)");
  if (sig.pass == BatchNormPass::kBackward && !sig.save)
    return unimplemented("cuDNN's graph API batch norm backward reads the saved statistics (-s 1)");
  CudnnNormGraphs out;
  out.epsilon = static_cast<float>(sig.eps);
  out.momentum = static_cast<float>(sig.momentum);
  CudnnNormGraph g;
  g.mode = CudnnNormMode::kBatch;
  g.x = of(sig.x_spec("x", sig.dtype));
  g.scale = of(sig.param_spec("scale", sig.param_dtype));
  auto stat = [&](const std::string& name) { return of(sig.param_spec(name, DType::kF32)); };
  if (sig.pass == BatchNormPass::kBackward) {
    g.name = "backward";
    g.step = CudnnNormStep::kBackward;
    g.mean = stat("saved_mean");
    g.inv_variance = stat("saved_inv_variance");
    g.dy = of(sig.x_spec("dy", sig.grad_dtype));
    g.dscale = stat("dscale");
    g.dbias = stat("dbias");
    g.dx = of(sig.x_spec("dx", sig.grad_dtype));
    out.graphs.push_back(std::move(g));
    return out;
  }
  g.name = "forward";
  g.step = CudnnNormStep::kForwardTraining;
  g.bias = of(sig.param_spec("bias", sig.param_dtype));
  g.epsilon = scalar(kCudnnEpsilon);
  g.y = of(sig.x_spec("y", sig.dtype));
  const bool keep = sig.pass == BatchNormPass::kTraining && sig.save;
  for (auto [field, name] : {std::pair{&CudnnNormGraph::mean, "saved_mean"},
                             std::pair{&CudnnNormGraph::inv_variance, "saved_inv_variance"}}) {
    const std::string bound = keep ? std::string(name) : kCudnnScratchPrefix + std::string(name);
    g.*field = stat(bound);
    if (!keep) out.scratch.push_back(sig.param_spec(bound, DType::kF32));
  }
  if (sig.pass == BatchNormPass::kTraining && sig.running) {
    g.momentum = scalar(kCudnnMomentum);
    g.running_mean_in = stat("running_mean_in");
    g.running_var_in = stat("running_variance_in");
    g.running_mean = stat("running_mean");
    g.running_var = stat("running_variance");
  }
  out.graphs.push_back(std::move(g));
  return out;
}

}  // namespace

Result<CudnnNormGraphs> cudnn_norm_graphs(const OpSignature& sig) {
  if (const auto* norm = dynamic_cast<const NormSignature*>(&sig)) return row_norm_graphs(*norm);
  if (const auto* batch = dynamic_cast<const BatchNormSignature*>(&sig)) return batch_norm_graphs(*batch);
  if (dynamic_cast<const GroupNormSignature*>(&sig))
    return unimplemented("cuDNN has no group norm: its graph API's norm operation has no attribute for the number "
                         "of groups, and the legacy cudnnNormalizationForwardTraining takes one group only");
  return internal_error("cudnn_norm_graphs was given a " + std::string(sig.op_name()) + " signature");
}

Result<CudnnLegacyBatchNorm> cudnn_legacy_batch_norm(const BatchNormSignature& sig) {
  if (sig.param_dtype != DType::kF32)
    return unimplemented("cuDNN's legacy batch norm takes float32 scale and bias (its statistics' descriptor), not " +
                         std::string(dtype_name(sig.param_dtype)) + " ones (bnormfp16fp32, bnormbfp16fp32)");
  CudnnLegacyBatchNorm c;
  c.per_activation = !sig.spatial();
  c.epsilon = sig.eps;
  c.factor = sig.momentum;
  c.x = of(sig.x_spec("x", sig.dtype));
  c.param = of(sig.param_spec("", DType::kF32));
  c.scale = "scale";
  switch (sig.pass) {
    case BatchNormPass::kTraining:
      c.call = CudnnLegacyBatchNorm::Call::kForwardTraining;
      break;
    case BatchNormPass::kInference:
      // From the batch's statistics (-r 0) it is the training call that keeps nothing.
      c.call = sig.running ? CudnnLegacyBatchNorm::Call::kForwardInference
                           : CudnnLegacyBatchNorm::Call::kForwardTraining;
      break;
    case BatchNormPass::kBackward:
      c.call = CudnnLegacyBatchNorm::Call::kBackward;
      break;
  }
  if (c.call == CudnnLegacyBatchNorm::Call::kBackward) {
    c.dy = of(sig.x_spec("dy", sig.grad_dtype));
    c.dx = of(sig.x_spec("dx", sig.grad_dtype));
    c.dscale = "dscale";
    c.dbias = "dbias";
    if (sig.save) {  // else cuDNN recomputes them from x
      c.saved_mean = "saved_mean";
      c.saved_inv_variance = "saved_inv_variance";
    }
    return c;
  }
  c.y = of(sig.x_spec("y", sig.dtype));
  c.bias = "bias";
  if (c.call == CudnnLegacyBatchNorm::Call::kForwardInference) {
    c.estimated_mean = "estimated_mean";
    c.estimated_variance = "estimated_variance";
    return c;
  }
  if (sig.pass == BatchNormPass::kTraining && sig.save) {
    c.saved_mean = "saved_mean";
    c.saved_inv_variance = "saved_inv_variance";
  }
  if (sig.pass == BatchNormPass::kTraining && sig.running) {
    c.running_mean_in = "running_mean_in";
    c.running_var_in = "running_variance_in";
    c.running_mean = "running_mean";
    c.running_var = "running_variance";
  }
  return c;
}

}  // namespace boo::bench
