// boo tests: what the cudnn backend asks of cuDNN for norm signatures
// (bench/cudnn_norm_graphs.hpp), on the host: the graphs' tensors by role
// with cuDNN's dims and strides per layout, the legacy batch norm calls, and
// the reasons cuDNN is not asked.
#include <gtest/gtest.h>

#include "bench/cudnn_norm_graphs.hpp"
#include "boo/registry.hpp"

namespace boo::bench {
namespace {

std::unique_ptr<OpSignature> parse(const std::string& command) {
  Result<ParsedCommand> p = parse_command(command);
  EXPECT_TRUE(p.ok()) << command << ": " << p.status().to_string();
  return p.ok() ? std::move(p->signature) : nullptr;
}

CudnnNormGraphs graphs_of(const std::string& command) {
  std::unique_ptr<OpSignature> sig = parse(command);
  if (!sig) return {};
  Result<CudnnNormGraphs> g = cudnn_norm_graphs(*sig);
  EXPECT_TRUE(g.ok()) << command << ": " << g.status().to_string();
  return g.ok() ? std::move(*g) : CudnnNormGraphs{};
}

Status graph_status(const std::string& command) {
  std::unique_ptr<OpSignature> sig = parse(command);
  return sig ? cudnn_norm_graphs(*sig).status() : internal_error("unparsed");
}

Result<CudnnLegacyBatchNorm> legacy_of(const std::string& command) {
  std::unique_ptr<OpSignature> sig = parse(command);
  const auto* batch = dynamic_cast<const BatchNormSignature*>(sig.get());
  if (!batch) return internal_error(command + " is no bnorm command");
  return cudnn_legacy_batch_norm(*batch);
}

CudnnNormTensor t(std::string name, std::vector<int64_t> dims, std::vector<int64_t> strides, DType dtype) {
  return CudnnNormTensor{std::move(name), std::move(dims), std::move(strides), dtype};
}

// ResNet-50's first batch norm shape, NHWC bf16 data with float32 parameters, training that saves and updates.
TEST(CudnnNormGraphsTest, BatchNormTrainingNhwcBindsEveryStatistic) {
  const CudnnNormGraphs g = graphs_of(
      "bnormbfp16 -n 8 -c 64 -H 14 -W 14 -m 1 --forw 1 -b 0 -s 1 -r 1 --layout NHWC --momentum 0.1");
  ASSERT_EQ(g.graphs.size(), 1u);
  const CudnnNormGraph& f = g.graphs[0];
  EXPECT_EQ(f.name, "forward");
  EXPECT_EQ(f.mode, CudnnNormMode::kBatch);
  EXPECT_EQ(f.step, CudnnNormStep::kForwardTraining);
  // N, C, H, W with channels innermost.
  EXPECT_EQ(f.x, t("x", {8, 64, 14, 14}, {12544, 1, 896, 64}, DType::kBF16));
  EXPECT_EQ(f.y, t("y", {8, 64, 14, 14}, {12544, 1, 896, 64}, DType::kBF16));
  const std::vector<int64_t> per_channel{1, 64, 1, 1}, nhwc_channel{64, 1, 64, 64};
  EXPECT_EQ(f.scale, t("scale", per_channel, nhwc_channel, DType::kF32));
  EXPECT_EQ(f.bias, t("bias", per_channel, nhwc_channel, DType::kF32));
  EXPECT_EQ(f.mean, t("saved_mean", per_channel, nhwc_channel, DType::kF32));
  EXPECT_EQ(f.inv_variance, t("saved_inv_variance", per_channel, nhwc_channel, DType::kF32));
  EXPECT_EQ(f.running_mean_in.name, "running_mean_in");
  EXPECT_EQ(f.running_var_in.name, "running_variance_in");
  EXPECT_EQ(f.running_mean.name, "running_mean");
  EXPECT_EQ(f.running_var.name, "running_variance");
  EXPECT_EQ(f.momentum, t(kCudnnMomentum, {1, 1, 1, 1}, {1, 1, 1, 1}, DType::kF32));
  EXPECT_EQ(f.epsilon.name, kCudnnEpsilon);
  EXPECT_FALSE(f.dy.present() || f.dx.present() || f.dscale.present() || f.x2.present());
  EXPECT_TRUE(g.scratch.empty());
  EXPECT_FLOAT_EQ(g.epsilon, 1e-3f);  // MIOpenDriver's
  EXPECT_FLOAT_EQ(g.momentum, 0.1f);
}

// 3-D NCDHW without -s or -r: the statistics cuDNN writes go to scratch buffers, no running statistics.
TEST(CudnnNormGraphsTest, BatchNormTrainingWithoutSavedStatisticsWritesScratch) {
  const CudnnNormGraphs g = graphs_of("bnorm -n 2 -c 3 -D 4 -H 5 -W 6 -m 1 --forw 1 -b 0 -s 0 -r 0 --layout NCDHW");
  ASSERT_EQ(g.graphs.size(), 1u);
  const CudnnNormGraph& f = g.graphs[0];
  EXPECT_EQ(f.x, t("x", {2, 3, 4, 5, 6}, {360, 120, 30, 6, 1}, DType::kF32));
  EXPECT_EQ(f.scale, t("scale", {1, 3, 1, 1, 1}, {3, 1, 1, 1, 1}, DType::kF32));
  EXPECT_EQ(f.mean.name, std::string(kCudnnScratchPrefix) + "saved_mean");
  EXPECT_EQ(f.inv_variance.name, std::string(kCudnnScratchPrefix) + "saved_inv_variance");
  ASSERT_EQ(g.scratch.size(), 2u);
  EXPECT_EQ(g.scratch[0].name, f.mean.name);
  EXPECT_EQ(g.scratch[0].shape, (std::vector<int64_t>{1, 3, 1, 1, 1}));
  EXPECT_EQ(g.scratch[1].name, f.inv_variance.name);
  EXPECT_FALSE(f.momentum.present() || f.running_mean_in.present() || f.running_mean.present());
}

// Inference from the batch's statistics is the training forward that keeps nothing.
TEST(CudnnNormGraphsTest, BatchNormInferenceFromBatchStatisticsIsTrainingForward) {
  const CudnnNormGraphs g = graphs_of("bnormfp16 -n 4 -c 8 -H 6 -W 6 -m 1 --forw 2 -b 0 -s 0 -r 0 --layout NDHWC -D 2");
  ASSERT_EQ(g.graphs.size(), 1u);
  EXPECT_EQ(g.graphs[0].step, CudnnNormStep::kForwardTraining);
  EXPECT_EQ(g.graphs[0].x, t("x", {4, 8, 2, 6, 6}, {576, 1, 288, 48, 8}, DType::kF16));
  EXPECT_EQ(g.scratch.size(), 2u);
  EXPECT_FALSE(g.graphs[0].running_mean.present());
}

// bnormbfp16fp32: 16-bit x and parameters, float32 gradients and statistics.
TEST(CudnnNormGraphsTest, BatchNormBackwardReadsSavedStatistics) {
  const CudnnNormGraphs g = graphs_of("bnormbfp16fp32 -n 8 -c 16 -H 7 -W 7 -m 1 --forw 0 -b 1 -s 1 -r 0 --layout NHWC");
  ASSERT_EQ(g.graphs.size(), 1u);
  const CudnnNormGraph& b = g.graphs[0];
  EXPECT_EQ(b.name, "backward");
  EXPECT_EQ(b.step, CudnnNormStep::kBackward);
  EXPECT_EQ(b.x, t("x", {8, 16, 7, 7}, {784, 1, 112, 16}, DType::kBF16));
  EXPECT_EQ(b.dy, t("dy", {8, 16, 7, 7}, {784, 1, 112, 16}, DType::kF32));
  EXPECT_EQ(b.dx, t("dx", {8, 16, 7, 7}, {784, 1, 112, 16}, DType::kF32));
  EXPECT_EQ(b.scale, t("scale", {1, 16, 1, 1}, {16, 1, 16, 16}, DType::kBF16));
  EXPECT_EQ(b.mean.name, "saved_mean");
  EXPECT_EQ(b.inv_variance.name, "saved_inv_variance");
  EXPECT_EQ(b.dscale, t("dscale", {1, 16, 1, 1}, {16, 1, 16, 16}, DType::kF32));
  EXPECT_EQ(b.dbias.dtype, DType::kF32);
  EXPECT_FALSE(b.y.present() || b.bias.present() || b.epsilon.present());
  EXPECT_TRUE(g.scratch.empty());
}

// What the graph API does not express goes to the legacy call, saying why.
TEST(CudnnNormGraphsTest, GraphsDeclineWhatOnlyTheLegacyCallTakes) {
  const std::pair<const char*, const char*> cases[] = {
      {"bnorm -n 8 -c 4 -H 5 -W 5 -m 0 --forw 1 -b 0 -s 1 -r 1", "per activation"},
      {"bnormbfp16 -n 8 -c 4 -H 5 -W 5 -m 1 --forw 2 -b 0 -s 0 -r 1 --layout NHWC", "running variance"},
      {"bnormfp16 -n 8 -c 4 -H 5 -W 5 -m 1 --forw 0 -b 1 -s 0 -r 0", "saved statistics"},
  };
  for (const auto& [command, reason] : cases) {
    const Status st = graph_status(command);
    EXPECT_EQ(st.code(), StatusCode::kUnimplemented) << command;
    EXPECT_NE(st.message().find(reason), std::string::npos) << command << ": " << st.message();
    EXPECT_TRUE(legacy_of(command).ok()) << command << ": " << legacy_of(command).status().to_string();
  }
}

TEST(CudnnNormGraphsTest, GroupNormHasNoCudnnOperation) {
  for (const char* command : {"groupnormfp16 -n 2 -c 320 -D 0 -H 64 -W 64 -g 32 -m 1 -F 1 --layout NHWC",
                              "groupnormbfp16 -n 2 -c 640 -D 0 -H 32 -W 32 -g 32 -m 1 -F 0 --layout NCHW"}) {
    const Status st = graph_status(command);
    EXPECT_EQ(st.code(), StatusCode::kUnimplemented) << command;
    EXPECT_NE(st.message().find("cuDNN has no group norm"), std::string::npos) << st.message();
  }
}

// Layer norm: rows x cols as [rows, cols, 1, 1], [1, cols, 1, 1] parameters, [rows, 1, 1, 1] statistics.
TEST(CudnnNormGraphsTest, LayerNormRowsAndAddLayerNormsSum) {
  CudnnNormGraphs g = graphs_of("layernormbfp16 -X 64x128 -o 1 -m 1 -F 1");
  ASSERT_EQ(g.graphs.size(), 1u);
  EXPECT_EQ(g.graphs[0].mode, CudnnNormMode::kLayer);
  EXPECT_EQ(g.graphs[0].x, t("x", {64, 128, 1, 1}, {128, 1, 1, 1}, DType::kBF16));
  EXPECT_EQ(g.graphs[0].scale, t("weight", {1, 128, 1, 1}, {128, 1, 1, 1}, DType::kBF16));
  EXPECT_EQ(g.graphs[0].mean, t("mean", {64, 1, 1, 1}, {1, 1, 1, 1}, DType::kF32));
  EXPECT_EQ(g.graphs[0].inv_variance.name, "rstd");
  EXPECT_FALSE(g.graphs[0].x2.present());
  // Add-layernorm with weight and bias (-m 3): forward and backward both read x + x2.
  g = graphs_of("addlayernormbfp16 -X 32x256 -o 1 -m 3 -F 0");
  ASSERT_EQ(g.graphs.size(), 2u);
  for (const CudnnNormGraph& n : g.graphs) EXPECT_EQ(n.x2, t("x2", {32, 256, 1, 1}, {256, 1, 1, 1}, DType::kBF16));
  EXPECT_EQ(g.graphs[1].step, CudnnNormStep::kBackward);
  EXPECT_EQ(g.graphs[1].dbias.name, "dbias");
  // RMS norm: no mean, no bias; its default -F is forward and backward.
  g = graphs_of("t5layernormbfp16 -X 64x128 -m 5");
  ASSERT_EQ(g.graphs.size(), 2u);
  EXPECT_EQ(g.graphs[0].mode, CudnnNormMode::kRms);
  EXPECT_FALSE(g.graphs[0].mean.present() || g.graphs[0].bias.present() || g.graphs[1].dbias.present());
  EXPECT_EQ(g.graphs[1].dscale.name, "dweight");
  // Without weight and bias cuDNN's layer norm has nothing to compare.
  EXPECT_EQ(graph_status("addlayernormbfp16 -X 32x256 -o 1 -m 2 -F 1").code(), StatusCode::kUnimplemented);
}

TEST(CudnnLegacyBatchNormTest, CallsAndTheirTensors) {
  // Per activation, NHWC, training that saves and updates: parameters [1, C, H, W] in the layout.
  Result<CudnnLegacyBatchNorm> c =
      legacy_of("bnormfp16 -n 8 -c 4 -H 5 -W 6 -m 0 --forw 1 -b 0 -s 1 -r 1 --layout NHWC --momentum 0.25");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->call, CudnnLegacyBatchNorm::Call::kForwardTraining);
  EXPECT_TRUE(c->per_activation);
  EXPECT_EQ(c->x, t("x", {8, 4, 5, 6}, {120, 1, 24, 4}, DType::kF16));
  EXPECT_EQ(c->y.name, "y");
  EXPECT_EQ(c->param, t("", {1, 4, 5, 6}, {120, 1, 24, 4}, DType::kF32));
  EXPECT_EQ(c->saved_mean, "saved_mean");
  EXPECT_EQ(c->running_mean_in, "running_mean_in");
  EXPECT_EQ(c->running_var, "running_variance");
  EXPECT_DOUBLE_EQ(c->factor, 0.25);
  EXPECT_DOUBLE_EQ(c->epsilon, 1e-3);
  // Inference from the running statistics.
  c = legacy_of("bnorm -n 8 -c 4 -H 5 -W 6 -m 1 --forw 2 -b 0 -s 0 -r 1");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->call, CudnnLegacyBatchNorm::Call::kForwardInference);
  EXPECT_FALSE(c->per_activation);
  EXPECT_EQ(c->param, t("", {1, 4, 1, 1}, {4, 1, 1, 1}, DType::kF32));
  EXPECT_EQ(c->estimated_mean, "estimated_mean");
  EXPECT_EQ(c->estimated_variance, "estimated_variance");
  // Inference from the batch's statistics: the training call keeping nothing (null pointers).
  c = legacy_of("bnorm -n 8 -c 4 -H 5 -W 6 -m 1 --forw 2 -b 0 -s 0 -r 0");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->call, CudnnLegacyBatchNorm::Call::kForwardTraining);
  EXPECT_TRUE(c->saved_mean.empty() && c->running_mean.empty() && c->running_mean_in.empty());
  // Backward without saved statistics: cuDNN recomputes them (null pointers).
  c = legacy_of("bnormbfp16 -n 8 -c 4 -D 3 -H 5 -W 6 -m 1 --forw 0 -b 1 -s 0 -r 0 --layout NDHWC");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->call, CudnnLegacyBatchNorm::Call::kBackward);
  EXPECT_EQ(c->dy, t("dy", {8, 4, 3, 5, 6}, {360, 1, 120, 24, 4}, DType::kBF16));
  EXPECT_EQ(c->dx.name, "dx");
  EXPECT_EQ(c->dscale, "dscale");
  EXPECT_TRUE(c->saved_mean.empty() && c->saved_inv_variance.empty());
  EXPECT_FALSE(c->y.present());
}

TEST(CudnnLegacyBatchNormTest, SixteenBitParametersAreDeclined) {
  Result<CudnnLegacyBatchNorm> c = legacy_of("bnormfp16fp32 -n 8 -c 4 -H 5 -W 6 -m 1 --forw 1 -b 0 -s 1 -r 0");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(c.status().message().find("float32 scale and bias"), std::string::npos) << c.status().message();
}

}  // namespace
}  // namespace boo::bench
