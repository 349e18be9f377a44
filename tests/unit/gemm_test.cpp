// boo tests: the gemm op — parsing, the float64 reference, and the mapping of
// a GEMM onto the conv tiers (checked on the CPU by running the mapped conv's
// reference on the staged operands) and its launch plans.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>

#include "boo/gemm.hpp"
#include "ops/conv/conv_direct_impl.hpp"
#include "ops/conv/conv_igemm_impl.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/conv_ref.hpp"
#include "ops/conv/conv_wgmma_impl.hpp"
#include "ops/conv/device/conv_direct_params.cuh"
#include "ops/conv/device/conv_igemm_params.cuh"
#include "ops/conv/device/conv_fp32_split_params.cuh"
#include "ops/gemm/device/gemm_copy_params.cuh"
#include "ops/gemm/gemm_conv_impl.hpp"
#include "ops/gemm/gemm_copy_plan.hpp"
#include "ops/gemm/gemm_op.hpp"
#include "plan_util.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using ops::gemm::ConvMapping;
using ops::gemm::GemmDesc;
using ops::gemm::GemmProblem;
using ops::gemm::MatrixView;

const GemmSignature& gemm_of(const ParsedCommand& p) { return dynamic_cast<const GemmSignature&>(*p.signature); }

TEST(GemmParseTest, BooFlagsAndRoundTrips) {
  // BOO's sample lines: m = --a_w, k = --a_h, n = --b_w.
  Result<ParsedCommand> p = parse_command("gemmfp16 --a_w 32 --a_h 64 --b_w 128 --transA 1");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const GemmSignature& g = gemm_of(*p);
  EXPECT_EQ(g.dtype, DType::kF16);
  EXPECT_EQ(g.m, 32);
  EXPECT_EQ(g.k, 64);
  EXPECT_EQ(g.n, 128);
  EXPECT_TRUE(g.trans_a);
  EXPECT_EQ(g.func_name(), "gemm_float16_forward_32x64x128_transA");
  EXPECT_EQ(g.arguments().at(0).shape, (std::vector<int64_t>{64, 32}));  // A stored k x m
  EXPECT_EQ(g.results().at(0).shape, (std::vector<int64_t>{32, 128}));
  for (const char* line :
       {"gemm -k 5 -m 7 -n 3 -u 1 -v 1 -F 2", "gemmbfp16 --a_w 4 --a_h 8 --b_w 2 -F 3 --batch_count 3",
        "gemm -A 0.5 -B 2 --bias 1 --activation leaky_relu:0.2 -b 2", "gemm --fp32-math tf32"}) {
    Result<ParsedCommand> first = parse_command(line);
    ASSERT_TRUE(first.ok()) << line << ": " << first.status().to_string();
    Result<ParsedCommand> second = parse_command(first->signature->command());
    ASSERT_TRUE(second.ok()) << first->signature->command() << ": " << second.status().to_string();
    EXPECT_TRUE(second->signature->equals(*first->signature)) << line;
  }
  Result<ParsedCommand> grad = parse_command("gemm -k 5 -m 7 -n 3 -u 1 -F 2");
  ASSERT_TRUE(grad.ok());
  EXPECT_EQ(gemm_of(*grad).func_name(), "gemm_float32_a_backward_5x7x3_transA");
  EXPECT_EQ(grad->signature->arguments().at(0).name, "dd");
  EXPECT_EQ(grad->signature->results().at(0).shape, (std::vector<int64_t>{7, 5}));  // da stored as a is
}

// MIOpenDriver's --isColMajor: the same logical shapes, each matrix stored column-major. A column-major
// d = op(a) @ op(b) holds the bytes of the row-major d^T = op(b)^T @ op(a)^T, whose operands are the
// column-major b and a read as row-major (a stored transposed exactly when the other was not).
TEST(GemmReferenceTest, ColumnMajorIsTheTransposedRowMajorProduct) {
  for (const char* t : {"", " --transA 1", " --transB 1", " --transA 1 --transB 1"}) {
    for (const char* batch : {"", " --batch_count 2"}) {
      const std::string flags = std::string(t) + batch;
      Result<ParsedCommand> col = parse_command("gemm --a_w 5 --a_h 4 --b_w 3 --isColMajor 1" + flags);
      ASSERT_TRUE(col.ok()) << col.status().to_string();
      const GemmSignature& c = gemm_of(*col);
      EXPECT_TRUE(c.col_major);
      Result<ParsedCommand> again = parse_command(c.command());
      ASSERT_TRUE(again.ok() && again->signature->equals(c)) << c.command();
      const std::string row_line = std::string("gemm --a_w 3 --a_h 4 --b_w 5") + (c.trans_b ? " --transA 1" : "") +
                                   (c.trans_a ? " --transB 1" : "") + batch;
      Result<ParsedCommand> row = parse_command(row_line);
      ASSERT_TRUE(row.ok()) << row_line;
      const ops::OpDefinition& op = ops::gemm::definition();
      Result<std::vector<base::HostTensor>> col_args = op.make_arguments(c, {});
      ASSERT_TRUE(col_args.ok());
      // The row-major product's a is the column-major b's storage, its b the column-major a's.
      const std::vector<TensorSpec> row_specs = row->signature->arguments();
      std::vector<base::HostTensor> row_args;
      for (int i : {1, 0}) {
        const base::HostTensor& from = (*col_args)[static_cast<size_t>(i)];
        base::HostTensor to(row_specs.at(row_args.size()));
        ASSERT_EQ(to.size_bytes(), from.size_bytes()) << flags;
        std::memcpy(to.data(), from.data(), from.size_bytes());
        row_args.push_back(std::move(to));
      }
      Result<std::vector<base::HostTensor>> d_col = op.reference(c, *col_args);
      Result<std::vector<base::HostTensor>> d_row = op.reference(*row->signature, row_args);
      ASSERT_TRUE(d_col.ok() && d_row.ok());
      const base::HostTensor &x = d_col->at(0), &y = d_row->at(0);
      ASSERT_EQ(x.spec().storage_elems(), y.spec().storage_elems());
      for (int64_t e = 0; e < x.spec().storage_elems(); ++e) EXPECT_NEAR(x.load(e), y.load(e), 1e-12) << flags << " @" << e;
      // Column-major strides: a column's rows adjacent.
      const TensorSpec a = c.arguments().at(0);
      EXPECT_EQ(a.strides.back(), a.shape[a.shape.size() - 2]) << flags;
      EXPECT_EQ(a.strides[a.shape.size() - 2], 1) << flags;
    }
  }
}

// d = act(alpha * op(a) @ op(b) + beta * c + bias) by hand.
TEST(GemmReferenceTest, HandComputed) {
  Result<ParsedCommand> p =
      parse_command("gemm --a_w 2 --a_h 3 --b_w 2 --transA 1 --alpha 2 --beta -1 --bias 1 --activation relu");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const OpSignature& sig = *p->signature;
  const std::vector<TensorSpec> specs = sig.arguments();
  // a stored 3 x 2 (transposed): op(a) = [[1, 2, 3], [4, 5, 6]].
  std::vector<base::HostTensor> args{testing::tensor_from(specs[0], {1, 4, 2, 5, 3, 6}),
                                     testing::tensor_from(specs[1], {1, 0, 0, 1, 1, 1}),
                                     testing::tensor_from(specs[2], {1, 1, 100, 1}),
                                     testing::tensor_from(specs[3], {0.5, -20})};
  Result<std::vector<base::HostTensor>> r = ops::find_op("gemm")->reference(sig, args);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // op(a) @ b = [[4, 5], [10, 11]]; 2x - c + bias = [[7.5, -11], [-79.5, 1]]; relu.
  EXPECT_EQ(testing::logical_values(r->at(0)), (std::vector<double>{7.5, 0, 0, 1}));
  // The sampled reference agrees.
  Result<std::vector<double>> s = ops::find_op("gemm")->reference_sample(sig, args, 0, {0, 3});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (std::vector<double>{7.5, 1}));
}

TEST(GemmReferenceTest, GradientsAreTheTransposedProducts) {
  // da = dd @ op(b)^T and db = op(a)^T @ dd, as the forward's inner products say: <d, dd> = <a, da> = <b, db>.
  for (const char* flags : {"", " --transA 1", " --transB 1", " --transA 1 --transB 1 --batch_count 2"}) {
    const std::string sizes = std::string("gemm --a_w 5 --a_h 4 --b_w 3") + flags;
    testing::ReferenceRun fwd = testing::run_reference(sizes);
    testing::ReferenceRun da = testing::run_reference(sizes + " -F 2");
    testing::ReferenceRun db = testing::run_reference(sizes + " -F 3");
    // Same names, same seeds: dd, a and b hold the same values in every run.
    const double d_dd = testing::inner_product(fwd.results[0], da.args[0]);
    EXPECT_NEAR(testing::inner_product(fwd.args[0], da.results[0]), d_dd, 1e-9 * std::abs(d_dd) + 1e-12) << flags;
    EXPECT_NEAR(testing::inner_product(fwd.args[1], db.results[0]), d_dd, 1e-9 * std::abs(d_dd) + 1e-12) << flags;
  }
}

int64_t at(const MatrixView& v, int64_t b, int64_t r, int64_t c) {
  return b * v.strides[0] + r * v.strides[1] + c * v.strides[2];
}

// The plan's data flow on the CPU: operands copied through their views (staged or in place), the
// mapped conv's reference, the result read through its view -- or, where the conv does not fuse
// the epilogue, its sums laid out as ConvProblem::fp32_result's (groups, M, N) read through
// m.sums and given the epilogue; it must equal the GEMM's reference.
// `mapping` maps the problem's description, or (`transpose`) its transposed one; `label` names it in
// failures.
void expect_mapping_matches(const ops::OpDefinition& op, const OpSignature& sig,
                            const std::function<std::optional<ConvMapping>(const GemmDesc&)>& mapping,
                            const std::string& label, bool transpose = false) {
  Result<std::unique_ptr<ops::OpProblem>> problem = op.make_problem(sig);
  ASSERT_TRUE(problem.ok()) << problem.status().to_string();
  const GemmDesc& given = dynamic_cast<const GemmProblem&>(**problem).desc;
  const GemmDesc d = transpose ? ops::gemm::transposed(given) : given;
  const std::optional<ConvMapping> mapped = mapping(d);
  if (!mapped) return;
  const ConvMapping& m = *mapped;
  ASSERT_TRUE(m.conv.validate().ok()) << m.conv.command();
  Result<std::vector<base::HostTensor>> args = op.make_arguments(sig, {});
  ASSERT_TRUE(args.ok());
  const std::vector<TensorSpec> specs = sig.arguments();
  auto arg = [&](const std::string& name) -> const base::HostTensor& {
    for (size_t i = 0; i < specs.size(); ++i)
      if (specs[i].name == name) return (*args)[i];
    ADD_FAILURE() << "no argument " << name;
    return (*args)[0];
  };
  auto fill = [&](const ConvMapping::Operand& o, TensorSpec spec) {
    base::HostTensor t(std::move(spec));
    const MatrixView& dst = o.staged ? o.staged_view : o.view;
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t r = 0; r < o.rows; ++r)
        for (int64_t c = 0; c < o.cols; ++c) t.store(at(dst, b, r, c), arg(o.view.tensor).load(at(o.view, b, r, c)));
    return t;
  };
  // The conv's arguments in its signature's order: x and w (and the bias) forward, dy and x for dw.
  std::vector<base::HostTensor> conv_args;
  for (const TensorSpec& t : m.conv.arguments()) {
    if (const ConvMapping::Operand* o = m.argument(t.name)) {
      conv_args.push_back(fill(*o, t));
      continue;
    }
    ASSERT_TRUE(m.conv.bias) << "conv argument " << t.name << " is no operand";
    base::HostTensor b(m.conv.bias_spec());
    const MatrixView v = *d.fused_bias();  // a copy: fused_bias() returns an optional by value
    for (int64_t j = 0; j < d.n; ++j) b.store(j, arg(v.tensor).load(at(v, 0, 0, j)));
    conv_args.push_back(std::move(b));
  }
  Result<std::vector<base::HostTensor>> y = ops::conv::conv_reference(m.conv, conv_args);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  Result<std::vector<base::HostTensor>> expected = op.reference(sig, *args);
  ASSERT_TRUE(expected.ok());
  const MatrixView& y_view = m.result().staged ? m.result().staged_view : m.result().view;
  // With the epilogue, the forward's y [n, k, h] as the dense fp32 sums (group, n x h, a group's channel).
  const TensorSpec ys = m.conv.y_spec();
  const int64_t groups = m.conv.groups, per_group = m.conv.k / groups, pixels = ys.shape[2];
  std::vector<double> sums(m.epilogue ? static_cast<size_t>(ys.numel()) : 0);
  for (int64_t n = 0; m.epilogue && n < ys.shape[0]; ++n)
    for (int64_t k = 0; k < ys.shape[1]; ++k)
      for (int64_t h = 0; h < pixels; ++h)
        sums[static_cast<size_t>(((k / per_group) * ys.shape[0] * pixels + n * pixels + h) * per_group +
                                 k % per_group)] =
            y->at(0).load(n * ys.strides[0] + k * ys.strides[1] + h * ys.strides[2]);
  if (m.epilogue) {
    EXPECT_FALSE(m.y.staged) << "the epilogue kernel writes out itself";
  }
  double worst = 0;
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        double v = m.epilogue ? sums[static_cast<size_t>(at({"", m.sums}, b, i, j))] : y->at(0).load(at(y_view, b, i, j));
        if (m.epilogue) {
          v *= d.alpha;
          if (d.c) v += d.beta * arg(d.c->tensor).load(at(*d.c, b, i, j));
          if (d.bias) v += arg(d.bias->tensor).load(at(*d.bias, b, i, j));
          v = d.activation.apply(v);
        }
        worst = std::max(worst, std::abs(v - expected->at(0).load(at(d.out, b, i, j))));
      }
  EXPECT_LT(worst, 1e-9) << sig.command() << " (" << label << "): " << m.conv.command();
}

std::optional<ConvMapping> forward_mapping(const GemmDesc& d, bool channels_last) {
  return ops::gemm::map_to_conv(d, channels_last);
}

TEST(GemmMappingTest, TheMappedConvComputesTheGemm) {
  std::ifstream in("tests/gpu/gemm_matrix.txt");
  ASSERT_TRUE(in) << "tests run from the repository root";
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    Result<ParsedCommand> p = parse_command(line);
    ASSERT_TRUE(p.ok()) << line << ": " << p.status().to_string();
    const GemmSignature& g = gemm_of(*p);
    if (g.batch * g.m * g.n * g.k > (int64_t{1} << 27)) continue;  // small ones: the conv reference is float64 on the CPU
    for (bool channels_last : {false, true})
      expect_mapping_matches(
          ops::gemm::definition(), *p->signature, [&](const GemmDesc& d) { return forward_mapping(d, channels_last); },
          channels_last ? "channels last" : "any layout");
    expect_mapping_matches(ops::gemm::definition(), *p->signature, ops::gemm::map_in_place, "in place");
    expect_mapping_matches(
        ops::gemm::definition(), *p->signature, [](const GemmDesc& d) { return forward_mapping(d, true); },
        "transposed, channels last", true);
    ++lines;
  }
  EXPECT_GT(lines, 20);
}

// The faces that read a transposed GEMM in place: no copies, and the conv's result is the GEMM's
// (the reference check above runs them over the matrix).
TEST(GemmMappingTest, InPlaceFaces) {
  auto in_place = [](const std::string& line) {
    std::unique_ptr<ops::OpProblem> problem = ops::test::problem_of(line);
    return ops::gemm::map_in_place(dynamic_cast<const GemmProblem&>(*problem).desc);
  };
  // A stored k x m: the weight gradient of k one-pixel images, dy = A, x = B, dw = out.
  std::optional<ConvMapping> w = in_place("gemmbfp16 --a_w 96 --a_h 40 --b_w 72 --transA 1");
  ASSERT_TRUE(w.has_value());
  EXPECT_TRUE(w->weight_gradient());
  EXPECT_EQ(w->conv.n, 40);
  EXPECT_EQ(w->conv.c, 72);
  EXPECT_EQ(w->conv.k, 96);
  EXPECT_EQ(w->result().view.tensor, "d");
  EXPECT_EQ(w->argument("dy")->view.tensor, "a");
  EXPECT_EQ(w->argument("x")->view.tensor, "b");
  // No transpose: the forward of one image whose pixels are B's columns, w = A.
  std::optional<ConvMapping> f = in_place("gemmbfp16 --a_w 96 --a_h 40 --b_w 72");
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->weight_gradient());
  EXPECT_EQ(f->conv.n, 1);
  EXPECT_EQ(f->conv.input_size, (std::vector<int64_t>{72}));
  EXPECT_EQ(f->conv.input_layout, "NCH");
  EXPECT_EQ(f->argument("w")->view.tensor, "a");
  EXPECT_FALSE(f->x.staged || f->w.staged || f->y.staged || f->epilogue);
  // A stored k x m and B stored n x k: the data gradient of one image whose pixels are out's columns,
  // dx = out planar, dy = B channels-last, w = A (its K x C filter read transposed).
  std::optional<ConvMapping> t = in_place("gemmbfp16 --a_w 96 --a_h 40 --b_w 72 --transA 1 --transB 1");
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->data_gradient());
  EXPECT_EQ(t->conv.n, 1);
  EXPECT_EQ(t->conv.c, 96);
  EXPECT_EQ(t->conv.k, 40);
  EXPECT_EQ(t->conv.input_size, (std::vector<int64_t>{72}));
  EXPECT_EQ(t->conv.input_layout, "NCH");
  EXPECT_EQ(t->conv.output_layout, "NHC");
  EXPECT_EQ(t->result().view.tensor, "d");
  EXPECT_EQ(t->argument("dy")->view.tensor, "b");
  EXPECT_EQ(t->argument("w")->view.tensor, "a");
  // B stored n x k alone, a batch, or an epilogue: none (the forward reads B^T in place, or stages).
  EXPECT_FALSE(in_place("gemmbfp16 --a_w 96 --a_h 40 --b_w 72 --transB 1").has_value());
  EXPECT_FALSE(in_place("gemmbfp16 --a_w 96 --a_h 40 --b_w 72 --batch_count 2").has_value());
  EXPECT_FALSE(in_place("gemmbfp16 --a_w 96 --a_h 40 --b_w 72 --bias 1").has_value());
  EXPECT_FALSE(in_place("gemmbfp16 --a_w 96 --a_h 40 --b_w 72 --alpha 2").has_value());
  // The Hopper GEMM takes them where its forward would stage: nothing copied. (-F 3, dB = A^T dD, is
  // the transA product.)
  for (const auto& [t, entry, how] : {std::tuple{"", "boo_wgmma_y", "native NCHW 1x1: w K-major, pixels N-major"},
                                      {" --transA 1", "boo_wgmma_dw", "dy by TMA, x by TMA"},
                                      {" -F 3", "boo_wgmma_dw", "dy by TMA, x by TMA"},
                                      {" --transA 1 --transB 1", "boo_wgmma_dx",
                                       "native NCHW 1x1: w M-major, pixels K-major (channels-last), filter by "
                                       "TMA, x by TMA"}}) {
    ops::test::Planned p = ops::test::plan_of(ops::gemm::gemm_via_conv_wgmma(),
                                              std::string("gemmbfp16 --a_w 4096 --a_h 4096 --b_w 4096") + t);
    ASSERT_EQ(p.entries.size(), 1u) << t;
    EXPECT_EQ(p.entries[0], entry) << t;
    EXPECT_NE(p.config.find(how), std::string::npos) << p.config;
  }
}

TEST(GemmMappingTest, LayoutsInPlaceOfCopies) {
  auto mapping = [](const std::string& line) {
    std::unique_ptr<ops::OpProblem> problem = ops::test::problem_of(line);
    return ops::gemm::map_to_conv(dynamic_cast<const GemmProblem&>(*problem).desc, false);
  };
  // Every transpose of an unbatched GEMM is a conv layout: nothing is copied by the GEMM.
  for (const char* t : {"", " -u 1", " -v 1", " -u 1 -v 1"}) {
    const ConvMapping m = mapping(std::string("gemmbfp16 -k 64 -m 128 -n 96") + t);
    EXPECT_FALSE(m.x.staged || m.w.staged || m.y.staged || m.grouped || m.epilogue) << t << ": " << m.conv.command();
  }
  // Batched with both operands batched: one group per entry, A and out in place, B^T copied.
  const ConvMapping g = mapping("gemmbfp16 -k 64 -m 128 -n 96 -b 4 -v 1");
  EXPECT_TRUE(g.grouped);
  EXPECT_EQ(g.conv.groups, 4);
  EXPECT_TRUE(g.x.staged);
  EXPECT_FALSE(g.w.staged || g.y.staged);
  // A per-column bias with activation is the conv's epilogue; alpha is not.
  EXPECT_TRUE(mapping("gemm --bias 1 --activation relu").conv.bias);
  EXPECT_TRUE(mapping("gemm --bias 1 --alpha 2").epilogue);
}

// The GEMM tier named `name`.
const ops::GpuImplementation& gemm_tier(std::string_view name) {
  for (const ops::GpuImplementation* impl : ops::gemm::gemm_implementations())
    if (impl->name() == name) return *impl;
  ADD_FAILURE() << "no GEMM tier " << name;
  return *ops::gemm::gemm_implementations()[0];
}

TEST(GemmPlanTest, TiersAndBindings) {
  const auto impls = ops::gemm::gemm_implementations();
  ASSERT_EQ(impls.size(), 4u);
  EXPECT_EQ(impls[0]->name(), "gpu:gemm:wgmma_sm90");
  EXPECT_EQ(impls[1]->name(), "gpu:gemm:fp32_bf16x6");
  EXPECT_EQ(impls[2]->name(), "gpu:gemm:implicit_gemm");
  EXPECT_EQ(impls[3]->name(), "gpu:gemm:direct");
  // Strict fp32 as six bf16 products, its operands split where they lie (row-major A and B: no
  // staging copies); an epilogue the conv cannot fuse (alpha) leaves it to the implicit GEMM.
  ops::test::Planned fp32 = ops::test::plan_of(*impls[1], "gemm --a_w 4096 --a_h 4096 --b_w 4096");
  ASSERT_FALSE(fp32.entries.empty());
  EXPECT_EQ(fp32.entries.front(), "boo_fp32_split_x");
  EXPECT_EQ(fp32.entries.back(), "boo_conv_unstage_y");
  // A's 4096 rows of one pixel each are split as one row of 4096 pixels: full 32 x 32 tiles.
  const auto split_a = ops::test::params_of<ConvSplitParams>(fp32.launches[0]);
  EXPECT_EQ(split_a.sizes[0], 1);
  EXPECT_EQ(split_a.sizes[3], 4096);
  EXPECT_EQ(split_a.strides[4], 4096);  // a row's step in A
  EXPECT_EQ(split_a.pixel_stride, 6 * 4096);
  EXPECT_EQ(fp32.launches[0].grid.x, 4096u / 32);
  EXPECT_EQ(fp32.launches[0].grid.z, 1u);
  EXPECT_FALSE(ops::test::accepts(*impls[1], "gemm --a_w 4096 --a_h 4096 --b_w 4096 --alpha 0.5"));
  EXPECT_FALSE(ops::test::accepts(*impls[1], "gemm --a_w 4096 --a_h 4096 --b_w 4096 --fp32-math tf32"));
  // Fewer than the conv tier's 4096 rows, but columns for many waves of tiles (GPT-3's MLP at 2048
  // tokens: 16 x 288 tiles of 128): the Hopper tier (it ran on the mma.sync tier at 2.6x cuBLASLt's time).
  EXPECT_TRUE(ops::test::accepts(*impls[0], "gemmbfp16 --a_w 2048 --a_h 12288 --b_w 36864 --transB 1"));
  EXPECT_FALSE(ops::test::accepts(*impls[0], "gemmbfp16 --a_w 512 --a_h 256 --b_w 512 --transB 1"));
  // The Hopper tier takes a large bf16 GEMM with a bias (which only the channels-last forward fuses) with B
  // staged channels-last (n x k).
  ops::test::Planned big = ops::test::plan_of(*impls[0], "gemmbfp16 --a_w 4096 --a_h 4096 --b_w 4096 --bias 1");
  ASSERT_EQ(big.entries, (std::vector<std::string>{"boo_gemm_stage_w", "boo_wgmma_y"}));
  // Staging B (k x n) as n x k transposes: the tiled copy, its index space ordered (batch, j, p) so
  // that b is fastest along the kernel's rows and the copy along its columns.
  const auto stage = ops::test::params_of<GemmCopyParams>(big.launches[0]);
  EXPECT_EQ(stage.src, big.address["b"]);
  EXPECT_GE(stage.dst, big.workspace);
  EXPECT_EQ(stage.src_strides[1], 1);     // element (j, p) of b, stored k x n
  EXPECT_EQ(stage.src_strides[2], 4096);
  EXPECT_EQ(stage.dst_strides[1], 4096);  // of the copy, stored n x k
  EXPECT_EQ(stage.dst_strides[2], 1);
  EXPECT_EQ(big.launches[0].grid.x, 64u * 64u);  // one block per 64 x 64 tile
  EXPECT_EQ(big.launches[0].block.x, 256u);
  EXPECT_NE(big.source.text.find("boo::gemm_copy_tiled<boo::bf16, boo::bf16, false, false, 0>"), std::string::npos);
  EXPECT_NE(big.source.text.find("kFp32Out = false"), std::string::npos);
  // A small fp32 GEMM with the general epilogue: the implicit GEMM leaves its fp32 sums at the
  // workspace's start (not d), then the epilogue kernel reads them and writes d.
  ops::test::Planned small =
      ops::test::plan_of(gemm_tier("gpu:gemm:implicit_gemm"), "gemm --a_w 40 --a_h 64 --b_w 56 --alpha 0.5 --beta 2 --bias 1 --activation gelu");
  ASSERT_EQ(small.entries, (std::vector<std::string>{"boo_conv_stage_w", "boo_igemm_y", "boo_gemm_epilogue"}));
  const auto sums = ops::test::params_of<ConvIgemmParams>(small.launches[1]);
  EXPECT_EQ(sums.workspace, small.workspace);
  EXPECT_EQ(sums.out, 0u);
  EXPECT_NE(small.source.text.find("kFp32Out = true"), std::string::npos);
  EXPECT_GE(small.workspace_bytes, size_t{40} * 56 * sizeof(float));
  const auto epi = ops::test::params_of<GemmCopyParams>(small.launches.back());
  EXPECT_EQ(epi.src, small.workspace);
  EXPECT_EQ(epi.src_strides[1], 56);  // the sums (m, n) row-major
  EXPECT_EQ(epi.src_strides[2], 1);
  EXPECT_EQ(epi.dst, small.address["d"]);
  EXPECT_EQ(epi.addend, small.address["c"]);
  EXPECT_EQ(epi.bias, small.address["bias"]);
  EXPECT_EQ(epi.alpha, 0.5f);
  EXPECT_EQ(epi.beta, 2.0f);
  EXPECT_EQ(epi.bias_strides[2], 1);
  EXPECT_NE(small.source.text.find("boo::gemm_copy<float, float, true, true, 5>"), std::string::npos);
  // Split K with the epilogue kernel: the reduce sums the slices into the fp32 plane, the epilogue rounds.
  ops::test::Planned split = ops::test::plan_of(gemm_tier("gpu:gemm:implicit_gemm"), "gemmbfp16 --a_w 64 --a_h 10000 --b_w 64 --alpha 0.5");
  ASSERT_EQ(split.entries, (std::vector<std::string>{"boo_conv_stage_w", "boo_igemm_y", "boo_igemm_y_reduce",
                                                     "boo_gemm_epilogue"}));
  EXPECT_EQ(ops::test::params_of<ConvIgemmParams>(split.launches[2]).workspace, split.workspace);
  EXPECT_EQ(ops::test::params_of<ConvIgemmParams>(split.launches[2]).out, 0u);
  EXPECT_EQ(ops::test::params_of<GemmCopyParams>(split.launches[3]).src, split.workspace);
  EXPECT_NE(split.source.text.find("boo::gemm_copy<boo::bf16, float, false, false, 0>"), std::string::npos);
  // The Hopper tier with alpha: its consumers store fp32 sums, y is not staged.
  ops::test::Planned scaled = ops::test::plan_of(*impls[0], "gemmbfp16 --a_w 4096 --a_h 4096 --b_w 4096 --alpha 0.5");
  ASSERT_EQ(scaled.entries, (std::vector<std::string>{"boo_gemm_stage_w", "boo_wgmma_y", "boo_gemm_epilogue"}));
  EXPECT_EQ(ops::test::params_of<ConvIgemmParams>(scaled.launches[1]).workspace, scaled.workspace);
  EXPECT_EQ(ops::test::params_of<ConvIgemmParams>(scaled.launches[1]).out, 0u);
  EXPECT_GE(scaled.workspace_bytes, size_t{4096} * 4096 * sizeof(float));
  EXPECT_EQ(ops::test::params_of<GemmCopyParams>(scaled.launches[2]).src, scaled.workspace);
  EXPECT_EQ(ops::test::params_of<GemmCopyParams>(scaled.launches[2]).dst, scaled.address["d"]);
  // The direct conv with alpha: its sums in fp32 at the workspace's start.
  ops::test::Planned tiny = ops::test::plan_of(gemm_tier("gpu:gemm:direct"), "gemm --a_w 5 --a_h 2 --b_w 3 --alpha 2");
  ASSERT_EQ(tiny.entries, (std::vector<std::string>{"boo_conv_direct_y", "boo_gemm_epilogue"}));
  EXPECT_EQ(ops::test::params_of<ConvFaceParams>(tiny.launches[0]).b, tiny.workspace);
  EXPECT_NE(tiny.source.text.find("boo::conv_forward_face<int, float, 0, false, true>"), std::string::npos);
  // Tiny k and n: the implicit GEMM declines (depthwise-like), the direct conv runs it.
  EXPECT_FALSE(ops::test::accepts(gemm_tier("gpu:gemm:implicit_gemm"), "gemm --a_w 5 --a_h 2 --b_w 3"));
  EXPECT_TRUE(ops::test::accepts(gemm_tier("gpu:gemm:direct"), "gemm --a_w 5 --a_h 2 --b_w 3"));
}

// --fp32-math tf32 on the Hopper tier: the channels-last forward on TF32 wgmma, which reads K-major operands
// only, so a row-major B is staged n x k (one copy), never the in-place faces' planar operands (two copies
// inside the conv: x's and y's); B stored n x k (transB) runs without a copy.
TEST(GemmPlanTest, Tf32RunsTheChannelsLastForwardOnTheHopperTier) {
  const ops::GpuImplementation& hopper = gemm_tier("gpu:gemm:wgmma_sm90");
  ops::test::Planned staged = ops::test::plan_of(hopper, "gemm --a_w 4096 --a_h 4096 --b_w 4096 --fp32-math tf32");
  ASSERT_EQ(staged.entries, (std::vector<std::string>{"boo_gemm_stage_w", "boo_wgmma_y"}));
  EXPECT_NE(staged.source.text.find("using T = float;"), std::string::npos);
  EXPECT_NE(staged.source.text.find("kType = 2;"), std::string::npos);
  EXPECT_NE(staged.config.find("tile 128x256x32 "), std::string::npos) << staged.config;
  ops::test::Planned direct =
      ops::test::plan_of(hopper, "gemm --a_w 4096 --a_h 4096 --b_w 4096 --transB 1 --fp32-math tf32");
  EXPECT_EQ(direct.entries, (std::vector<std::string>{"boo_wgmma_y"}));
  // An epilogue the conv cannot fuse needs the conv's fp32 sums, which TF32 does not leave: the next tier.
  EXPECT_FALSE(ops::test::accepts(hopper, "gemm --a_w 4096 --a_h 4096 --b_w 4096 --fp32-math tf32 --alpha 0.5"));
}

// The copy's form (gemm_copy_plan.hpp): element-wise where src and dst are fastest along the same
// index, tiled where they are not, the kernel's rows then src's fastest index and its columns dst's.
TEST(GemmCopyPlanTest, TransposesAreTiled) {
  using ops::gemm::copy_form;
  using ops::gemm::CopyForm;
  using ops::gemm::fastest_dim;
  EXPECT_EQ(fastest_dim({4096, 64, 1}, {2, 64, 64}), 2);
  EXPECT_EQ(fastest_dim({0, 1, 70}, {3, 70, 47}), 1);
  EXPECT_EQ(fastest_dim({1, 5, 7}, {1, 3, 4}), 1);    // an extent of 1 is no direction
  EXPECT_EQ(fastest_dim({1, 3, 30}, {3, 10, 5}), 0);  // the batch innermost
  EXPECT_EQ(fastest_dim({0, -2, 8}, {3, 10, 5}), 1);  // a broadcast is none, a negative stride counts its size
  EXPECT_EQ(fastest_dim({0, 0, 0}, {4, 3, 2}), -1);   // broadcast everywhere
  // Columns innermost on both sides (batch and rows swapped): element-wise, coalesced already.
  CopyForm f = copy_form({3, 70, 47}, {3290, 47, 1}, {47, 141, 1});
  EXPECT_FALSE(f.tiled);
  EXPECT_EQ(f.order, (std::array<int, 3>{0, 1, 2}));
  // Rows innermost on both sides (a transposed B regrouped per batch entry): element-wise with
  // the rows as the kernel's columns, so that a warp's 32 threads still touch adjacent elements.
  f = copy_form({3, 70, 47}, {3290, 1, 70}, {70, 1, 210});
  EXPECT_FALSE(f.tiled);
  EXPECT_EQ(f.order, (std::array<int, 3>{0, 2, 1}));
  // A broadcast source: dst decides (the batch innermost here).
  f = copy_form({3, 70, 47}, {0, 0, 0}, {1, 141, 3});
  EXPECT_FALSE(f.tiled);
  EXPECT_EQ(f.order, (std::array<int, 3>{1, 2, 0}));
  // Rows and columns swapped, either way round.
  f = copy_form({3, 70, 47}, {3290, 1, 70}, {3290, 47, 1});
  EXPECT_TRUE(f.tiled);
  EXPECT_EQ(f.order, (std::array<int, 3>{0, 1, 2}));
  f = copy_form({3, 70, 47}, {3290, 47, 1}, {3290, 1, 70});
  EXPECT_TRUE(f.tiled);
  EXPECT_EQ(f.order, (std::array<int, 3>{0, 2, 1}));
  // The batch innermost in src ([rows, cols, batch] storage) into row-major matrices: batch and rows tiled.
  f = copy_form({3, 70, 47}, {1, 141, 3}, {3290, 47, 1});
  EXPECT_TRUE(f.tiled);
  EXPECT_EQ(f.order, (std::array<int, 3>{1, 0, 2}));
  // One element: nothing to order.
  f = copy_form({1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  EXPECT_FALSE(f.tiled);
  EXPECT_EQ(f.order, (std::array<int, 3>{0, 1, 2}));
}

// The launch plan_copy returns, its index space reordered for the tiled form, moves every element
// the spec names exactly once: the multiset of (src, dst, addend, bias) offsets over the kernel's
// index space is the spec's. Partial tiles, batches, a batch-innermost source, both forms.
TEST(GemmCopyPlanTest, ReorderedLaunchAddressesTheSameElements) {
  using ops::gemm::CopySpec;
  using ops::gemm::Extents3;
  using ops::gemm::Strides3;
  using ops::TensorBinding;
  struct Case {
    Extents3 sizes;
    Strides3 src, dst;
    bool tiled;
    uint32_t grid;  // blocks: one per 64 x 64 tile for the tiled form
  };
  const Case cases[] = {
      {{3, 70, 47}, {3290, 1, 70}, {3290, 47, 1}, true, 3 * 2 * 1},  // transposed, batched, partial tiles
      {{2, 130, 65}, {130 * 65, 65, 1}, {130 * 65, 1, 130}, true, 2 * 2 * 3},
      {{3, 70, 47}, {1, 141, 3}, {3290, 47, 1}, true, 70 * 1 * 1},  // batch innermost: tiles of (batch, col)
      {{3, 70, 47}, {3290, 47, 1}, {47, 141, 1}, false, (3 * 70 * 47 + 255) / 256},
      {{3, 70, 47}, {3290, 1, 70}, {70, 1, 210}, false, (3 * 70 * 47 + 255) / 256},  // rows innermost
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "src strides " << c.src[0] << "," << c.src[1] << "," << c.src[2]);
    CopySpec spec{.entry = "boo_copy", .dtype = DType::kBF16, .src_fp32 = true, .sizes = c.sizes};
    spec.src = {TensorBinding::workspace(0), c.src};
    spec.dst = {{TensorBinding::Source::kResult, 0, 0}, c.dst};
    spec.addend = ops::gemm::CopyOperand{{TensorBinding::Source::kArgument, 0, 0}, c.dst};
    spec.bias = ops::gemm::CopyOperand{{TensorBinding::Source::kArgument, 1, 0}, {0, 0, 1}};
    spec.alpha = 0.5;
    base::KernelSource source;
    Result<ops::LaunchStep> step = ops::gemm::plan_copy(spec, ops::test::sm90(), source);
    ASSERT_TRUE(step.ok()) << step.status().to_string();
    EXPECT_EQ(source.entries, (std::vector<std::string>{"boo_copy"}));
    EXPECT_NE(source.text.find(c.tiled ? "boo::gemm_copy_tiled<boo::bf16, float, true, true, 0>(p)"
                                       : "boo::gemm_copy<boo::bf16, float, true, true, 0>(p)"),
              std::string::npos)
        << source.text;
    EXPECT_EQ(step->grid.x, c.grid);
    EXPECT_EQ(step->block.x, 256u);
    ASSERT_EQ(step->params.size(), sizeof(GemmCopyParams));
    GemmCopyParams p;
    std::memcpy(&p, step->params.data(), sizeof p);
    EXPECT_EQ(p.alpha, 0.5f);
    // Tiled: src fastest along the kernel's rows, dst along its columns; element-wise: both along its columns.
    EXPECT_EQ(ops::gemm::fastest_dim({p.src_strides[0], p.src_strides[1], p.src_strides[2]},
                                     {p.sizes[0], p.sizes[1], p.sizes[2]}), c.tiled ? 1 : 2);
    EXPECT_EQ(ops::gemm::fastest_dim({p.dst_strides[0], p.dst_strides[1], p.dst_strides[2]},
                                     {p.sizes[0], p.sizes[1], p.sizes[2]}), 2);
    using Offsets = std::array<long long, 4>;
    // Over the spec's std::arrays and over the parameter block's long long[3]s alike.
    auto walk = [](const auto& sizes, const auto& src, const auto& dst, const auto& addend, const auto& bias) {
      std::vector<Offsets> out;
      for (long long b = 0; b < sizes[0]; ++b)
        for (long long r = 0; r < sizes[1]; ++r)
          for (long long col = 0; col < sizes[2]; ++col) {
            auto at = [&](const auto& s) -> long long { return b * s[0] + r * s[1] + col * s[2]; };
            out.push_back({at(src), at(dst), at(addend), at(bias)});
          }
      std::sort(out.begin(), out.end());
      return out;
    };
    const Strides3 bias{0, 0, 1};
    const std::vector<Offsets> want = walk(c.sizes, c.src, c.dst, c.dst, bias);
    EXPECT_EQ(walk(p.sizes, p.src_strides, p.dst_strides, p.addend_strides, p.bias_strides), want);
  }
  // A second copy in the same source includes gemm_copy.cuh once; a size of 0 is INTERNAL.
  base::KernelSource source;
  CopySpec spec{.entry = "boo_one", .dtype = DType::kF32, .sizes = {1, 5, 7}};
  spec.src = {{ops::TensorBinding::Source::kArgument, 0, 0}, {35, 1, 5}};
  spec.dst = {{ops::TensorBinding::Source::kResult, 0, 0}, {35, 7, 1}};
  ASSERT_TRUE(ops::gemm::plan_copy(spec, ops::test::sm90(), source).ok());
  spec.entry = "boo_two";
  ASSERT_TRUE(ops::gemm::plan_copy(spec, ops::test::sm90(), source).ok());
  EXPECT_EQ(source.entries, (std::vector<std::string>{"boo_one", "boo_two"}));
  const std::string include = "#include \"boo/gemm/gemm_copy.cuh\"";
  EXPECT_EQ(source.text.find(include), source.text.rfind(include));
  spec.sizes = {1, 0, 7};
  EXPECT_EQ(ops::gemm::plan_copy(spec, ops::test::sm90(), source).status().code(), StatusCode::kInternal);
}

// The transposes of issue 20's large GEMMs (H200: 2-3.5x cuBLASLt's time with one thread per
// staged element) stage through the tiled copy; the K-major pair stages nothing; a grouped
// epilogue (sums stored column-major per batch entry) is tiled, an ungrouped one element-wise.
TEST(GemmPlanTest, TransposingCopiesAreTiled) {
  const ops::GpuImplementation& hopper = *ops::gemm::gemm_implementations()[0];
  // With a bias the channels-last forward runs them (without, map_in_place reads transA in place).
  ops::test::Planned nn = ops::test::plan_of(hopper, "gemmbfp16 --a_w 8192 --a_h 8192 --b_w 8192 --transA 1 --bias 1");
  ASSERT_EQ(nn.entries, (std::vector<std::string>{"boo_gemm_stage_x", "boo_gemm_stage_w", "boo_wgmma_y"}));
  for (const char* entry : {"boo_gemm_stage_x(const boo::GemmCopyParams p) { boo::gemm_copy_tiled<boo::bf16, boo::bf16",
                            "boo_gemm_stage_w(const boo::GemmCopyParams p) { boo::gemm_copy_tiled<boo::bf16, boo::bf16"})
    EXPECT_NE(nn.source.text.find(entry), std::string::npos) << entry;
  EXPECT_EQ(nn.launches[0].grid.x, 128u * 128u);
  ops::test::Planned tn = ops::test::plan_of(hopper, "gemmbfp16 --a_w 8192 --a_h 8192 --b_w 8192 --transB 1");
  EXPECT_EQ(tn.entries, (std::vector<std::string>{"boo_wgmma_y"}));
  ops::test::Planned rect = ops::test::plan_of(hopper, "gemmbfp16 --a_w 4096 --a_h 8192 --b_w 12288 --transA 1 --bias 1");
  ASSERT_EQ(rect.entries, (std::vector<std::string>{"boo_gemm_stage_x", "boo_gemm_stage_w", "boo_wgmma_y"}));
  EXPECT_EQ(rect.launches[0].grid.x, 64u * 128u);   // A (k x m = 8192 x 4096) into m x k
  EXPECT_EQ(rect.launches[1].grid.x, 128u * 192u);  // B (k x n = 8192 x 12288) into n x k
  const ops::GpuImplementation& igemm = gemm_tier("gpu:gemm:implicit_gemm");
  ops::test::Planned grouped =
      ops::test::plan_of(igemm, "gemmbfp16 --a_w 40 --a_h 64 --b_w 56 --batch_count 2 --bias 1 --activation silu");
  ASSERT_FALSE(grouped.entries.empty());
  EXPECT_EQ(grouped.entries.back(), "boo_gemm_epilogue");
  EXPECT_NE(grouped.source.text.find("boo::gemm_copy_tiled<boo::bf16, float, false, true, 4>"), std::string::npos);
  const auto epi = ops::test::params_of<GemmCopyParams>(grouped.launches.back());
  EXPECT_EQ(epi.src_strides[1], 1);  // the sums of one entry, stored n x m: fastest along the rows
  EXPECT_EQ(epi.dst_strides[2], 1);  // d row-major
  EXPECT_EQ(grouped.launches.back().grid.x, 2u);  // 2 entries of one partial 40 x 56 tile
  ops::test::Planned flat = ops::test::plan_of(igemm, "gemm --a_w 40 --a_h 64 --b_w 56 --alpha 0.5 --beta 2");
  EXPECT_NE(flat.source.text.find("boo::gemm_copy<float, float, true, false, 0>"), std::string::npos);
}

// ConvProblem::fp32_result (what gpu:gemm asks for its epilogue kernel, gpu:conv:fp32_bf16x6 for its
// six products): every conv tier takes one forward face without bias or activation and declines the
// rest with the reason; gpu:conv:wgmma_sm90 takes the data and weight faces too, not stride phases.
TEST(GemmPlanTest, ConvTiersLeaveFp32SumsOfOneDirection) {
  const ops::ArchSpec arch = ops::test::sm90();
  auto verdict = [&](const ops::GpuImplementation& tier, const std::string& line) {
    Result<ParsedCommand> p = parse_command(line);
    EXPECT_TRUE(p.ok()) << line;
    const ops::conv::ConvProblem problem(dynamic_cast<const ConvSignature&>(*p->signature), true);
    return tier.accepts(problem, arch);
  };
  const std::string forward = "convbfp16 -n 64 -c 128 -H 64 -W 64 -k 128 -y 1 -x 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  for (const ops::GpuImplementation* tier : {&ops::conv::wgmma_sm90_implementation(), &ops::conv::implicit_gemm_implementation(),
                                        &ops::conv::direct_implementation()}) {
    const bool every_face = tier == &ops::conv::wgmma_sm90_implementation();
    EXPECT_TRUE(verdict(*tier, forward + " -F 1").ok()) << tier->name();
    for (const char* rest : {" -F 2", " -F 4"})
      EXPECT_EQ(verdict(*tier, forward + rest).ok(), every_face) << tier->name() << rest;
    for (const char* rest : {" -F 1 -b 1", " -F 1 --activation relu", " -F 2 -u 2 -v 2", " -F 2 -g 2"}) {
      if (!every_face && std::string(rest) == " -F 2 -u 2 -v 2") continue;
      const Status s = verdict(*tier, forward + rest);
      EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << tier->name() << rest;
      EXPECT_NE(s.message().find("fp32 sums"), std::string::npos) << s.message();
    }
  }
}

}  // namespace
}  // namespace boo
