// boo tests: add-layernorm (MIOpen's addlayernorm, y = LN(x + x2)) — command
// lines and canonical commands, and its reference as layer norm's of x + x2
// (forward and backward), which the layer norm tests check by hand and
// against finite differences.
#include <gtest/gtest.h>

#include "boo/norm.hpp"
#include "boo/registry.hpp"
#include "ops/norm/norm_ref.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using testing::logical_values;
using testing::run_reference;

const NormSignature& norm_of(const ParsedCommand& p) { return dynamic_cast<const NormSignature&>(*p.signature); }

TEST(AddLayerNormTest, MiopenModesAndRoundTrips) {
  Result<ParsedCommand> d = parse_command(std::string("addlayernorm"));
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(d->signature->op_name(), "addlayernorm");
  EXPECT_TRUE(norm_of(*d).fused_add);
  EXPECT_FALSE(norm_of(*d).weight);  // MIOpen's default -m 2
  EXPECT_EQ(norm_of(*d).directions, kNormForward);
  const std::vector<TensorSpec> args = d->signature->arguments();  // x, x2
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[1].name, "x2");
  EXPECT_EQ(args[1].shape, args[0].shape);
  for (const char* line : {"addlayernorm", "addlayernormfp16 -X 4x6x8 -o 2 -m 3 -F 0",
                           "addlayernormbfp16 -X 4x6x8 -o 1 -m 3 -F 6", "addlayernorm -X 4x8 -o 1 -m 2 -F 2"}) {
    SCOPED_TRACE(line);
    Result<ParsedCommand> first = parse_command(std::string(line));
    ASSERT_TRUE(first.ok()) << first.status().to_string();
    Result<ParsedCommand> again = parse_command(first->signature->command());
    ASSERT_TRUE(again.ok()) << first->signature->command() << ": " << again.status().to_string();
    EXPECT_TRUE(again->signature->equals(*first->signature)) << first->signature->command();
    EXPECT_EQ(first->signature->func_name().rfind("add_layer_norm_", 0), 0u) << first->signature->func_name();
  }
  Result<ParsedCommand> both = parse_command(std::string("addlayernorm -X 4x8 -o 1 -m 3 -F 0"));
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(norm_of(*both).directions, kNormForward | kNormBackwardData | kNormBackwardWeight | kNormBackwardBias);
  for (const char* bad : {"addlayernorm -m 1", "addlayernorm -m 5", "addlayernorm -F 3"}) {
    Result<ParsedCommand> p = parse_command(std::string(bad));
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

// Every result of addlayernorm(x, x2) is layer norm's of x + x2: forward and
// backward (whose dx is x's and x2's gradient), with and without the backward
// reading the statistics the forward saves.
TEST(AddLayerNormTest, ReferenceIsLayerNormOfTheSum) {
  for (auto [add, plain] : {std::pair{"addlayernorm -X 3x4x10 -o 1 -m 3 -F 0", "layernorm -X 3x4x10 -o 1 -m 1 -F 1"},
                            {"addlayernorm -X 5x12 -o 1 -m 2 -F 0", "layernorm -X 5x12 -o 1 -m 0 -F 1"}}) {
    SCOPED_TRACE(add);
    testing::ReferenceRun fused = run_reference(add);  // x, x2, [weight, bias,] dy
    Result<ParsedCommand> ln = parse_command(std::string(plain));
    ASSERT_TRUE(ln.ok());
    // Layer norm's -X syntax has no forward-and-backward command: the same
    // layer norm with the fused one's directions.
    LayerNormSignature ln_back = dynamic_cast<const LayerNormSignature&>(*ln->signature);
    ASSERT_TRUE(fused.sig);
    ln_back.directions = dynamic_cast<const NormSignature&>(*fused.sig).directions;
    TensorSpec sum_spec = fused.args[0].spec();
    sum_spec.dtype = DType::kF64;  // x + x2 exactly, as the reference adds them
    base::HostTensor sum(sum_spec);
    for (int64_t i = 0; i < sum.spec().numel(); ++i) sum.store(i, fused.args[0].load(i) + fused.args[1].load(i));
    std::vector<base::HostTensor> ln_args{sum};
    for (size_t i = 2; i < fused.args.size(); ++i) ln_args.push_back(fused.args[i]);
    Result<std::vector<base::HostTensor>> r = ops::norm::norm_reference(ln_back, ln_args);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_EQ(r->size(), fused.results.size());
    for (size_t k = 0; k < r->size(); ++k) EXPECT_EQ(logical_values((*r)[k]), logical_values(fused.results[k])) << k;
  }
}

}  // namespace
}  // namespace boo
