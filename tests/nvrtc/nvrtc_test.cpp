// boo tests (label nvrtc, no GPU needed): every device source compiles alone
// for sm_90a, and so does every kernel module the implementations generate
// across a matrix of signatures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <set>

#include "boo/registry.hpp"
#include "jit/embedded_sources.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "ops/conv/conv_staging.hpp"
#include "ops/conv/device/conv_wgmma_params.cuh"
#include "ops/op_registry.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/kernel_builder.hpp"

namespace boo {
namespace {

const char* kArch = "sm_90a";
// ptxas's report of wgmma it serialized (C7514, C7518, ...): the kernel loses most of the tensor cores' overlap.
constexpr const char* kWgmmaSerialized = "wgmma.mma_async instructions are serialized";

// The plan `impl` makes of `sig` on `device` and its configuration's text,
// or why it declines.
struct Planned {
  ops::Plan plan;
  std::string config;
};

Result<Planned> plan_for(const ops::GpuImplementation& impl, const OpSignature& sig, const DeviceInfo& device) {
  BOO_ASSIGN_OR_RETURN(std::unique_ptr<ops::OpProblem> problem, ops::find_op(sig.op_name())->make_problem(sig));
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  BOO_RETURN_IF_ERROR(impl.accepts(*problem, arch));
  BOO_ASSIGN_OR_RETURN(std::unique_ptr<const ops::Config> config, impl.configure(*problem, arch));
  BOO_ASSIGN_OR_RETURN(ops::Plan plan, impl.plan(*problem, *config, arch));
  return Planned{std::move(plan), config->text()};
}

// The conv tier named `name` (nullptr where none is).
const ops::GpuImplementation* conv_tier(std::string_view name) {
  for (const ops::GpuImplementation* impl : ops::find_op("conv")->gpu_implementations())
    if (impl->name() == name) return impl;
  return nullptr;
}

// gpu:conv:wgmma_sm90's module for `command`, planned and compiled for sm_90a into `out`: without spills or stack,
// with the register reallocation honoured (C7508) and the wgmma unserialized. ptxas serializes the wgmma where it
// sees the accumulators read while a wgmma may be in flight (C7514: every weight face and split forward did, until
// finish_tile ran on every path of a unit with k-blocks), or a wait for them behind a branch (C7518: every
// stride-phased data face did, until finish_tile waited on every path).
struct HopperModule {
  Planned planned;
  jit::CompiledKernel kernel;
};
void compile_hopper_module(const std::string& command, const DeviceInfo& device, std::optional<HopperModule>& out) {
  Result<ParsedCommand> p = parse_command(std::string_view(command));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const ops::GpuImplementation* hopper = conv_tier("gpu:conv:wgmma_sm90");
  ASSERT_NE(hopper, nullptr);
  Result<Planned> planned = plan_for(*hopper, *p->signature, device);
  ASSERT_TRUE(planned.ok()) << planned.status().to_string();
  Result<jit::CompiledKernel> k = jit::compile_kernel(planned->plan.source, kArch, true);
  ASSERT_TRUE(k.ok()) << k.status().to_string();
  EXPECT_GT(k->cubin.size(), 0u);
  EXPECT_EQ(k->spill_bytes, 0) << k->log;
  EXPECT_EQ(k->stack_bytes, 0) << k->log;
  EXPECT_EQ(k->log.find("C7508"), std::string::npos) << "setmaxnreg ignored:\n" << k->log;
  EXPECT_EQ(k->log.find(kWgmmaSerialized), std::string::npos) << k->log;
  out = HopperModule{std::move(planned).value(), std::move(k).value()};
}

TEST(NvrtcTest, EveryDeviceSourceCompilesAlone) {
  ASSERT_FALSE(jit::embedded_sources().empty());
  for (const jit::EmbeddedSource& s : jit::embedded_sources()) {
    SCOPED_TRACE(std::string(s.include_name));
    jit::KernelSource src{"self_contained.cu", "#include \"" + std::string(s.include_name) + "\"\n", {}};
    Result<jit::CompiledKernel> k = jit::compile_kernel(src, kArch, false);
    EXPECT_TRUE(k.ok()) << k.status().to_string();
  }
}

TEST(NvrtcTest, IncludedDigestFollowsIncludes) {
  const std::string conv = jit::included_sources_digest("#include \"boo/conv/conv_direct.cuh\"\n");
  const std::string ln = jit::included_sources_digest("#include \"boo/norm/norm_simple.cuh\"\n");
  EXPECT_NE(conv, ln);
  EXPECT_EQ(conv, jit::included_sources_digest("#include \"boo/conv/conv_direct.cuh\"\n// other text\n"));
}

// Generated modules of every implementation over a matrix of signatures.
TEST(NvrtcTest, GeneratedModulesCompile) {
  std::vector<std::string> commands;
  for (const char* dtype : {"conv", "convfp16", "convbfp16"}) {
    for (const char* act : {"none", "relu", "sigmoid", "tanh", "silu", "gelu", "gelu_tanh", "leaky_relu:0.1",
                            "clamp:0:6"}) {
      commands.push_back(std::string(dtype) + " -n 2 -c 4 -H 5 -W 5 -k 4 -F 1 -b 1 --activation " + act);
    }
    commands.push_back(std::string(dtype) + " -n 2 -c 4 -H 5 -W 5 -k 4 -F 0 -b 1");
    commands.push_back(std::string(dtype) + " -m trans -n 2 -c 4 -H 5 -W 5 -k 4 -u 2 -v 2 -F 0 -b 1");
  }
  // Odd channel counts: the forward and weight faces on channel-padded copies (layouts, 1-3-D).
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  for (const std::string& geometry : {std::string("-n 2 -c 5 -H 9 -W 9 -k 16 -y 3 -x 3 -p 1 -q 1 -F 0"),
                                      std::string("-n 2 -c 35 -H 6 -W 4 -k 35 -y 1 -x 1 -F 4"),
                                      std::string("-n 2 -c 13 -H 7 -W 7 -k 8 -y 3 -x 3 -F 1 -b 1")}) {
    commands.push_back("convbfp16 " + geometry);
    commands.push_back("convbfp16 " + geometry + nhwc);
  }
  // NCHW with even pixel counts: the 16-bit transposes move element pairs.
  for (const char* dtype : {"convfp16", "convbfp16"}) commands.push_back(std::string(dtype) + " -n 2 -c 5 -H 6 -W 6 -k 16 -y 3 -x 3 -p 1 -q 1 -F 0");
  commands.push_back("convfp16 -_ 3 -n 1 -c 3 --in_d 4 -H 5 -W 5 -k 8 --fil_d 3 -y 3 -x 3 --pad_d 1 -p 1 -q 1 -F 0 "
                     "--in_layout NDHWC --fil_layout NDHWC --out_layout NDHWC");
  commands.push_back("convbfp16 --spatial_dim 1 -n 2 -c 7 -H 33 -k 8 -y 5 -p 2 -F 0 --in_layout NHC --fil_layout NHC "
                     "--out_layout NHC");
  // Depthwise convs (gpu:conv:depthwise): both tile layouts, every face, stride 2, multiplier 2 with
  // dilation, 7x7 (49 weight-gradient accumulators per thread), 1-D, transposed, a mixed layout.
  for (const char* dtype : {"conv", "convfp16", "convbfp16"}) {
    for (const std::string& geometry : {std::string("-n 2 -c 32 -H 15 -W 15 -k 32 -y 3 -x 3 -p 1 -q 1 -g 32"),
                                        std::string("-n 2 -c 24 -H 9 -W 9 -k 24 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 24"),
                                        std::string("-n 2 -c 8 -H 14 -W 14 -k 16 -y 5 -x 5 -p 4 -q 4 -l 2 -j 2 -g 8"),
                                        std::string("-n 2 -c 16 -H 9 -W 9 -k 16 -y 7 -x 7 -p 3 -q 3 -g 16")}) {
      for (const char* directions : {" -F 1 -b 1 --activation clamp:0:6", " -F 0 -b 1"}) {
        commands.push_back(std::string(dtype) + " " + geometry + directions);
        commands.push_back(std::string(dtype) + " " + geometry + directions + nhwc);
      }
    }
  }
  commands.push_back("convbfp16 -m trans -n 2 -c 16 -H 7 -W 7 -k 16 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 16 -F 0 -b 1");
  commands.push_back("conv --spatial_dim 1 -n 2 -c 8 -H 33 -k 8 -y 7 -p 3 -u 2 -g 8 -F 0 --in_layout NHC "
                     "--fil_layout NHC --out_layout NHC");
  commands.push_back("convfp16 -n 2 -c 32 -H 15 -W 15 -k 32 -y 3 -x 3 -p 1 -q 1 -g 32 -F 0 --out_layout NHWC");
  // gpu:conv:direct's weight face split over the positions (a filter of few weights) and its partials' sum.
  commands.push_back("convbfp16 -n 16 -c 2 -H 24 -W 16 -k 2 -y 1 -x 1 -F 4" + nhwc);
  commands.push_back("conv -n 16 -c 2 -H 24 -W 16 -k 2 -y 1 -x 1 -F 4");
  for (const char* dtype : {"layernorm", "layernormfp16", "layernormbfp16"}) {
    for (const char* mode : {"-m 0 -F 1", "-m 1 -F 1", "-m 1 --bias 0 -F 1", "-m 1 -F 14", "-m 0 -F 2", "-F 4",
                             "-F 8", "-m 1 -F 6"}) {
      commands.push_back(std::string(dtype) + " -X 3x4x8 -o 2 " + mode);
    }
  }
  // MIOpen's current layernorm syntax: forward and backward in one module, layouts.
  for (const char* line : {"layernormbfp16 -N 2 -C 4 -H 3 -W 8 -o 3 -m 1 -F 0", "layernorm -N 2 -C 4 -H 3 -W 8 -o 1 -F 0",
                           "layernormfp16 -N 2 -C 4 -H 3 -W 8 --layout NHWC -o 1 -m 1 -F 0",
                           "layernorm -N 2 -C 4 -D 2 -H 3 -W 8 --layout NDHWC -o 4 -m 1 -F 2"})
    commands.push_back(line);
  // Batch norm: every token, pass, mode and layout (channels last and planes, 2-D and 3-D).
  for (const char* token : {"bnorm", "bnormfp16", "bnormbfp16", "bnormfp16fp32", "bnormbfp16fp32"}) {
    for (const char* geometry : {"-n 4 -c 64 -H 7 -W 7 --layout NHWC", "-n 4 -c 6 -H 7 -W 8",
                                 "-n 2 -c 3 -D 2 -H 5 -W 6 --layout NDHWC", "-n 2 -c 3 -D 2 -H 5 -W 6"}) {
      for (const char* pass : {"-m 1 -F 1 -s 1 -r 1", "-m 0 -F 1", "-m 1 -F 2 -r 1", "-m 1 -F 2", "-m 1 -F 0 -b 1 -s 1",
                               "-m 0 -F 0 -b 1"})
        commands.push_back(std::string(token) + " " + geometry + " " + pass);
    }
  }
  // Add-layernorm: x + x2 on the row kernels (forward, fused and split backward) and the simple ones.
  for (const char* dtype : {"addlayernorm", "addlayernormfp16", "addlayernormbfp16"}) {
    for (const char* line : {" -X 3x4x8 -o 2 -m 3 -F 0", " -X 3x4x8 -o 2 -m 2 -F 1", " -X 3x4x8 -o 1 -m 3 -F 14",
                             " -X 3x4x8 -o 1 -F 2", " -X 64x4096 -o 1 -m 3 -F 0", " -X 4x65536 -o 1 -m 3 -F 0"})
      commands.push_back(std::string(dtype) + line);
  }
  // Group norm: every dtype, direction, mode, rank and layout (planes, pieces of planes, channels last).
  for (const char* dtype : {"groupnorm", "groupnormfp16", "groupnormbfp16"}) {
    for (const char* geometry : {"-n 2 -c 8 -D 0 -H 5 -W 6 -g 4", "-n 2 -c 8 -D 0 -H 5 -W 6 -g 2 --layout NHWC",
                                 "-n 2 -c 6 -D 2 -H 3 -W 4 -g 3 --layout NDHWC", "-n 2 -c 6 -D 0 -H 0 -W 7 -g 2",
                                 "-n 1 -c 32 -D 0 -H 128 -W 128 -g 8"}) {
      for (const char* mode : {"-m 1 -F 0", "-m 0 -F 0", "-m 1 -F 1", "-m 1 -F 2", "-m 0 -F 2"})
        commands.push_back(std::string(dtype) + " " + geometry + " " + mode);
    }
  }
  for (const char* dtype : {"t5layernorm", "t5layernormfp16", "t5layernormbfp16"}) {
    for (const char* mode : {"-m 5 -F 0", "-m 5 -F 1", "-m 5 -F 2", "-m 4 -F 0", "-m 4 -F 2"})
      commands.push_back(std::string(dtype) + " -X 3x4x8 " + mode);
  }
  // The row kernels' tilings: every row length class (scalar, sub-warp, warp,
  // block of 256 to 1024 threads) forward and backward, without spills.
  for (const char* length : {"1", "7", "32", "768", "1000", "4096", "8192", "12288", "16384"}) {
    commands.push_back(std::string("layernormbfp16 -X 64x") + length + " -o 1 -m 1 -F 1");
    commands.push_back(std::string("layernormbfp16 -X 64x") + length + " -o 1 -m 1 -F 14");
    commands.push_back(std::string("layernorm -X 64x") + length + " -o 1 -m 1 -F 1");
    commands.push_back(std::string("layernorm -X 64x") + length + " -o 1 -m 1 -F 14");
    commands.push_back(std::string("t5layernormfp16 -X 64x") + length + " -m 5 -F 0");
  }
  // Layer norm's full backward on rows about a 1024-thread block (norm_rows_impl.cpp's WideRows):
  // filling it exactly (register sums and the cp.async ring at 8192, 8-byte vectors with the early
  // load in bf16 at 12288),
  // or not (6144, 10240: the shared-memory sums and no early load), in both 16-bit types.
  for (const char* length : {"6144", "8192", "10240", "12288"}) {
    commands.push_back(std::string("layernormbfp16 -X 64x") + length + " -o 1 -m 1 -F 14");
    commands.push_back(std::string("layernormfp16 -X 64x") + length + " -o 1 -m 1 -F 14");
  }
  commands.push_back("addlayernormbfp16 -X 64x8192 -o 1 -m 3 -F 14");  // the ring with x2: 3 tensors a stage
  commands.push_back("addlayernormbfp16 -X 64x12288 -o 1 -m 3 -F 14");  // 16-byte vectors (x2 spilled on 8-byte ones)
  // The dx-only backward's ring (two vectors a thread): without weight at 12288, with it at 16384.
  for (const char* dtype : {"layernormbfp16", "layernormfp16"}) {
    commands.push_back(std::string(dtype) + " -X 64x12288 -o 1 -m 0 -F 2");
    commands.push_back(std::string(dtype) + " -X 64x16384 -o 1 -m 1 -F 2");
  }
  // The ring on blocks of 128 to 512 threads (shared sums; 768: a quarter of the threads idle), fp16 too.
  for (const char* length : {"768", "1024", "2048", "4096"}) {
    commands.push_back(std::string("layernormbfp16 -X 4096x") + length + " -o 1 -m 1 -F 14");
    commands.push_back(std::string("layernormfp16 -X 4096x") + length + " -o 1 -m 1 -F 14");
  }
  // Forwards of rows of 12288 in 16-bit types: 512-thread blocks bounded to two an SM (64 registers).
  for (const char* line : {"layernormfp16 -X 64x12288 -o 1 -m 1 -F 1", "layernormbfp16 -X 64x12288 -o 1 -m 0 -F 1",
                           "t5layernormbfp16 -X 64x12288 -m 5 -F 1", "addlayernormbfp16 -X 64x12288 -o 1 -m 3 -F 1"})
    commands.push_back(line);
  // Rows too wide for the fused backward: dx alone plus the column-parallel dweight/dbias kernel.
  for (const char* length : {"12288", "16384", "24576", "65536"}) {
    commands.push_back(std::string("layernormbfp16 -X 64x") + length + " -o 1 -m 1 -F 14");
    commands.push_back(std::string("layernormbfp16 -X 64x") + length + " -o 1 -F 8");
    commands.push_back(std::string("t5layernormbfp16 -X 64x") + length + " -m 5 -F 2");
    commands.push_back(std::string("t5layernorm -X 64x") + length + " -m 5 -F 0");
  }
  // ATen replay: argmax/argmin in every dtype (gpu:aten:arg_reduce), strided, over a dim and over everything.
  for (const char* op : {"aten::argmax", "aten::argmin"}) {
    for (const char* dtype : {"float", "c10::Half", "c10::BFloat16"}) {
      const std::string d = std::string("'") + dtype + "'";
      commands.push_back(std::string(op) + " \"[[4, 8, 16], [], []]\" \"[" + d + ", 'Scalar', 'Scalar']\" " +
                         "\"[[1, 64, 4], [], []]\" \"['', '1', 'True']\"");
      commands.push_back(std::string(op) + " \"[[3, 700], [], []]\" \"[" + d + ", '', 'Scalar']\" " +
                         "\"[[700, 1], [], []]\" \"['', 'None', 'False']\"");
    }
  }
  commands.push_back("aten::addmm \"[[512], [256, 512], [512, 512], [], []]\" \"['c10::BFloat16', 'c10::BFloat16', "
                     "'c10::BFloat16', 'Scalar', 'Scalar']\" \"[[1], [512, 1], [1, 512], [], []]\" "
                     "\"['', '', '', '0.5', '2']\"");
  // GEMM epilogues the conv cannot fuse, on the conv tiers' fp32 sums (ConvProblem::fp32_result):
  // grouped with a per-entry bias, alpha and beta * C, baddbmm, split K, the Hopper tier, the direct tier.
  for (const char* line :
       {"gemmbfp16 --a_w 40 --a_h 64 --b_w 56 --batch_count 2 --bias 1 --activation silu",
        "aten::addmm \"[[256, 384], [256, 512], [512, 384], [], []]\" \"['c10::Half', 'c10::Half', 'c10::Half', "
        "'Scalar', 'Scalar']\" \"[[384, 1], [512, 1], [384, 1], [], []]\" \"['', '', '', '0.5', '2']\"",
        "aten::baddbmm \"[[8, 64, 128], [8, 64, 96], [8, 96, 128], [], []]\" \"['c10::BFloat16', 'c10::BFloat16', "
        "'c10::BFloat16', 'Scalar', 'Scalar']\" \"[[8192, 128, 1], [6144, 96, 1], [12288, 128, 1], [], []]\" "
        "\"['', '', '', '1', '0.125']\"",
        "gemmbfp16 --a_w 64 --a_h 10000 --b_w 64 --alpha 0.5", "gemmbfp16 --a_w 4096 --a_h 4096 --b_w 4096 --alpha 0.5",
        "gemm --a_w 5 --a_h 2 --b_w 3 --alpha 2 --activation tanh",
        // Transposing copies (gemm_copy_tiled): fp32 and fp16 operands staged and an fp32 grouped epilogue.
        "gemm --a_w 70 --a_h 33 --b_w 47 --batch_count 2 --alpha 0.5 --transA 1",
        "gemmfp16 --a_w 40 --a_h 24 --b_w 56 --batch_count 3 --transA 1"})
    commands.push_back(line);
  // Attention forward (gpu:aten:sdpa_flash): bf16/fp16, head dims 64 and 128, causal or not, blocks of
  // 64 queries (few CTAs) and of 128 (the sample's 32 x 8 heads), grouped heads.
  for (const char* dtype : {"c10::BFloat16", "c10::Half"}) {
    for (const char* dim : {"64", "128"}) {
      for (const char* causal : {"True", "False"}) {
        for (const char* batch : {"1", "32"}) {
          const std::string d = std::string("'") + dtype + "'", e = dim;
          const std::string shape = std::string("[") + batch + ", 8, 128, " + e + "]";
          const std::string stride = "[" + std::to_string(8 * 128 * std::stoi(e)) + ", " + std::to_string(128 * std::stoi(e)) +
                                     ", " + e + ", 1]";
          commands.push_back("aten::scaled_dot_product_attention \"[" + shape + ", " + shape + ", " + shape +
                             ", [], [], [], [], []]\" \"[" + d + ", " + d + ", " + d +
                             ", '', 'Scalar', 'Scalar', 'Scalar', 'Scalar']\" \"[" + stride + ", " + stride + ", " +
                             stride + ", [], [], [], [], []]\" \"['', '', '', 'None', '0.0', '" + causal +
                             "', 'None', 'False']\"");
        }
      }
    }
  }
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  // The kernels that await a GPU run (ops/common/unverified_kernels.hpp) compile here too.
  ::setenv("BOO_UNVERIFIED_KERNELS", "1", 1);
  std::set<std::string> compiled;
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    const ops::OpDefinition* op = ops::find_op(p->signature->op_name());
    for (const ops::GpuImplementation* impl : op->gpu_implementations()) {
      // Their own tests (BatchNormSlabModulesCompile, BatchNormResidentModulesCompile,
      // GroupNormFusedModulesCompile) cover every variant;
      // compiling them here too ran past the timeout.
      if (impl->name().ends_with(":slabs") || impl->name().ends_with(":resident") ||
          impl->name() == "gpu:groupnorm:fused")
        continue;
      Result<Planned> planned = plan_for(*impl, *p->signature, device);
      if (!planned.ok()) continue;  // declined
      const jit::KernelSource* src = &planned->plan.source;
      if (!compiled.insert(src->text).second) continue;
      Result<jit::CompiledKernel> k = jit::compile_kernel(*src, kArch, false);
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      EXPECT_GT(k->cubin.size(), 0u);
      EXPECT_EQ(k->spill_bytes, 0) << impl->name() << " spills:\n" << k->log;
    }
  }
  EXPECT_GT(compiled.size(), 40u);
  // The ATen argmax/argmin kernels were among them, in every dtype and both directions.
  for (const char* kernel : {"arg_reduce<float, true>", "arg_reduce<boo::f16, false>", "arg_reduce<boo::bf16, true>",
                             "sdpa_flash_forward<boo::bf16, 64, 64, true>", "sdpa_flash_forward<boo::bf16, 128, 128, false>",
                             "sdpa_flash_forward<boo::f16, 64, 128, false>", "sdpa_flash_forward<boo::f16, 128, 64, true>",
                             "gemm_copy<boo::f16, float, true, false, 0>", "gemm_copy<boo::bf16, float, false, false, 0>",
                             "gemm_copy<float, float, false, false, 3>",
                             "gemm_copy_tiled<boo::bf16, float, false, true, 4>", "gemm_copy_tiled<boo::bf16, float, true, false, 0>",
                             "gemm_copy_tiled<boo::bf16, boo::bf16, false, false, 0>", "gemm_copy_tiled<float, float, false, false, 0>",
                             "gemm_copy_tiled<boo::f16, boo::f16, false, false, 0>",
                             "conv_forward_face<int, float, 0, false, true>",
                             "kFp32Out = true"})
    EXPECT_TRUE(std::any_of(compiled.begin(), compiled.end(),
                            [&](const std::string& text) { return text.find(kernel) != std::string::npos; }))
        << kernel;
  ::unsetenv("BOO_UNVERIFIED_KERNELS");
}

// gpu:aten:sdpa_flash_backward (awaiting a GPU) compiles without spills for every variant: the flash
// backend's backward form, bf16/fp16, head dims 64 and 128, causal or not, 4 heads sharing 2 kv heads.
TEST(NvrtcTest, AttentionBackwardModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  std::vector<std::string> commands;
  for (const char* dtype : {"c10::BFloat16", "c10::Half"}) {
    for (const int e : {64, 128}) {
      for (const char* causal : {"True", "False"}) {
        const std::string d = std::string("'") + dtype + "'", dim = std::to_string(e);
        const std::string q = "[2, 4, 100, " + dim + "]", kv = "[2, 2, 150, " + dim + "]";
        const std::string qs = "[" + std::to_string(400 * e) + ", " + std::to_string(100 * e) + ", " + dim + ", 1]";
        const std::string kvs = "[" + std::to_string(300 * e) + ", " + std::to_string(150 * e) + ", " + dim + ", 1]";
        commands.push_back("aten::_scaled_dot_product_flash_attention_backward \"[" + q + ", " + q + ", " + kv + ", " +
                           kv + ", " + q + ", [2, 4, 100], [], [], [], [], [], [], [], [], []]\" \"[" + d + ", " + d +
                           ", " + d + ", " + d + ", " + d +
                           ", 'float', '', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar', 'long int', 'long int', "
                           "'Scalar']\" \"[" + qs + ", " + qs + ", " + kvs + ", " + kvs + ", " + qs +
                           ", [400, 100, 1], [], [], [], [], [], [], [], [], []]\" \"['', '', '', '', '', '', '', '', "
                           "'100', '150', '0.0', '" + causal + "', '', '', 'None']\"");
      }
    }
  }
  ::setenv("BOO_UNVERIFIED_KERNELS", "1", 1);
  const ops::GpuImplementation* tier = ops::find_op("aten_sdpa_backward")->gpu_implementations()[0];
  std::set<std::string> compiled;
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<Planned> planned = plan_for(*tier, *p->signature, device);
    ASSERT_TRUE(planned.ok()) << planned.status().to_string();
    ASSERT_TRUE(compiled.insert(planned->plan.source.text).second);
    Result<jit::CompiledKernel> k = jit::compile_kernel(planned->plan.source, kArch, false);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_EQ(k->spill_bytes, 0) << k->log;
  }
  ::unsetenv("BOO_UNVERIFIED_KERNELS");
  for (const char* kernel : {"sdpa_backward_dkdv<boo::bf16, 128, true>", "sdpa_backward_dq<boo::f16, 64, false>",
                             "sdpa_backward_delta<boo::bf16, 64>"})
    EXPECT_TRUE(std::any_of(compiled.begin(), compiled.end(),
                            [&](const std::string& text) { return text.find(kernel) != std::string::npos; }))
        << kernel;
}

// gpu:batchnorm:slabs compiles
// without spills for every variant: each token's dtypes, scalar loads (odd channels), (16-bit data with
// float32 or 16-bit parameters and gradients), training with and without
// saved and running statistics, inference from the batch, the backward, and
// the slab widths its plan picks on ResNet-50's shapes at batch 128 (16 to
// 64 bf16 channels) and on per-activation lines (128 fp32, 256 16-bit).
TEST(NvrtcTest, BatchNormSlabModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  std::vector<std::string> commands;
  for (const char* token : {"bnorm", "bnormfp16", "bnormbfp16", "bnormfp16fp32", "bnormbfp16fp32"}) {
    for (const char* pass : {"-m 1 -F 1 -s 1 -r 1", "-m 1 -F 1", "-m 1 -F 2", "-m 1 -F 0 -b 1 -s 1",
                             "-m 0 -F 1 -s 1", "-m 0 -F 0 -b 1 -s 1"})
      commands.push_back(std::string(token) + " -n 4 -c 24 -H 7 -W 7 --layout NHWC " + pass);
    // Odd channels: scalar loads, slabs of a few channels (many slice groups per channel in the apply kernel).
    commands.push_back(std::string(token) + " -n 2 -c 3 -D 2 -H 5 -W 6 --layout NDHWC -m 1 -F 0 -b 1 -s 1");
    commands.push_back(std::string(token) + " -n 2 -c 3 -D 2 -H 5 -W 6 --layout NDHWC -m 1 -F 1 -s 1 -r 1");
  }
  for (const char* shape : {"-n 128 -c 64 -H 56 -W 56 -m 1", "-n 128 -c 128 -H 28 -W 28 -m 1",
                            "-n 128 -c 256 -H 56 -W 56 -m 1",
                            "-n 128 -c 1024 -H 14 -W 14 -m 1", "-n 32 -c 64 -H 28 -W 28 -m 0"}) {
    for (const char* pass : {"-F 1 -s 1 -r 1", "-F 0 -b 1 -s 1"})
      commands.push_back(std::string("bnormbfp16 ") + shape + " --layout NHWC " + pass);
  }
  const ops::GpuImplementation* slabs = ops::find_op("batchnorm")->gpu_implementations()[1];
  ASSERT_EQ(slabs->name(), "gpu:batchnorm:slabs");
  std::set<std::string> compiled, widths;
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    const ops::GpuImplementation* impl = ops::find_op(p->signature->op_name())->gpu_implementations()[1];
    Result<Planned> planned = plan_for(*impl, *p->signature, device);
    ASSERT_TRUE(planned.ok()) << planned.status().to_string();
    ASSERT_EQ(planned->plan.steps.size(), 3u);
    const std::string& config = planned->config;
    widths.insert(config.substr(config.find(";slab="), config.find(";slabs=") - config.find(";slab=")));
    if (!compiled.insert(planned->plan.source.text).second) continue;
    Result<jit::CompiledKernel> k = jit::compile_kernel(planned->plan.source, kArch, false);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_EQ(k->spill_bytes, 0) << k->log;
  }
  EXPECT_EQ(widths, (std::set<std::string>{";slab=4", ";slab=32", ";slab=64", ";slab=128", ";slab=256"}));
  // boo tune's alternatives (twice the rows in flight, half or twice the blocks, ...) on ResNet-50's lines.
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  for (const char* shape : {"-n 128 -c 64 -H 112 -W 112", "-n 128 -c 256 -H 14 -W 14", "-n 128 -c 2048 -H 7 -W 7"})
    for (const char* pass : {"-F 1 -s 1 -r 1 --momentum 0.1", "-F 0 -b 1 -s 1"}) {
      const std::string command = std::string("bnormbfp16 ") + shape + " -m 1 --layout NHWC " + pass;
      SCOPED_TRACE(command);
      Result<ParsedCommand> p = parse_command(std::string_view(command));
      ASSERT_TRUE(p.ok()) << p.status().to_string();
      Result<std::unique_ptr<ops::OpProblem>> problem = ops::find_op("batchnorm")->make_problem(*p->signature);
      ASSERT_TRUE(problem.ok()) << problem.status().to_string();
      Result<ops::ConfigList> list = slabs->candidates(**problem, arch);
      ASSERT_TRUE(list.ok()) << list.status().to_string();
      EXPECT_GE(list->size(), 4u) << "boo tune's alternatives";
      if (command.find("-F 1") != std::string::npos)
        EXPECT_TRUE(std::any_of(list->begin(), list->end(), [](const auto& config) {
          return config->text().find(", 8, false>(p);boo_batch_norm_slab_coefficients") != std::string::npos;
        })) << "an alternative with eight rows of x in flight";
      for (const auto& config : *list) {
        SCOPED_TRACE(config->text());
        Result<ops::Plan> plan = slabs->plan(**problem, *config, arch);
        ASSERT_TRUE(plan.ok()) << plan.status().to_string();
        if (!compiled.insert(plan->source.text).second) continue;
        Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, false);
        ASSERT_TRUE(k.ok()) << k.status().to_string();
        EXPECT_EQ(k->spill_bytes, 0) << k->log;
      }
    }
  for (const char* kernel : {"batch_norm_slab_apply<boo::bf16, boo::bf16, 8, 32, 8, 4, false>",
                             "batch_norm_slab_apply<boo::bf16, boo::bf16, 8, 8, 32, 4, true>",
                             "batch_norm_slab_apply<boo::f16, float, 4, 8, 32, 4, true>",
                             "batch_norm_slab_coefficients<boo::bf16, float, 256, 1024, false, true, true>",
                             "batch_norm_slab_coefficients<boo::f16, boo::f16, 32, 1024, true, false, false>",
                             "batch_norm_slab_sums<float, float, 4, 8, 32, 4, true>"})
    EXPECT_TRUE(std::any_of(compiled.begin(), compiled.end(),
                            [&](const std::string& text) { return text.find(kernel) != std::string::npos; }))
        << kernel;
}

// gpu:batchnorm:resident (one cooperative launch) compiles for sm_90a without
// spills for every dtype token (16-bit data with float32 or 16-bit parameters
// and gradients), training with and without saved and running statistics,
// inference from the batch, the backward, scalar loads (odd channels),
// ResNet-50's shapes that fit on chip, and boo tune's alternatives (half the
// rows in flight, narrower slabs, the kept rows by cp.async).
TEST(NvrtcTest, BatchNormResidentModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  std::vector<std::string> commands;
  for (const char* token : {"bnorm", "bnormfp16", "bnormbfp16", "bnormfp16fp32", "bnormbfp16fp32"}) {
    for (const char* pass : {"-m 1 -F 1 -s 1 -r 1", "-m 1 -F 1", "-m 1 -F 2", "-m 1 -F 0 -b 1 -s 1"})
      commands.push_back(std::string(token) + " -n 4 -c 24 -H 7 -W 7 --layout NHWC " + pass);
    commands.push_back(std::string(token) + " -n 2 -c 3 -D 2 -H 5 -W 6 --layout NDHWC -m 1 -F 0 -b 1 -s 1");
  }
  // ResNet-50's shapes whose x and dy fit shared memory and L2 (at batch 64 for the 64-channel 56 x 56 one).
  for (const char* shape : {"-n 64 -c 64 -H 56 -W 56", "-n 128 -c 128 -H 28 -W 28", "-n 128 -c 2048 -H 7 -W 7"})
    for (const char* pass : {"-F 1 -s 1 -r 1 --momentum 0.1", "-F 0 -b 1 -s 1"})
      commands.push_back(std::string("bnormbfp16 ") + shape + " -m 1 --layout NHWC " + pass);
  const ops::GpuImplementation* resident = ops::find_op("batchnorm")->gpu_implementations()[0];
  ASSERT_EQ(resident->name(), "gpu:batchnorm:resident");
  std::set<std::string> compiled;
  size_t alternatives = 0;
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<std::unique_ptr<ops::OpProblem>> problem = ops::find_op("batchnorm")->make_problem(*p->signature);
    ASSERT_TRUE(problem.ok()) << problem.status().to_string();
    ASSERT_TRUE(resident->accepts(**problem, arch).ok());
    Result<ops::ConfigList> list = resident->candidates(**problem, arch);
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    // The ResNet-50 lines compile every candidate; the others the heuristic's.
    const size_t last = command.starts_with("bnormbfp16 -n 128") || command.starts_with("bnormbfp16 -n 64")
                            ? list->size()
                            : 1;
    if (last > 1) {
      ASSERT_GT(list->size(), 1u) << "no alternative for boo tune";
      alternatives += list->size() - 1;
    }
    for (size_t i = 0; i < last; ++i) {
      SCOPED_TRACE((*list)[i]->text());
      Result<ops::Plan> plan = resident->plan(**problem, *(*list)[i], arch);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      ASSERT_EQ(plan->steps.size(), 1u);
      EXPECT_TRUE(plan->steps[0].cooperative);
      if (!compiled.insert(plan->source.text).second) continue;
      Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, false);
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      EXPECT_EQ(k->spill_bytes, 0) << k->log;
    }
  }
  EXPECT_GE(alternatives, 12u);
  for (const char* kernel : {"batch_norm_resident<boo::bf16, boo::bf16, float, 8, 4, 128, 8, false, true, true, false>",
                             "batch_norm_resident<boo::bf16, boo::bf16, float, 8, 8, 64, 8, false, true, true, true>",
                             "batch_norm_resident<boo::bf16, boo::bf16, float, 8, 16, 32, 4, true, false, false, false>",
                             "batch_norm_resident<boo::bf16, boo::bf16, float, 8, 16, 32, 4, true, false, false, true>",
                             "batch_norm_resident<boo::f16, float, boo::f16, 4, 8, 64, 4, true, false, false, false>",
                             "batch_norm_resident<float, float, float, 1, 4, 128, 4, true, false, false, false>"})
    EXPECT_TRUE(std::any_of(compiled.begin(), compiled.end(),
                            [&](const std::string& text) { return text.find(kernel) != std::string::npos; }))
        << kernel;
}

// gpu:groupnorm:fused (one cooperative launch, gated until it runs on a GPU)
// compiles for sm_90a without spills in every dtype, direction (forward,
// backward alone, both; with and without the affine parameters), layout
// (planes, pieces of a large plane, channels last, 5-D) and on the SD-UNet's
// shapes, boo tune's alternatives included on those.
TEST(NvrtcTest, GroupNormFusedModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  ::setenv("BOO_UNVERIFIED_KERNELS", "1", 1);
  std::vector<std::string> commands;
  for (const char* dtype : {"groupnorm", "groupnormfp16", "groupnormbfp16"})
    for (const char* geometry : {"-n 2 -c 8 -D 0 -H 5 -W 6 -g 4", "-n 2 -c 6 -D 2 -H 3 -W 4 -g 3 --layout NDHWC",
                                 "-n 1 -c 32 -D 0 -H 128 -W 128 -g 8"})
      for (const char* mode : {"-m 1 -F 0", "-m 1 -F 1", "-m 1 -F 2", "-m 0 -F 2"})
        commands.push_back(std::string(dtype) + " " + geometry + " " + mode);
  for (const char* dtype : {"groupnormfp16", "groupnormbfp16"})
    for (const char* shape : {"-c 320 -D 0 -H 64 -W 64", "-c 1280 -D 0 -H 8 -W 8"})
      for (const char* layout : {"NCHW", "NHWC"})
        for (const char* mode : {"-F 1", "-F 2"})
          commands.push_back(std::string(dtype) + " -n 2 " + shape + " -g 32 -m 1 " + mode + " --layout " + layout);
  const ops::GpuImplementation* fused = ops::find_op("groupnorm")->gpu_implementations()[0];
  ASSERT_EQ(fused->name(), "gpu:groupnorm:fused");
  std::set<std::string> compiled;
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<std::unique_ptr<ops::OpProblem>> problem = ops::find_op("groupnorm")->make_problem(*p->signature);
    ASSERT_TRUE(problem.ok()) << problem.status().to_string();
    ASSERT_TRUE(fused->accepts(**problem, arch).ok());
    Result<ops::ConfigList> list = fused->candidates(**problem, arch);
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    const bool unet = command.find(" -g 32 ") != std::string::npos;
    if (unet) ASSERT_GT(list->size(), 1u) << "no alternative for boo tune";
    for (size_t i = 0; i < (unet ? list->size() : 1); ++i) {
      SCOPED_TRACE((*list)[i]->text());
      Result<ops::Plan> plan = fused->plan(**problem, *(*list)[i], arch);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      ASSERT_EQ(plan->steps.size(), 1u);
      if (!compiled.insert(plan->source.text).second) continue;
      Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, false);
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      EXPECT_EQ(k->spill_bytes, 0) << k->log;
    }
  }
  ::unsetenv("BOO_UNVERIFIED_KERNELS");
}

// gpu:groupnorm:rows (a block per group) compiles for sm_90a without spills in
// every dtype, direction (forward, backward alone, both; with and without the
// affine parameters), layout (planes, channels last, 5-D, 3-D) and vector
// width, the SD-UNet's shapes included.
TEST(NvrtcTest, GroupNormRowsModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  std::vector<std::string> commands;
  for (const char* dtype : {"groupnorm", "groupnormfp16", "groupnormbfp16"})
    for (const char* geometry : {"-n 2 -c 8 -D 0 -H 5 -W 6 -g 4", "-n 2 -c 8 -D 0 -H 5 -W 6 -g 2 --layout NHWC",
                                 "-n 2 -c 6 -D 2 -H 3 -W 4 -g 3 --layout NDHWC", "-n 2 -c 6 -D 0 -H 0 -W 7 -g 2",
                                 "-n 2 -c 320 -D 0 -H 32 -W 32 -g 32 --layout NHWC", "-n 2 -c 1280 -D 0 -H 8 -W 8 -g 32"})
      for (const char* mode : {"-m 1 -F 0", "-m 1 -F 1", "-m 1 -F 2", "-m 0 -F 2", "-m 0 -F 0"})
        commands.push_back(std::string(dtype) + " " + geometry + " " + mode);
  const ops::GpuImplementation* rows = ops::find_op("groupnorm")->gpu_implementations()[1];
  ASSERT_EQ(rows->name(), "gpu:groupnorm:rows");
  std::set<std::string> compiled;
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<std::unique_ptr<ops::OpProblem>> problem = ops::find_op("groupnorm")->make_problem(*p->signature);
    ASSERT_TRUE(problem.ok()) << problem.status().to_string();
    ASSERT_TRUE(rows->accepts(**problem, arch).ok()) << rows->accepts(**problem, arch).to_string();
    Result<std::unique_ptr<const ops::Config>> config = rows->configure(**problem, arch);
    ASSERT_TRUE(config.ok()) << config.status().to_string();
    Result<ops::Plan> plan = rows->plan(**problem, **config, arch);
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    if (!compiled.insert(plan->source.text).second) continue;
    Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, false);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_EQ(k->spill_bytes, 0) << k->log;
  }
}

// boo tune's alternatives (ops::GpuImplementation::candidates) of each tier
// that has them compile for sm_90a without spills: the configs after the
// heuristic's, the first four of each line (the ones the cost model ranks
// best), every one of the Hopper tier's.
TEST(NvrtcTest, TuningCandidatesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  std::set<std::string> compiled, tiers;
  for (const std::string& command : {
           std::string("convbfp16 -n 8 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1") + nhwc,
           std::string("convbfp16 -n 8 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4"),
           std::string("conv -n 4 -c 32 -H 28 -W 28 -k 32 -y 3 -x 3 -p 1 -q 1 -F 4"),
           std::string("convbfp16 -n 16 -c 256 -H 28 -W 28 -k 512 -y 3 -x 3 -p 1 -q 1 -F 1") + nhwc,
           std::string("convbfp16 -n 8 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -g 64 -F 1"),
           std::string("convbfp16 -n 8 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -g 64 -F 4") + nhwc,
           std::string("layernormbfp16 -X 4096x1024 -o 1 -F 14"),
           // The earlier wide-row choices (WideRows::kAsBefore) first among the alternatives.
           std::string("layernormbfp16 -X 4096x8192 -o 1 -F 14"),
           std::string("layernormbfp16 -X 1024x12288 -o 1 -F 14"),
           std::string("t5layernormbfp16 -X 2048x8192 -F 0"),
           std::string("bnormbfp16 -n 32 -c 64 -H 28 -W 28 --layout NHWC -m 1 -F 0 -s 1"),
           std::string("groupnormbfp16 -n 2 -c 320 -D 0 -H 128 -W 128 -g 32 -m 1 -F 0 --layout NCHW"),
           std::string("convbfp16 -n 64 -c 144 -H 56 -W 56 -k 24 -y 1 -x 1 -F 1"),
       }) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<runtime::Dispatch> d = runtime::choose_gpu_implementation(*p->signature, device);
    ASSERT_TRUE(d.ok() && d->chosen) << (d.ok() ? d->failure() : d.status()).to_string();
    Result<ops::ConfigList> list = d->chosen->candidates(*d->problem, arch);
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    ASSERT_GT(list->size(), 1u) << d->chosen->name() << " offers no alternative";
    tiers.insert(std::string(d->chosen->name()));
    const bool hopper = d->chosen->name() == "gpu:conv:wgmma_sm90";
    const size_t last = hopper ? list->size() : std::min<size_t>(list->size(), 5);
    for (size_t i = 1; i < last; ++i) {
      SCOPED_TRACE((*list)[i]->text());
      Result<ops::Plan> plan = d->chosen->plan(*d->problem, *(*list)[i], arch);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      if (!compiled.insert(plan->source.text).second) continue;
      Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, hopper);
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      EXPECT_EQ(k->spill_bytes, 0) << k->log;
      if (hopper) {
        EXPECT_EQ(k->log.find("C7508"), std::string::npos) << "setmaxnreg ignored:\n" << k->log;
      }
    }
  }
  EXPECT_EQ(tiers.size(), 9u) << "the lines reach every tier with alternatives";
}

// Issue 17's fp32 weight gradients (NCHW, full precision): the FFMA mainloop's
// two-level sums (a second accumulator set) and the float64 split-K reduce
// compile for sm_90a without spills, for the heuristic's config and the first
// four of its alternatives (tiles up to 64x128: 64 accumulators a thread).
TEST(NvrtcTest, Fp32WeightGradientsCompileWithoutSpills) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  std::set<std::string> compiled;
  for (const char* command : {
           "conv -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -l 1 -j 1 -m conv -g 1 -F 4",
           "conv -n 16 -c 3 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 4",
           "conv -n 64 -c 3 -H 224 -W 224 -k 32 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m conv -g 1 -F 4",
           "conv -n 64 -c 32 -H 112 -W 112 -k 16 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 4",
           "conv -n 64 -c 16 -H 112 -W 112 -k 96 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 4",
           "conv -n 64 -c 24 -H 56 -W 56 -k 144 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 4",
           "conv -n 64 -c 144 -H 56 -W 56 -k 24 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 4",
       }) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    // (Memory-bound NCHW 1x1 lines would go to gpu:conv:pointwise, first in the list: asked of this tier by name.)
    Result<runtime::Dispatch> d = runtime::choose_gpu_implementation(*p->signature, device, "gpu:conv:implicit_gemm");
    ASSERT_TRUE(d.ok() && d->chosen) << (d.ok() ? d->failure() : d.status()).to_string();
    ASSERT_EQ(d->chosen->name(), "gpu:conv:implicit_gemm");
    Result<ops::ConfigList> list = d->chosen->candidates(*d->problem, arch);
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    for (size_t i = 0; i < std::min<size_t>(list->size(), 5); ++i) {
      SCOPED_TRACE((*list)[i]->text());
      EXPECT_NE((*list)[i]->text().find(" splits "), std::string::npos);
      Result<ops::Plan> plan = d->chosen->plan(*d->problem, *(*list)[i], arch);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      if (!compiled.insert(plan->source.text).second) continue;
      Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, false);
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      EXPECT_EQ(k->spill_bytes, 0) << k->log;
    }
  }
}

// Full-precision fp32 on 3xTF32 (kernels/gemm/mainloop_mma_3xtf32.cuh) and FFMA (mainloop_ffma.cuh): boo
// tune's candidates for the lines of tests/gpu/focus.txt's 3xTF32 block offer both "math 3xtf32" (kMath = 3)
// and "math ffma" (kMath = 2), and they compile for sm_90a without spills: every face, NCHW and NHWC
// (MN-major and K-major shared tiles), 128x128 tiles of 256 threads, long split weight gradients, stride
// phases, partial tiles. Every 3xTF32 one; the FFMA ones with 16-byte loads of both operands in CTAs of 4
// or 8 warps. (FFMA with element loads, and 128x96 tiles of 6 warps, spill 8-1200 bytes, as they did with
// the mainloop before its vector loads: docs/perf/2026-11-26-session8.md.)
TEST(NvrtcTest, FullPrecisionFp32VariantsCompileWithoutSpills) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  std::set<std::string> compiled;
  for (const char* command : {
           "conv -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation relu",
           "conv -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 2",
           "conv -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4",
           "conv -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 4",
           "conv -n 16 -c 64 -H 56 -W 56 -k 128 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2",
           "conv -n 64 -c 32 -H 112 -W 112 -k 16 -y 1 -x 1 -F 4",
           "conv -n 64 -c 24 -H 56 -W 56 -k 144 -y 1 -x 1 -F 4",
           "conv -n 32 -c 256 -H 56 -W 56 -k 64 -y 1 -x 1 -F 1",
           "conv -n 32 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC",
           "conv -n 32 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 2 --in_layout NHWC --fil_layout NHWC --out_layout NHWC",
           "conv -n 64 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 4 --in_layout NHWC --fil_layout NHWC --out_layout NHWC",
           "conv -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1 --out_layout NHWC",
           "conv -n 3 -c 35 -H 17 -W 15 -k 40 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1",
           "conv -n 3 -c 35 -H 17 -W 15 -k 40 -y 3 -x 3 -p 1 -q 1 -F 2",
           "conv -n 3 -c 35 -H 17 -W 15 -k 40 -y 3 -x 3 -p 1 -q 1 -F 4",
           "conv -n 5 -c 40 -H 61 -W 67 -k 36 -y 3 -x 3 -p 1 -q 1 -F 4 --in_layout NHWC --fil_layout NHWC --out_layout NHWC",
           "conv -n 64 -c 32 -H 64 -W 64 -k 32 -y 3 -x 3 -p 1 -q 1 -F 0",
       }) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    // (The pointwise NCHW lines would go to gpu:conv:pointwise, first in the list: asked of this tier by name.)
    Result<runtime::Dispatch> d = runtime::choose_gpu_implementation(*p->signature, device, "gpu:conv:implicit_gemm");
    ASSERT_TRUE(d.ok() && d->chosen) << (d.ok() ? d->failure() : d.status()).to_string();
    ASSERT_EQ(d->chosen->name(), "gpu:conv:implicit_gemm");
    Result<ops::ConfigList> list = d->chosen->candidates(*d->problem, arch);
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    bool ffma_offered = false, three_tf32_offered = false;
    for (const std::unique_ptr<const ops::Config>& c : *list) {
      const bool ffma = c->text().find("math ffma") != std::string::npos,
                 three_tf32 = c->text().find("math 3xtf32") != std::string::npos;
      ffma_offered |= ffma;
      three_tf32_offered |= three_tf32;
      // (Candidates mixing the maths, e.g. -F 0's weight face on 3xTF32 beside FFMA faces at other ranks'
      // tilings, compile the kernels of those below.)
      if (ffma == three_tf32) continue;
      if (ffma && (c->text().find("warps 2x3") != std::string::npos || c->text().find("vecK1") != std::string::npos ||
                   c->text().find("vecMN1") != std::string::npos))
        continue;
      SCOPED_TRACE(c->text());
      Result<ops::Plan> plan = d->chosen->plan(*d->problem, *c, arch);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      EXPECT_NE(plan->source.text.find(ffma ? "kMath = 2;" : "kMath = 3;"), std::string::npos);
      if (!compiled.insert(plan->source.text).second) continue;
      Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, false);
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      EXPECT_EQ(k->spill_bytes, 0) << k->log;
    }
    EXPECT_TRUE(ffma_offered);
    EXPECT_TRUE(three_tf32_offered);
  }
}

// gpu:conv:wgmma_sm90 (wgmma, setmaxnreg: sm_90a) plans and compiles its
// kernel for every tile width, both 16-bit types, 1-D and 2-D, with bias and
// activations, the data face (a flipped filter copy), the weight face (M/N-major
// wgmma; split K with its reduce, or unsplit; strided, dilated, transposed,
// partial tiles) and NCHW operands (staged copies), without spills and with
// the register reallocation honoured.
TEST(NvrtcTest, HopperConvModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  // The weight faces' GEMM path (the shifted taps: HopperWeightShiftedTapsModulesCompile).
  ::setenv("BOO_WGMMA_TAPS", "0", 1);
  for (const std::string& command : {
           "convbfp16 -n 4 -c 64 -H 32 -W 32 -k 128 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation gelu" + nhwc,
           "convfp16 -n 16 -c 768 -H 48 -W 32 -k 2048 -y 3 -x 3 -p 1 -q 1 -F 1" + nhwc,
           "convbfp16 -n 16 -c 576 -H 48 -W 32 -k 576 -y 3 -x 3 -F 1 -b 1 --activation leaky_relu:0.1" + nhwc,
           "convbfp16 -n 8 -c 128 -H 56 -W 56 -k 256 -y 1 -x 1 -u 2 -v 2 -F 1" + nhwc,
           std::string("convbfp16 --spatial_dim 1 -n 64 -c 128 -H 128 -k 256 -y 5 -p 2 -l 2 -F 1 "
                       "--in_layout NHC --fil_layout NHC --out_layout NHC"),
           "convbfp16 -n 16 -c 256 -H 28 -W 28 -k 512 -y 3 -x 3 -p 1 -q 1 -F 2" + nhwc,
           "convfp16 -n 16 -c 256 -H 28 -W 28 -k 128 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -F 2" + nhwc,
           std::string("convfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1"),
           // (NCHW 1x1 convs run natively: HopperNchwPointwiseModulesCompile; a 7x7 image's do not, so it stages.)
           std::string("convbfp16 -n 128 -c 128 -H 7 -W 7 -k 256 -y 1 -x 1 -F 2"),
           std::string("convfp16 -n 16 -c 128 -H 16 -W 16 -k 256 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -Y 1 -X 1 -m trans -F 2"),
           "convbfp16 -n 16 -c 768 -H 48 -W 32 -k 2048 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convfp16 -n 32 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convbfp16 -n 8 -c 128 -H 56 -W 56 -k 256 -y 1 -x 1 -u 2 -v 2 -F 4" + nhwc,
           "convfp16 -n 16 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -F 4" + nhwc,
           "convbfp16 -n 3 -c 64 -H 37 -W 41 -k 136 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convbfp16 -n 1 -c 512 -H 64 -W 64 -k 512 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           std::string("convbfp16 --spatial_dim 1 -n 64 -c 128 -H 128 -k 256 -y 5 -p 2 -l 2 -F 4 "
                       "--in_layout NHC --fil_layout NHC --out_layout NHC"),
           std::string("convfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 4"),
           std::string("convfp16 -n 16 -c 128 -H 16 -W 16 -k 256 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -Y 1 -X 1 -m trans -F 4"),
           // Reduced channels a multiple of 8, not of 64: packed (tap, channel) k-blocks, a partial last one.
           "convbfp16 -n 16 -c 288 -H 48 -W 32 -k 288 -y 3 -x 3 -p 1 -q 1 -F 1" + nhwc,
           "convfp16 -n 8 -c 200 -H 32 -W 32 -k 136 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation relu" + nhwc,
           "convbfp16 -n 16 -c 672 -H 48 -W 32 -k 576 -y 1 -x 1 -F 1" + nhwc,
           "convfp16 -n 16 -c 144 -H 24 -W 16 -k 144 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -F 2" + nhwc,
           "convbfp16 -n 16 -c 288 -H 24 -W 16 -k 288 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convfp16 -n 16 -c 144 -H 24 -W 16 -k 144 -y 5 -x 5 -p 8 -q 8 -l 4 -j 4 -F 4" + nhwc,
           // 64 output channels: 64-wide tiles (ResNet's 64-channel layers), with an epilogue.
           "convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation relu" + nhwc,
           "convfp16 -n 128 -c 256 -H 56 -W 56 -k 64 -y 1 -x 1 -F 1" + nhwc,
           "convbfp16 -n 128 -c 64 -H 56 -W 56 -k 256 -y 1 -x 1 -F 2" + nhwc,
           // Weight faces of 64 output channels: the consumers split 128 or 256 columns, or consumer 1 idles
           // (64 columns); 96 channels: consumer 1's rows partly past K.
           "convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convfp16 -n 128 -c 256 -H 56 -W 56 -k 64 -y 1 -x 1 -F 4" + nhwc,
           "convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 4" + nhwc,
           "convbfp16 -n 16 -c 96 -H 48 -W 32 -k 96 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           std::string("convfp16 -n 64 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4"),
           // Grouped weight faces: 64 channels a group (the consumers split the columns), 128 (NCHW, staged), a
           // strided one with a partial last k-block.
           "convbfp16 -n 128 -c 384 -H 48 -W 32 -k 384 -y 3 -x 3 -p 1 -q 1 -g 6 -F 4" + nhwc,
           std::string("convfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -g 2 -F 4"),
           "convbfp16 -n 8 -c 256 -H 27 -W 27 -k 512 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 4 -F 4" + nhwc,
           // A forward face split K (few pixels, a long reduction).
           "convbfp16 -n 16 -c 2048 -H 1 -W 30 -k 576 -y 1 -x 1 -F 1" + nhwc,
           // Channels that are not a multiple of 8, on padded copies: the forward's reduction, the data face's
           // 419 result channels (an odd tile width), the weight face's x, y's 194 channels with a bias.
           "convbfp16 -n 16 -c 419 -H 24 -W 16 -k 384 -y 3 -x 3 -p 1 -q 1 -F 1" + nhwc,
           "convbfp16 -n 128 -c 419 -H 48 -W 32 -k 384 -y 1 -x 1 -F 2" + nhwc,
           "convbfp16 -n 128 -c 419 -H 48 -W 32 -k 384 -y 1 -x 1 -F 4" + nhwc,
           "convbfp16 -n 16 -c 192 -H 24 -W 16 -k 194 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation relu" + nhwc,
           "convbfp16 -n 16 -c 192 -H 24 -W 16 -k 194 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convbfp16 -n 16 -c 192 -H 24 -W 16 -k 194 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2" + nhwc,
           // y's 194 channels stored element by element, with the residual read so.
           "convbfp16 -n 16 -c 128 -H 20 -W 20 -k 194 -y 3 -x 3 -p 1 -q 1 -F 1 --residual 1" + nhwc,
       }) {
    SCOPED_TRACE(command);
    std::optional<HopperModule> module;
    compile_hopper_module(command, device, module);
    ASSERT_TRUE(module.has_value());
    const Planned* planned = &module->planned;
    const jit::CompiledKernel* k = &module->kernel;
    // The tile's wgmma (ptxas turns them into HGMMA: checked with cuobjdump, docs/perf/2026-11-24-wgmma-h100.md).
    const std::string& config = planned->config;  // "tile 128xNx64 ..."
    const size_t x1 = config.find('x'), x2 = config.find('x', x1 + 1);
    ASSERT_NE(x2, std::string::npos) << config;
    // (Consumers that split the columns issue half the tile's width.)
    const int bn = std::stoi(config.substr(x1 + 1, x2 - x1 - 1)) /
                   (config.find("consumers split the columns") != std::string::npos ? 2 : 1);
    const std::string wgmma = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(bn) + "k16.f32";
    EXPECT_NE(k->ptx.find(wgmma), std::string::npos) << wgmma << " in " << planned->config;
    EXPECT_NE(k->ptx.find("setmaxnreg.inc.sync.aligned.u32"), std::string::npos);
    // The weight face reads M- and N-major tiles (imm-trans-a, imm-trans-b = 1), the 1x1 data face's filter in
    // place an N-major B, the others K-major ones.
    const bool weight = config.find("weight gradient") != std::string::npos;
    const bool in_place = config.find("filter in place") != std::string::npos;
    EXPECT_NE(k->ptx.find(weight ? ", p, 1, 1, 1, 1;" : in_place ? ", p, 1, 1, 0, 1;" : ", p, 1, 1, 0, 0;"),
              std::string::npos)
        << planned->config;
    EXPECT_EQ(k->ptx.find(weight ? ", p, 1, 1, 0, 0;" : ", p, 1, 1, 1, 1;"), std::string::npos) << planned->config;
    // Split K sums its partials in a second kernel.
    const bool split = weight && std::stoi(config.substr(config.find("splits ") + 7)) > 1;
    EXPECT_EQ(k->ptx.find("boo_wgmma_dw_reduce") != std::string::npos, split) << planned->config;
  }
  ::unsetenv("BOO_WGMMA_TAPS");
}

// gpu:conv:wgmma_sm90's TF32 forward and data faces (fp32 with --fp32-math tf32: m64nBNk8 wgmma on k-blocks of
// 32 fp32, both operands by TMA) compile for every tile width, x by im2col or as a plain matrix, TMA and plain
// stores, bias, activations (a GELU too), a residual, split K, groups, stride phases and NCHW copies, without
// spills and with the register reallocation honoured.
TEST(NvrtcTest, HopperTf32ModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC", tf32 = " --fp32-math tf32";
  for (const std::string& command : {
           "conv -n 16 -c 768 -H 48 -W 32 -k 2048 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation relu" + tf32 + nhwc,
           "conv -n 16 -c 576 -H 48 -W 32 -k 576 -y 3 -x 3 -F 1 -b 1 --activation gelu" + tf32 + nhwc,
           "conv -n 8 -c 128 -H 32 -W 32 -k 128 -y 3 -x 3 -p 1 -q 1 -F 1" + tf32 + nhwc,
           "conv -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1" + tf32 + nhwc,
           "conv -n 16 -c 672 -H 48 -W 32 -k 576 -y 1 -x 1 -F 1" + tf32 + nhwc,
           "conv -n 16 -c 2048 -H 1 -W 30 -k 576 -y 1 -x 1 -F 1" + tf32 + nhwc,
           "conv -n 16 -c 128 -H 20 -W 20 -k 192 -y 3 -x 3 -p 1 -q 1 -F 1 --residual 1" + tf32 + nhwc,
           "conv -n 16 -c 512 -H 28 -W 28 -k 512 -y 3 -x 3 -p 1 -q 1 -g 2 -F 1" + tf32 + nhwc,
           "conv -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + tf32,
           "conv -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 1" + tf32,
           // The data face on the flipped copy: stride 1, stride phases, 1x1, split K, NCHW copies, transposed.
           "conv -n 16 -c 256 -H 28 -W 28 -k 512 -y 3 -x 3 -p 1 -q 1 -F 2" + tf32 + nhwc,
           "conv -n 16 -c 256 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2" + tf32 + nhwc,
           "conv -n 32 -c 256 -H 56 -W 56 -k 512 -y 1 -x 1 -F 2" + tf32,
           "conv -n 16 -c 192 -H 24 -W 16 -k 96 -y 3 -x 3 -p 1 -q 1 -F 2" + tf32,
           "conv -m trans -n 16 -c 256 -H 16 -W 16 -k 128 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 1 -b 1" + tf32 + nhwc,
       }) {
    SCOPED_TRACE(command);
    std::optional<HopperModule> module;
    compile_hopper_module(command, device, module);
    ASSERT_TRUE(module.has_value());
    const jit::CompiledKernel* k = &module->kernel;
    const std::string& config = module->planned.config;  // "tile 128xNx32 ..."
    ASSERT_EQ(config.rfind("tile 128x", 0), 0u) << config;
    const size_t x2 = config.find('x', 9);
    EXPECT_EQ(config.substr(x2, 4), "x32 ") << config;
    const std::string wgmma = "wgmma.mma_async.sync.aligned.m64n" + config.substr(9, x2 - 9) + "k8.f32.tf32.tf32";
    EXPECT_NE(k->ptx.find(wgmma), std::string::npos) << wgmma << " in " << config;
    EXPECT_EQ(k->ptx.find("k16.f32"), std::string::npos) << config;
    EXPECT_NE(config.find("x by TMA"), std::string::npos) << config;
  }
}

TEST(NvrtcTest, ResidualEpilogueModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  std::vector<std::string> lines;
  std::ifstream in("tests/gpu/residual_lines.txt");
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  ASSERT_GE(lines.size(), 20u) << "run from the source folder";
  std::set<std::string> tiers_used;
  for (const std::string& command : lines) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    int accepted = 0;
    for (const char* name : {"gpu:conv:wgmma_sm90", "gpu:conv:implicit_gemm", "gpu:conv:direct",
                             "gpu:conv:pointwise", "gpu:conv:fp32_bf16x6", "gpu:conv:depthwise"}) {
      const ops::GpuImplementation* impl = conv_tier(name);
      ASSERT_NE(impl, nullptr);
      Result<Planned> planned = plan_for(*impl, *p->signature, device);
      const bool has_epilogue = std::string_view(name) == "gpu:conv:wgmma_sm90" ||
                                std::string_view(name) == "gpu:conv:implicit_gemm" ||
                                std::string_view(name) == "gpu:conv:direct";
      if (!has_epilogue) {
        ASSERT_FALSE(planned.ok()) << name << " took a residual";
        continue;
      }
      if (!planned.ok()) continue;
      ++accepted;
      tiers_used.insert(name);
      if (std::string_view(name) != "gpu:conv:direct")  // (its calls: ConvResidualPlanTest)
        EXPECT_NE(planned->plan.source.text.find("kResidual = true"), std::string::npos) << name;
      Result<jit::CompiledKernel> k = jit::compile_kernel(planned->plan.source, kArch, true);
      ASSERT_TRUE(k.ok()) << name << ": " << k.status().to_string();
      EXPECT_GT(k->cubin.size(), 0u);
      if (std::string_view(name) == "gpu:conv:wgmma_sm90") {
        EXPECT_EQ(k->spill_bytes, 0) << k->log;
        EXPECT_EQ(k->log.find("C7508"), std::string::npos) << "setmaxnreg ignored:\n" << k->log;
      }
    }
    EXPECT_GE(accepted, 1);
  }
  EXPECT_EQ(tiers_used.size(), 3u);
}

// gpu:conv:wgmma_sm90's native path for pointwise NCHW convs
// (device/conv_wgmma_nchw.cuh) compiles for every face, both 16-bit types and
// every tile width and ring depth it may choose, with the bias and activation,
// partial tiles (pixels, input and output channels), 1-D and transposed convs,
// split or unsplit weight gradients, 196-pixel images (8-byte vectors), TMA loads and stores or cp.async and
// plain stores; without spills, with the register
// reallocation honoured and the wgmma's operand majors as planned: forward
// w K-major and pixels N-major (imm-trans 0, 1), data face w M-major (1, 1),
// weight face both K-major (0, 0).
TEST(NvrtcTest, HopperNchwPointwiseModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  const ops::GpuImplementation* hopper = conv_tier("gpu:conv:wgmma_sm90");
  ASSERT_NE(hopper, nullptr);
  std::set<std::string> compiled;
  for (const std::string& command : {
           std::string("convfp16 -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 1 -b 1 --activation relu"),
           std::string("convbfp16 -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 2"),
           std::string("convbfp16 -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 4"),
           std::string("convbfp16 -n 16 -c 200 -H 28 -W 28 -k 136 -y 1 -x 1 -F 1 -b 1 --activation gelu"),
           std::string("convfp16 -n 16 -c 200 -H 28 -W 28 -k 136 -y 1 -x 1 -F 2"),
           std::string("convfp16 -n 16 -c 200 -H 28 -W 28 -k 136 -y 1 -x 1 -F 4"),
           std::string("convbfp16 -n 1 -c 512 -H 64 -W 64 -k 1024 -y 1 -x 1 -F 4"),
           std::string("convbfp16 --spatial_dim 1 -n 64 -c 128 -H 1024 -k 256 -y 1 -F 1 -b 1"),
           std::string("convfp16 -n 32 -c 256 -H 28 -W 28 -k 128 -y 1 -x 1 -m trans -F 1"),
           // 64 output channels: the consumers split the tile's columns (forward with the bias, data face).
           std::string("convfp16 -n 32 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 1 -b 1 --activation relu"),
           std::string("convbfp16 -n 32 -c 64 -H 56 -W 56 -k 256 -y 1 -x 1 -F 2"),
           // 196 pixels an image: 8-byte copies and stores (kPixelVector 4), every face.
           std::string("convfp16 -n 64 -c 96 -H 14 -W 14 -k 576 -y 1 -x 1 -F 1 -b 1 --activation relu"),
           std::string("convbfp16 -n 64 -c 96 -H 14 -W 14 -k 576 -y 1 -x 1 -F 2"),
           std::string("convfp16 -n 64 -c 96 -H 14 -W 14 -k 576 -y 1 -x 1 -F 4"),
       }) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<std::unique_ptr<ops::OpProblem>> made = ops::find_op("conv")->make_problem(*p->signature);
    ASSERT_TRUE(made.ok()) << made.status().to_string();
    const ops::OpProblem& problem = **made;
    ASSERT_TRUE(hopper->accepts(problem, arch).ok());
    // The first line's every candidate (tile widths, ring depths); the others' chosen config.
    Result<ops::ConfigList> list = hopper->candidates(problem, arch);
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    const size_t last = compiled.empty() ? list->size() : 1;
    for (size_t i = 0; i < last; ++i) {
      const std::string config = (*list)[i]->text();
      SCOPED_TRACE(config);
      ASSERT_NE(config.find("native NCHW 1x1"), std::string::npos);
      Result<ops::Plan> plan = hopper->plan(problem, *(*list)[i], arch);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      if (!compiled.insert(plan->source.text).second) continue;
      Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, true);
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      EXPECT_EQ(k->spill_bytes, 0) << k->log;
      EXPECT_EQ(k->stack_bytes, 0) << k->log;
      EXPECT_EQ(k->log.find("C7508"), std::string::npos) << "setmaxnreg ignored:\n" << k->log;
      const size_t x1 = config.find('x'), x2 = config.find('x', x1 + 1);
      const int width = std::stoi(config.substr(x1 + 1, x2 - x1 - 1));
      const bool halves = config.find("consumers split the columns") != std::string::npos;
      const std::string wgmma =
          "wgmma.mma_async.sync.aligned.m64n" + std::to_string(halves ? width / 2 : width) + "k16.f32";
      EXPECT_NE(k->ptx.find(wgmma), std::string::npos) << wgmma;
      const char* majors = config.find("weight gradient") != std::string::npos ? ", p, 1, 1, 0, 0;"
                           : config.find("w M-major") != std::string::npos ? ", p, 1, 1, 1, 1;"
                                                                            : ", p, 1, 1, 0, 1;";
      EXPECT_NE(k->ptx.find(majors), std::string::npos) << majors;
      const bool split = config.find("splits ") != std::string::npos && std::stoi(config.substr(config.find("splits ") + 7)) > 1;
      EXPECT_EQ(k->ptx.find("boo_wgmma_dw_reduce") != std::string::npos, split);
      // 8-byte pixel vectors: cp.async of 8 bytes, and the planar result's stores 8 bytes wide.
      const bool eight_bytes = plan->source.text.find("kPixelVector = 4;") != std::string::npos;
      EXPECT_EQ(eight_bytes, command.find("-H 14") != std::string::npos);
      EXPECT_EQ(k->ptx.find("cp.async.ca.shared.global") != std::string::npos, eight_bytes);
      if (eight_bytes && config.find("weight gradient") == std::string::npos) {
        EXPECT_NE(k->ptx.find("st.global.v2.u32"), std::string::npos);
      }
      // By TMA: planar x (dy) as boxes of a 3-D map {pixels, channel rows, images}, the result stored so.
      const bool planar_tma = config.find("pixels N-major") != std::string::npos &&
                              config.find("x by TMA (a plain matrix)") != std::string::npos;
      EXPECT_EQ(k->ptx.find("cp.async.bulk.tensor.3d.shared::cluster.global") != std::string::npos, planar_tma);
      EXPECT_EQ(k->ptx.find("cp.async.bulk.tensor.3d.global.shared::cta") != std::string::npos,
                config.find("y by TMA") != std::string::npos);
    }
  }
  EXPECT_GE(compiled.size(), 22u);  // 3 widths x 3-6 stages of the first line, then one each
}

// gpu:conv:planar_tf32 compiles for sm_90a without spills or stack, the
// register reallocation honoured, its TF32 wgmma taking A from registers:
// every width of the first line, then elements copied and stored one at a
// time (49 pixels an image), bias, residual and
// activations, a 3-D conv, partial channel tiles and a stride of 2.
TEST(NvrtcTest, PlanarTf32ModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  const ops::GpuImplementation* planar = conv_tier("gpu:conv:planar_tf32");
  ASSERT_NE(planar, nullptr);
  std::set<std::string> compiled;
  for (const std::string& command : {
           std::string("conv -n 32 -c 1024 -H 14 -W 14 -k 256 -y 1 -x 1 -F 1"),
           std::string("conv -n 3 -c 44 -H 7 -W 7 -k 72 -y 1 -x 1 -F 1 -b 1 --activation gelu --residual 1"),
           std::string("conv -n 4 -c 96 -H 12 -W 12 -k 64 -y 1 -x 1 -F 1 -b 1 --activation relu --residual 1"),
           std::string("conv -n 2 -c 32 --in_d 6 -H 10 -W 10 -k 48 --fil_d 1 -y 1 -x 1 --spatial_dim 3 -F 1 -b 1"),
           std::string("conv -n 64 -c 576 -H 7 -W 7 -k 160 -y 1 -x 1 -F 1"),
           std::string("conv -n 32 -c 256 -H 56 -W 56 -k 512 -y 1 -x 1 -u 2 -v 2 -F 1 -b 1 --activation relu"),
       }) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<std::unique_ptr<ops::OpProblem>> made = ops::find_op("conv")->make_problem(*p->signature);
    ASSERT_TRUE(made.ok()) << made.status().to_string();
    const ops::OpProblem& problem = **made;
    ASSERT_TRUE(planar->accepts(problem, arch).ok());
    Result<ops::ConfigList> list = planar->candidates(problem, arch);
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    const size_t last = compiled.empty() ? list->size() : 1;
    for (size_t i = 0; i < last; ++i) {
      const std::string config = (*list)[i]->text();
      SCOPED_TRACE(config);
      Result<ops::Plan> plan = planar->plan(problem, *(*list)[i], arch);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      if (!compiled.insert(plan->source.text).second) continue;
      Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, true);
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      EXPECT_EQ(k->spill_bytes, 0) << k->log;
      EXPECT_EQ(k->stack_bytes, 0) << k->log;
      EXPECT_EQ(k->log.find("C7508"), std::string::npos) << "setmaxnreg ignored:\n" << k->log;
      const size_t x1 = config.find("tile 128x") + 9;
      const std::string wgmma = "wgmma.mma_async.sync.aligned.m64n" + config.substr(x1, config.find('x', x1) - x1) +
                                "k8.f32.tf32.tf32";
      EXPECT_NE(k->ptx.find(wgmma), std::string::npos) << wgmma;
    }
  }
  EXPECT_GE(compiled.size(), 8u);  // 4 widths of the first line, then one each
}

// gpu:conv:wgmma_sm90's split K of the forward and data faces (the kernel's
// Units, conv_wgmma_split.cuh's reduce) compiles for sm_90a without spills or
// stack, the register reallocation honoured: every candidate of the first line
// (3 widths split and unsplit, every ring depth), then the chosen config of
// small convs with bias and activations, partial tiles, 3x3 with padding, 1-D,
// the data face, NCHW operands and a GEMM's fp32 sums (kFp32Out: the reduce
// leaves them in the workspace). Each split module holds both entries.
// Every producer the Hopper tier has (the forward face, the data face, strided
// phases, split K, the weight face, the native NCHW 1x1 path, the fp32
// split's sums and a GEMM) announces its stages by the hardware
// (cp.async.mbarrier.arrive.noinc, no wait for its own copies), waits for its
// copies before it exits, and compiles for sm_90a without spills. (The cp.async producers: BOO_WGMMA_TMA=0,
// as where TMA does not apply.)
TEST(NvrtcTest, HopperProducersAnnounceStagesAsCopiesLand) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  ::setenv("BOO_WGMMA_TMA", "0", 1);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  for (const std::string& command : {
           "convbfp16 -n 16 -c 576 -H 48 -W 32 -k 576 -y 3 -x 3 -F 1 -b 1 --activation relu" + nhwc,
           "convfp16 -n 16 -c 256 -H 28 -W 28 -k 512 -y 3 -x 3 -p 1 -q 1 -F 2" + nhwc,
           "convbfp16 -n 16 -c 128 -H 56 -W 56 -k 128 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2" + nhwc,
           "convbfp16 -n 16 -c 2048 -H 1 -W 30 -k 576 -y 1 -x 1 -F 1" + nhwc,
           "convbfp16 -n 128 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1" + nhwc,
           std::string("convfp16 -n 32 -c 256 -H 56 -W 56 -k 64 -y 1 -x 1 -F 1"),
           std::string("conv -n 16 -c 512 -H 28 -W 28 -k 512 -y 3 -x 3 -p 1 -q 1 -F 1"),
           std::string("gemmbfp16 --a_w 4096 --a_h 4096 --b_w 4096"),
       }) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<runtime::Dispatch> d = runtime::choose_gpu_implementation(*p->signature, device);
    ASSERT_TRUE(d.ok() && d->chosen) << (d.ok() ? d->failure() : d.status()).to_string();
    Result<std::unique_ptr<const ops::Config>> config = d->chosen->configure(*d->problem, ops::ArchSpec::of(device));
    ASSERT_TRUE(config.ok()) << config.status().to_string();
    Result<ops::Plan> plan = d->chosen->plan(*d->problem, **config, ops::ArchSpec::of(device));
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    SCOPED_TRACE((*config)->text());
    Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, true);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_EQ(k->spill_bytes, 0) << k->log;
    EXPECT_NE(k->ptx.find("cp.async.mbarrier.arrive.noinc.shared"), std::string::npos);
    EXPECT_EQ(k->ptx.find("cp.async.wait_group"), std::string::npos) << "a producer still waits for its copies";
    EXPECT_NE(k->ptx.find("cp.async.wait_all"), std::string::npos) << "a producer exits with copies in flight";
  }
  ::unsetenv("BOO_WGMMA_TMA");
}

// The wgmma tier loads the forward face's filter (one box {64, BN} a k-block)
// and the weight face's dy (two boxes {64, 64}) with TMA (ConvWgmmaConfig's `tma`): every such kernel
// compiles for sm_90a without spills, its producer within the registers it keeps (conv_wgmma.cuh's
// Registers: 56 beside tiles wider than 128, else 88; ptxas spills a setmaxnreg region that needs more than
// its budget: the first forward TMA kernel below, its budget lowered to 40 in the PTX, spills), and
// takes its maps as a __grid_constant__ parameter. Forward lines: 64-, 128-, 192- and 256-wide tiles,
// bias and activation, fp16, a 1-D conv, split K, a staged (KCRS) filter, a packed reduction ending
// inside a k-block (C = 72, 200, 136: x by cp.async, the filter by TMA as boo tune's second candidate; the others load x by an im2col map too), fp32 sums (gpu:conv:fp32_bf16x6); weight lines (C not a multiple of 64: x by
// cp.async; HopperWeightFullyTmaModulesCompile has the others): K = 200 and 136 (a last row tile whose second box
// lies partly or wholly past K), stride 2, fp32 sums.
TEST(NvrtcTest, HopperTmaModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  ::setenv("BOO_UNVERIFIED_KERNELS", "1", 1);
  ::setenv("BOO_WGMMA_TMA_STORE", "0", 1);  // the loads' kernels alone: HopperTmaStoreModulesCompile stores
  for (const std::string& command : {
           "convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + nhwc,
           "convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1" + nhwc,
           "convfp16 -n 16 -c 576 -H 48 -W 32 -k 576 -y 3 -x 3 -F 1 -b 1 --activation relu" + nhwc,
           "convbfp16 -n 16 -c 768 -H 48 -W 32 -k 2048 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation gelu" + nhwc,
           "convbfp16 -n 4 -c 1024 -H 7 -W 7 -k 200 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation relu" + nhwc,
           std::string("convbfp16 --spatial_dim 1 -n 4 -c 512 -H 64 -k 256 -y 5 -p 2 -F 1 --in_layout NHC "
                       "--fil_layout NHC --out_layout NHC"),
           std::string("convbfp16 -n 32 -c 72 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1"),
           "convbfp16 -n 16 -c 200 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation gelu" + nhwc,
           "convfp16 -n 16 -c 136 -H 48 -W 32 -k 576 -y 3 -x 3 -F 1" + nhwc,
           std::string("conv -n 16 -c 512 -H 28 -W 28 -k 512 -y 3 -x 3 -p 1 -q 1 -F 1"),
           "convbfp16 -n 128 -c 136 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convbfp16 -n 16 -c 200 -H 28 -W 28 -k 200 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convbfp16 -n 16 -c 136 -H 28 -W 28 -k 136 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convfp16 -n 16 -c 72 -H 28 -W 28 -k 512 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 4" + nhwc,
           "conv -n 16 -c 200 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
       }) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<runtime::Dispatch> d = runtime::choose_gpu_implementation(*p->signature, device);
    ASSERT_TRUE(d.ok() && d->chosen) << (d.ok() ? d->failure() : d.status()).to_string();
    Result<std::unique_ptr<const ops::Config>> config = d->chosen->configure(*d->problem, ops::ArchSpec::of(device));
    ASSERT_TRUE(config.ok()) << config.status().to_string();
    if ((*config)->text().find("no TMA: the filter alone by TMA was slower") != std::string::npos) {
      // x by cp.async: the filter by TMA beside it is boo tune's second candidate, not the heuristic's.
      Result<ops::ConfigList> list = d->chosen->candidates(*d->problem, ops::ArchSpec::of(device));
      ASSERT_TRUE(list.ok() && list->size() > 1);
      config = std::move((*list)[1]);
    }
    Result<ops::Plan> plan = d->chosen->plan(*d->problem, **config, ops::ArchSpec::of(device));
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    SCOPED_TRACE((*config)->text());
    const bool weight = command.find("-F 4") != std::string::npos;
    EXPECT_NE((*config)->text().find(weight ? ", dy by TMA" : ", filter by TMA"), std::string::npos);
    std::vector<ops::TensorMapSlot> maps;
    for (const ops::LaunchStep& step : plan->steps)
      maps.insert(maps.end(), step.tensor_maps.begin(), step.tensor_maps.end());
    // Where x is a TMA operand too (C a multiple of 64: an im2col map) the kernel is HopperFullyTmaModulesCompile's
    // kind (HopperWeightFullyTmaModulesCompile's on the weight face); here the filter's (or dy's) map beside
    // cp.async copies.
    if ((*config)->text().find(", x by TMA") != std::string::npos) {
      EXPECT_FALSE(weight);
      EXPECT_EQ(maps.size(), 2u);
      continue;
    }
    ASSERT_EQ(maps.size(), 1u);
    Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, true);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_EQ(k->spill_bytes, 0) << k->log;
    EXPECT_GT(k->registers, 0) << k->log;
    EXPECT_LE(k->registers, 168) << k->log;  // 384 threads, one CTA per SM: 65536 / 384, rounded down to 8
    // The producer's registers (Registers in conv_wgmma.cuh): 56 beside 192/256-wide tiles, 88 beside narrower.
    const bool wide = plan->source.text.find("BN = 192;") != std::string::npos ||
                      plan->source.text.find("BN = 256;") != std::string::npos;
    EXPECT_NE(k->ptx.find(wide ? "setmaxnreg.dec.sync.aligned.u32 56;" : "setmaxnreg.dec.sync.aligned.u32 88;"),
              std::string::npos);
    // The maps stay in the parameter space (a local copy's address would not reach the copy engine).
    EXPECT_NE(k->ptx.find(".param .align 64 .b8 boo_wgmma_"), std::string::npos);
    EXPECT_NE(k->ptx.find("cvta.param.u64"), std::string::npos);
    EXPECT_NE(k->ptx.find("prefetch.tensormap"), std::string::npos);
    // The bytes the stage's barrier expects are the host map's boxes, one or two a k-block (a mismatch
    // would hang the GPU: the phase would never complete, or complete before the copy landed).
    std::smatch expect;
    ASSERT_TRUE(std::regex_search(k->ptx, expect,
                                  std::regex(R"(mbarrier\.expect_tx\.relaxed\.cta\.shared::cta\.b64 \[%r\d+\], (%r\d+);)")));
    std::smatch bytes;
    ASSERT_TRUE(std::regex_search(k->ptx, bytes, std::regex("mov\\.u32\\s+" + expect[1].str() + ", (\\d+);")));
    EXPECT_EQ(std::stoull(bytes[1].str()), maps[0].box_bytes() * (weight ? 2 : 1));
    // One box a k-block (forward), two (weight face): the copies in the producer's k-block loop.
    size_t copies = 0;
    for (size_t at = k->ptx.find("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes");
         at != std::string::npos;
         at = k->ptx.find("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes", at + 1))
      ++copies;
    EXPECT_EQ(copies, weight ? 2u : 1u);
  }
  ::unsetenv("BOO_WGMMA_TMA_STORE");
  ::unsetenv("BOO_UNVERIFIED_KERNELS");
}

// The fully-TMA forward kernels (gated; kTmaX: A a plain matrix, 1x1 convs and GEMMs, or an im2col map,
// kIm2colX, where C is a multiple of 64): one producer
// thread issues the A and B boxes of a k-block, arriving once on the stage's barrier (initialized to one
// arrival) with both boxes' bytes; the producer warpgroup keeps 40 registers, the consumers 232; no
// cp.async and no proxy fence. Lines: a 256-wide 1x1 conv, fp16 with bias and relu where M (6300) is not a
// multiple of 128 and C = 72 ends inside the one k-block, a 1-D conv, a GEMM with both operands
// transposed, fp32 sums (--alpha: the GEMM's epilogue), the B gradient (A^T staged); im2col: the 3x3
// profiled line, padding 0 with M not a multiple of 128, stride 2 (fp16, bias), dilation 2, a 1-D conv, a
// 1x1 conv with padding 1, a strided 1x1 conv of 96 channels (its second copy partial); grouped: a 3x3 of 6
// groups, a 1x1 of 2.
// The heuristic's config and plan of a command on `device`, and the plan's tensor maps in step order.
struct HeuristicPlan {
  std::unique_ptr<const ops::Config> config;
  ops::Plan plan;
  std::vector<ops::TensorMapSlot> maps;
};
Result<HeuristicPlan> heuristic_plan(const std::string& command, const DeviceInfo& device) {
  BOO_ASSIGN_OR_RETURN(ParsedCommand p, parse_command(std::string_view(command)));
  BOO_ASSIGN_OR_RETURN(runtime::Dispatch d, runtime::choose_gpu_implementation(*p.signature, device));
  if (!d.chosen) return d.failure();
  HeuristicPlan out;
  BOO_ASSIGN_OR_RETURN(out.config, d.chosen->configure(*d.problem, ops::ArchSpec::of(device)));
  BOO_ASSIGN_OR_RETURN(out.plan, d.chosen->plan(*d.problem, *out.config, ops::ArchSpec::of(device)));
  for (const ops::LaunchStep& step : out.plan.steps)
    out.maps.insert(out.maps.end(), step.tensor_maps.begin(), step.tensor_maps.end());
  return out;
}

// The transaction bytes the PTX's first arrival with expect_tx announces (0 where not a constant).
unsigned long long expected_tx_bytes(const std::string& ptx) {
  std::smatch expect, bytes;
  if (std::regex_search(ptx, expect,
                        std::regex(R"(mbarrier\.arrive\.expect_tx\.release\.cta\.shared::cta\.b64 _, \[%r\d+\], (%r\d+);)")) &&
      std::regex_search(ptx, bytes, std::regex("mov\\.u32\\s+" + expect[1].str() + ", (\\d+);")))
    return std::stoull(bytes[1].str());
  return 0;
}

// The arrival counts the PTX's mbarriers are initialized to (those set from constants).
std::set<std::string> barrier_init_counts(const std::string& ptx) {
  std::set<std::string> counts;
  const std::regex init(R"(mbarrier\.init\.shared::cta\.b64 \[%r\d+\], (%r\d+);)");
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), init); it != std::sregex_iterator(); ++it) {
    std::smatch value;
    if (std::regex_search(ptx, value, std::regex("mov\\.u32\\s+" + (*it)[1].str() + ", (\\d+);")))
      counts.insert(value[1].str());
  }
  return counts;
}

// What a fully-TMA kernel's PTX copies (expect_fully_tma_kernel): TMA copies of tiled and of im2col maps,
// arrivals with expect_tx, and the bytes the first of them expects (0 where not a constant).
struct FullyTmaCopies {
  size_t tiled = 0, gathered = 0, arrivals = 0;
  unsigned long long expected_bytes = 0;
};

// The checks every fully-TMA kernel of the wgmma tier passes (one producer thread issues every box of a
// k-block, arriving once on the stage's barrier, initialized to one arrival, with the boxes' bytes): no
// spills, the producer warpgroup at 40 registers and the consumers at 232, the maps in the parameter space
// and both prefetched, and nothing but TMA fills the stages (no cp.async, no proxy fence, no second
// expect_tx); the full barriers expect one arrival, the empty ones the 8 consumer warps'.
FullyTmaCopies expect_fully_tma_kernel(const jit::CompiledKernel& k) {
  EXPECT_EQ(k.spill_bytes, 0) << k.log;
  EXPECT_EQ(k.stack_bytes, 0) << k.log;
  EXPECT_EQ(k.log.find("C7508"), std::string::npos) << "setmaxnreg ignored:\n" << k.log;
  EXPECT_EQ(k.log.find(kWgmmaSerialized), std::string::npos) << k.log;
  EXPECT_GT(k.registers, 0) << k.log;
  EXPECT_LE(k.registers, 168) << k.log;
  const std::string& ptx = k.ptx;
  EXPECT_NE(ptx.find("setmaxnreg.dec.sync.aligned.u32 40;"), std::string::npos);
  EXPECT_NE(ptx.find("setmaxnreg.inc.sync.aligned.u32 232;"), std::string::npos);
  EXPECT_NE(ptx.find(".param .align 64 .b8 boo_wgmma_"), std::string::npos);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = ptx.find(what); at != std::string::npos; at = ptx.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("prefetch.tensormap"), 2u);
  EXPECT_EQ(count("cp.async.cg.shared.global"), 0u);
  EXPECT_EQ(count("cp.async.mbarrier.arrive"), 0u);
  EXPECT_EQ(count("fence.proxy.async"), 0u);
  EXPECT_EQ(count("mbarrier.expect_tx"), 0u);
  FullyTmaCopies copies;
  copies.tiled = count("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes");
  copies.gathered = count("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes");
  copies.arrivals = count("mbarrier.arrive.expect_tx");
  copies.expected_bytes = expected_tx_bytes(ptx);
  EXPECT_EQ(barrier_init_counts(ptx), (std::set<std::string>{"1", "8"}));
  return copies;
}

TEST(NvrtcTest, HopperFullyTmaModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  ::setenv("BOO_UNVERIFIED_KERNELS", "1", 1);
  ::setenv("BOO_WGMMA_TMA_STORE", "0", 1);  // the loads' kernels alone: HopperTmaStoreModulesCompile stores
  for (const std::string& command : {
           "convbfp16 -n 64 -c 256 -H 28 -W 28 -k 512 -y 1 -x 1 -F 1" + nhwc,
           "convfp16 -n 7 -c 72 -H 30 -W 30 -k 256 -y 1 -x 1 -F 1 -b 1 --activation relu" + nhwc,
           std::string("convbfp16 --spatial_dim 1 -n 8 -c 512 -H 1000 -k 256 -y 1 -F 1 --in_layout NHC "
                       "--fil_layout NHC --out_layout NHC"),
           std::string("gemmbfp16 --a_w 2000 --a_h 2048 --b_w 8192 --transA 1 --transB 1 --bias 1"),
           std::string("gemmbfp16 --a_w 1024 --a_h 8192 --b_w 512 --alpha 0.5"),
           std::string("gemmbfp16 --a_w 4096 --a_h 2048 --b_w 1024 -F 2"),
           "convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + nhwc,
           "convbfp16 -n 7 -c 128 -H 28 -W 28 -k 256 -y 3 -x 3 -F 1" + nhwc,
           "convfp16 -n 64 -c 256 -H 56 -W 56 -k 512 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 1 -b 1 --activation relu" + nhwc,
           "convbfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -F 1" + nhwc,
           std::string("convbfp16 --spatial_dim 1 -n 8 -c 512 -H 1000 -k 256 -y 5 -p 2 -F 1 --in_layout NHC "
                       "--fil_layout NHC --out_layout NHC"),
           "convbfp16 -n 64 -c 256 -H 28 -W 28 -k 512 -y 1 -x 1 -p 1 -q 1 -F 1" + nhwc,
           "convbfp16 -n 64 -c 96 -H 56 -W 56 -k 256 -y 1 -x 1 -u 2 -v 2 -F 1" + nhwc,
           "convbfp16 -n 128 -c 384 -H 48 -W 32 -k 384 -y 3 -x 3 -p 1 -q 1 -g 6 -F 1" + nhwc,
           "convbfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 1 -x 1 -g 2 -F 1" + nhwc,
       }) {
    SCOPED_TRACE(command);
    Result<HeuristicPlan> h = heuristic_plan(command, device);
    ASSERT_TRUE(h.ok()) << h.status().to_string();
    const std::string text = h->config->text();
    SCOPED_TRACE(text);
    const bool im2col = text.find(", filter by TMA, x by TMA (im2col)") != std::string::npos;
    EXPECT_TRUE(im2col || text.find(", filter by TMA, x by TMA (a plain matrix)") != std::string::npos);
    const std::vector<ops::TensorMapSlot>& maps = h->maps;
    ASSERT_EQ(maps.size(), 2u);
    Result<jit::CompiledKernel> k = jit::compile_kernel(h->plan.source, kArch, true);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    const FullyTmaCopies copies = expect_fully_tma_kernel(*k);
    EXPECT_GT(copies.tiled, 0u);
    // The boxes copied in pairs (A and B, an im2col A by its own instruction; ptxas unrolls short k-block
    // loops), one arrival a pair.
    EXPECT_EQ(copies.gathered, im2col ? copies.tiled : 0u);
    EXPECT_EQ(im2col ? 0u : copies.tiled % 2, 0u);
    EXPECT_EQ(copies.arrivals, im2col ? copies.tiled : copies.tiled / 2);
    // The one arrival a stage expects carries the two boxes' bytes (a mismatch would hang the GPU).
    EXPECT_EQ(copies.expected_bytes, maps[0].box_bytes() + maps[1].box_bytes());
  }
  ::unsetenv("BOO_WGMMA_TMA_STORE");
  ::unsetenv("BOO_UNVERIFIED_KERNELS");
}

// A 1x1 data face at stride 1 by TMA: the forward kernel on dy as a plain matrix and the filter read in place
// as an N-major B (BN / 64 boxes {64 channels, 64 k} a k-block), or, where its k rows are not 16-byte aligned
// (419 channels), the flipped filter's one tap (y by TMA too: HopperTmaStoreModulesCompile checks those stores).
// The fully-TMA kernels' checks, the one arrival a stage expecting every box. Lines: 288 -> 384 channels, fp16
// with partial tiles, dx padded (419 channels).
TEST(NvrtcTest, HopperDataFaceTmaModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  ::setenv("BOO_WGMMA_TMA_STORE", "0", 1);
  for (const std::string& command : {
           "convbfp16 -n 16 -c 288 -H 48 -W 32 -k 384 -y 1 -x 1 -F 2" + nhwc,
           "convfp16 -n 7 -c 200 -H 30 -W 30 -k 136 -y 1 -x 1 -F 2" + nhwc,
           "convbfp16 -n 16 -c 419 -H 48 -W 32 -k 384 -y 1 -x 1 -F 2" + nhwc,
       }) {
    SCOPED_TRACE(command);
    Result<HeuristicPlan> h = heuristic_plan(command, device);
    ASSERT_TRUE(h.ok()) << h.status().to_string();
    const std::string text = h->config->text();
    SCOPED_TRACE(text);
    const bool in_place = command.find("-c 419") == std::string::npos;
    EXPECT_NE(text.find("dx: face 1 as forward"), std::string::npos);
    EXPECT_NE(text.find(in_place ? ", filter in place by TMA (N-major), x by TMA (a plain matrix): one producer thread"
                                 : ", filter by TMA, x by TMA (a plain matrix): one producer thread"),
              std::string::npos);
    ASSERT_EQ(h->maps.size(), 2u);
    Result<jit::CompiledKernel> k = jit::compile_kernel(h->plan.source, kArch, true);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    const FullyTmaCopies copies = expect_fully_tma_kernel(*k);
    EXPECT_GT(copies.tiled, 0u);
    EXPECT_EQ(copies.gathered, 0u);
    const size_t bn = std::stoul(text.substr(text.find("tile 128x") + 9));
    EXPECT_EQ(copies.expected_bytes, (in_place ? bn / 64 : 1) * h->maps[0].box_bytes() + h->maps[1].box_bytes());
  }
  ::unsetenv("BOO_WGMMA_TMA_STORE");
}

// The native path's kernels whose input lies channels-last (conv_wgmma_nchw.cuh's kBKMajor: B tiles K-major,
// one box a k-block) with w K-major (the forward face) or M-major (the data face: two boxes an A tile): the
// fully-TMA kernels' checks, and a stage's one arrival expects the A tile's 16 KiB and the B box. Lines: a
// GEMM of transposed A and B (partial tiles: m, n and k not multiples of the tile), the mixed-layout forward
// with bias and activation in fp16, a data face of two images.
// The data face of several taps at stride 1 reads the flipped filter copy by TMA (Cfg kBTaps: a tiled 4-D box
// of one tap's 64 kb a k-block) beside dy by im2col: one producer thread, no spills, both 16-bit types, NCHW
// on staged copies, 4 groups (a group's kb of the copy, its rows a group's 80 channels), stride phases (2 and 3:
// one im2col map of dy, a phase's taps of the copy as {kb, c, S, R}); and each as the heuristic plans it, the
// channels-last filters of one group read in place ({C, S, R, K}, BN / 64 N-major boxes a k-block).
TEST(NvrtcTest, HopperDataFaceFlippedFilterTmaModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  ::setenv("BOO_WGMMA_TMA_STORE", "0", 1);
  // Each line through the flipped copy (BOO_WGMMA_IN_PLACE_TAPS=0: Cfg kBTaps), then as the heuristic plans it:
  // the filter in place where it applies (kBInPlaceTaps: BN / 64 N-major boxes of a tap a k-block).
  for (const bool in_place : {false, true}) {
    ::setenv("BOO_WGMMA_IN_PLACE_TAPS", in_place ? "1" : "0", 1);
    for (const std::string& command : {
             "convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 2" + nhwc,
             "convfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 2" + nhwc,
             "convbfp16 -n 16 -c 288 -H 48 -W 32 -k 384 -y 3 -x 1 -p 1 -q 0 -F 2" + nhwc,
             "convbfp16 -n 8 -c 200 -H 30 -W 30 -k 128 -y 5 -x 5 -p 4 -q 4 -l 2 -j 2 -F 2" + nhwc,
             std::string("convfp16 -n 32 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 2"),
             "convbfp16 -n 32 -c 320 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -g 4 -F 2" + nhwc,
             "convbfp16 -n 128 -c 128 -H 56 -W 56 -k 128 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2" + nhwc,
             "convfp16 -n 16 -c 128 -H 45 -W 45 -k 128 -y 5 -x 5 -p 2 -q 2 -u 3 -v 3 -F 2" + nhwc,
         }) {
      SCOPED_TRACE(command);
      Result<HeuristicPlan> h = heuristic_plan(command, device);
      ASSERT_TRUE(h.ok()) << h.status().to_string();
      const std::string text = h->config->text();
      SCOPED_TRACE(text);
      EXPECT_NE(text.find("dx: face 1 as forward"), std::string::npos);
      const bool read_in_place = text.find(", filter in place by TMA (N-major), x by TMA (im2col)") != std::string::npos;
      EXPECT_TRUE(read_in_place || text.find(", filter by TMA, x by TMA (im2col): one producer thread") != std::string::npos);
      EXPECT_TRUE(in_place || !read_in_place);
      EXPECT_NE(h->plan.source.text.find(read_in_place ? "kBInPlaceTaps = true;" : "kBTaps = true;"), std::string::npos);
      ASSERT_EQ(h->maps.size(), 2u);
      Result<jit::CompiledKernel> k = jit::compile_kernel(h->plan.source, kArch, true);
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      const FullyTmaCopies copies = expect_fully_tma_kernel(*k);
      EXPECT_EQ(copies.tiled, 0u);  // (2-D: the filter is a 4-D box)
      EXPECT_GT(copies.gathered, 0u);
      EXPECT_NE(k->ptx.find("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"),
                std::string::npos);
      // In place, the B tile is BN / 64 boxes of the filter's map.
      const size_t bn = std::stoul(text.substr(text.find("tile 128x") + 9));
      EXPECT_EQ(copies.expected_bytes,
                h->maps[0].box_bytes() * (read_in_place ? bn / 64 : 1) + h->maps[1].box_bytes());
    }
  }
  ::unsetenv("BOO_WGMMA_IN_PLACE_TAPS");
  ::unsetenv("BOO_WGMMA_TMA_STORE");
}

TEST(NvrtcTest, HopperNativeChannelsLastModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  ::setenv("BOO_UNVERIFIED_KERNELS", "1", 1);
  ::setenv("BOO_WGMMA_TMA_STORE", "0", 1);  // the loads' kernels alone: HopperTmaStoreModulesCompile stores
  for (const std::string& command : {
           std::string("gemmbfp16 --a_w 2000 --a_h 1000 --b_w 4104 --transA 1 --transB 1"),
           std::string("convfp16 -n 3 -c 520 -H 40 -W 40 -k 264 -y 1 -x 1 -F 1 -b 1 --activation relu --in_layout NHWC"),
           std::string("convbfp16 -n 2 -c 512 -H 64 -W 64 -k 256 -y 1 -x 1 -F 2 --out_layout NHWC"),
       }) {
    SCOPED_TRACE(command);
    Result<HeuristicPlan> h = heuristic_plan(command, device);
    ASSERT_TRUE(h.ok()) << h.status().to_string();
    SCOPED_TRACE(h->config->text());
    EXPECT_NE(h->config->text().find("pixels K-major (channels-last)"), std::string::npos);
    ASSERT_EQ(h->maps.size(), 2u);
    EXPECT_NE(h->plan.source.text.find("kBKMajor = true;"), std::string::npos);
    Result<jit::CompiledKernel> k = jit::compile_kernel(h->plan.source, kArch, true);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    const FullyTmaCopies copies = expect_fully_tma_kernel(*k);
    EXPECT_GT(copies.tiled, 0u);
    EXPECT_EQ(copies.gathered, 0u);
    EXPECT_EQ(copies.expected_bytes, 128u * 128 + h->maps[1].box_bytes());
  }
  ::unsetenv("BOO_WGMMA_TMA_STORE");
  ::unsetenv("BOO_UNVERIFIED_KERNELS");
}

// The forward kernels in clusters of two sharing the filter tile (conv_wgmma.cuh's produce_tma, Cfg
// kClusterM; boo tune's candidate, the heuristic's with BOO_WGMMA_CLUSTER=1): without spills within the
// launch's registers, the cluster size declared, each CTA's half of the B tile multicast (one copy a
// k-block beside A's) while the stage's one arrival still expects the whole tile, the barriers visible to
// the cluster before the first copy and the shared memory kept until the other CTA's last arrival (two
// cluster barriers), and the stage released to both CTAs' producers (each empty barrier expects the 8
// consumer warps of both). Lines: a GEMM with partial tiles and an odd number of row tiles (the last
// cluster's second CTA computes rows past M), the im2col x, fp16 with bias and activation, y by plain
// stores.
TEST(NvrtcTest, HopperClusterModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  ::setenv("BOO_UNVERIFIED_KERNELS", "1", 1);
  ::setenv("BOO_WGMMA_CLUSTER", "1", 1);
  for (const std::string& command : {
           std::string("gemmbfp16 --a_w 8320 --a_h 1000 --b_w 2056 --transB 1"),
           "convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + nhwc,
           "convfp16 -n 64 -c 256 -H 28 -W 28 -k 512 -y 1 -x 1 -F 1 -b 1 --activation relu" + nhwc,
           "convbfp16 -n 64 -c 256 -H 28 -W 28 -k 512 -y 1 -x 1 -F 1 --residual 1" + nhwc,
       }) {
    SCOPED_TRACE(command);
    Result<HeuristicPlan> h = heuristic_plan(command, device);
    ASSERT_TRUE(h.ok()) << h.status().to_string();
    SCOPED_TRACE(h->config->text());
    EXPECT_NE(h->config->text().find(", clusters of 2 CTAs along the rows share the filter tile"), std::string::npos);
    ASSERT_GE(h->maps.size(), 2u);
    Result<jit::CompiledKernel> k = jit::compile_kernel(h->plan.source, kArch, true);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_EQ(k->spill_bytes, 0) << k->log;
    EXPECT_EQ(k->stack_bytes, 0) << k->log;
    EXPECT_LE(k->registers, 168) << k->log;
    const std::string& ptx = k->ptx;
    auto count = [&](const std::string& what) {
      size_t n = 0;
      for (size_t at = ptx.find(what); at != std::string::npos; at = ptx.find(what, at + 1)) ++n;
      return n;
    };
    EXPECT_NE(ptx.find(".reqnctapercluster 2, 1, 1"), std::string::npos);
    const size_t multicasts = count(".multicast::cluster");
    EXPECT_GT(multicasts, 0u);
    EXPECT_EQ(count("barrier.cluster.arrive"), 2u);
    EXPECT_EQ(count("barrier.cluster.wait"), 2u);
    EXPECT_GT(count("mapa.shared::cluster"), 0u);
    EXPECT_EQ(count("mbarrier.arrive.shared::cluster.b64"), count("mapa.shared::cluster"));
    // The B map's box is half the tile; a stage's one arrival expects A's box and both halves.
    EXPECT_EQ(expected_tx_bytes(ptx), 128ull * 128 + 2 * h->maps[0].box_bytes());
    EXPECT_EQ(barrier_init_counts(ptx), (std::set<std::string>{"1", "16"}));
  }
  ::unsetenv("BOO_WGMMA_CLUSTER");
  ::unsetenv("BOO_UNVERIFIED_KERNELS");
}

// The forward kernels that store y by TMA (store_tile_tma): without spills within the launch's registers,
// y's map third with store_tile_tma's box (64 channels x 32 pixels), and in the PTX the box stores (one per
// 64 columns of a pass, ptxas may unroll), their groups committed, the staging reused only once they have
// read it, and the writes fenced before the copy engine reads them. Lines: the plain-matrix x (a GEMM, a
// partial last row and column tile), the im2col x, bias with activation, fp16, 1-D; the native NCHW path's forward and data faces (their result a 3-D map
// {pixels, channel rows, images}: a box per 64 pixels x 32 channels of an image), from planar and
// channels-last inputs, with the consumers on split columns too.
TEST(NvrtcTest, HopperTmaStoreModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  ::setenv("BOO_UNVERIFIED_KERNELS", "1", 1);
  for (const std::string& command : {
           std::string("gemmfp16 --a_w 8192 --a_h 1024 --b_w 3072 --transB 1"),
           std::string("gemmbfp16 --a_w 6000 --a_h 1000 --b_w 2056 --transB 1"),
           "convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + nhwc,
           "convfp16 -n 7 -c 72 -H 30 -W 30 -k 200 -y 1 -x 1 -F 1 -b 1 --activation relu" + nhwc,
           std::string("convbfp16 --spatial_dim 1 -n 8 -c 512 -H 1000 -k 256 -y 5 -p 2 -F 1 --in_layout NHC "
                       "--fil_layout NHC --out_layout NHC"),
           std::string("convfp16 -n 16 -c 200 -H 28 -W 28 -k 136 -y 1 -x 1 -F 1 -b 1 --activation silu"),
           std::string("convbfp16 -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 2"),
           std::string("convfp16 -n 32 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 1 -b 1 --activation relu"),
           std::string("convfp16 -n 3 -c 520 -H 40 -W 40 -k 264 -y 1 -x 1 -F 1 -b 1 --activation relu --in_layout NHWC"),
       }) {
    SCOPED_TRACE(command);
    Result<HeuristicPlan> h = heuristic_plan(command, device);
    ASSERT_TRUE(h.ok()) << h.status().to_string();
    SCOPED_TRACE(h->config->text());
    EXPECT_NE(h->config->text().find(", y by TMA"), std::string::npos);
    // y's map last, after the filter's and x's.
    ASSERT_EQ(h->maps.size(), 3u);
    EXPECT_EQ(h->maps.back().params_offset, offsetof(ConvWgmmaStoreParams, tma_y));
    EXPECT_EQ(h->maps.back().rank, 3u);
    EXPECT_EQ(h->maps.back().box[0], 64u);
    EXPECT_EQ(h->maps.back().box[1], 32u);
    EXPECT_EQ(h->maps.back().box[2], 1u);
    Result<jit::CompiledKernel> k = jit::compile_kernel(h->plan.source, kArch, true);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_EQ(k->spill_bytes, 0) << k->log;
    EXPECT_GT(k->registers, 0) << k->log;
    EXPECT_LE(k->registers, 168) << k->log;
    const std::string& ptx = k->ptx;
    EXPECT_NE(ptx.find("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.bulk.commit_group"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.bulk.wait_group.read 0"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.bulk.wait_group 0"), std::string::npos);
    EXPECT_NE(ptx.find("fence.proxy.async.shared::cta"), std::string::npos);
  }
  ::unsetenv("BOO_UNVERIFIED_KERNELS");
}

// The weight face's fully-TMA kernels (C a multiple of 64: x as an im2col map, a box per 64 columns of a
// k-block beside dy's two): expect_fully_tma_kernel's checks, and a stage's one arrival expects dy's two boxes
// and the tile's x boxes (a constant where the columns are a multiple of the tile's width; the last column
// tile copies only its boxes within the columns otherwise). Lines: 128 channels, K = 64 (the consumers split
// the columns), K = 200 (a last row tile partly past K), stride 2, dilation 2, a strided 1x1, C = 320 (2880
// columns: a last tile of fewer boxes), fp32 sums (gpu:conv:fp32_bf16x6's promoted sums).
TEST(NvrtcTest, HopperWeightFullyTmaModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  ::setenv("BOO_UNVERIFIED_KERNELS", "1", 1);
  ::setenv("BOO_WGMMA_TAPS", "0", 1);  // the GEMM path (the shifted taps: HopperWeightShiftedTapsModulesCompile)
  for (const std::string& command : {
           "convbfp16 -n 128 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convbfp16 -n 16 -c 256 -H 28 -W 28 -k 200 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convfp16 -n 16 -c 256 -H 28 -W 28 -k 512 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 4" + nhwc,
           "convbfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -F 4" + nhwc,
           "convbfp16 -n 32 -c 256 -H 56 -W 56 -k 512 -y 1 -x 1 -u 2 -v 2 -F 4" + nhwc,
           "convbfp16 -n 32 -c 320 -H 14 -W 14 -k 320 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           std::string("conv -n 16 -c 512 -H 28 -W 28 -k 512 -y 3 -x 3 -p 1 -q 1 -F 4"),
       }) {
    SCOPED_TRACE(command);
    Result<HeuristicPlan> h = heuristic_plan(command, device);
    ASSERT_TRUE(h.ok()) << h.status().to_string();
    SCOPED_TRACE(h->config->text());
    EXPECT_NE(h->config->text().find(", dy by TMA, x by TMA (im2col): one producer thread"), std::string::npos);
    const std::vector<ops::TensorMapSlot>& maps = h->maps;
    const ops::Plan* plan = &h->plan;
    ASSERT_EQ(maps.size(), 2u);
    EXPECT_EQ(maps[1].mode, ops::TensorMapSlot::Mode::kIm2col);
    EXPECT_EQ(maps[1].pixels_per_column, 64u);
    Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, true);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    const FullyTmaCopies copies = expect_fully_tma_kernel(*k);
    EXPECT_GT(copies.gathered, 0u);
    EXPECT_EQ(copies.tiled % 2, 0u);  // dy's two boxes
    EXPECT_EQ(copies.arrivals, copies.tiled / 2);
    std::smatch bn;
    ASSERT_TRUE(std::regex_search(plan->source.text, bn, std::regex(R"(BN = (\d+);)")));
    std::smatch columns;
    ASSERT_TRUE(std::regex_search(plan->source.text, columns, std::regex(R"(kN = (\d+);)")));
    if (std::stoll(columns[1].str()) % std::stoll(bn[1].str()) == 0)
      EXPECT_EQ(copies.expected_bytes, 2 * maps[0].box_bytes() + std::stoull(bn[1].str()) / 64 * maps[1].box_bytes());
  }
  ::unsetenv("BOO_WGMMA_TAPS");
  ::unsetenv("BOO_UNVERIFIED_KERNELS");
}

// The weight face by shifted taps (conv_wgmma_weight_taps.cuh) compiles for sm_90a without spills for 1-3
// filter rows of 1-4 taps, both 16-bit types, strides along H, dilation, groups and NCHW copies: the producer
// at 40 registers and a consumer per filter row at its share (152 beside three, 232 beside fewer), within the
// launch's 65536; one producer thread issuing two tiled 4-D boxes a strip (8 KiB of dy and x's receptive
// field) on one arrival; the empty barriers counting every consumer warp; one m64n(64 S)k16 wgmma per filter
// row and k16 (the row's S taps as overlapping atoms); the reduce writing dw.
TEST(NvrtcTest, HopperWeightShiftedTapsModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  ::setenv("BOO_WGMMA_TAPS", "all", 1);
  for (const std::string& command : {
           "convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convfp16 -n 16 -c 64 -H 225 -W 225 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "convbfp16 -n 16 -c 64 -H 75 -W 75 -k 64 -y 1 -x 3 -p 0 -q 1 -F 4" + nhwc,
           "convbfp16 -n 16 -c 64 -H 75 -W 75 -k 64 -y 3 -x 1 -p 1 -q 0 -F 4" + nhwc,
           "convbfp16 -n 4 -c 64 -H 48 -W 20 -k 48 -y 2 -x 3 -p 0 -q 2 -u 2 -v 1 -l 1 -j 2 -F 4" + nhwc,
           "convbfp16 -n 4 -c 128 -H 19 -W 70 -k 128 -y 1 -x 4 -p 0 -q 2 -F 4" + nhwc,
           "convbfp16 -n 128 -c 384 -H 48 -W 32 -k 384 -y 3 -x 3 -p 1 -q 1 -g 6 -F 4" + nhwc,
           "convbfp16 -n 16 -c 576 -H 48 -W 32 -k 576 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           std::string("convfp16 -n 16 -c 64 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4"),
       }) {
    SCOPED_TRACE(command);
    Result<HeuristicPlan> h = heuristic_plan(command, device);
    ASSERT_TRUE(h.ok()) << h.status().to_string();
    const std::string text = h->config->text();
    SCOPED_TRACE(text);
    ASSERT_NE(text.find("by shifted taps"), std::string::npos);
    const int rows = std::stoi(text.substr(text.find("1 producer + ") + 13));
    std::smatch s_match;
    ASSERT_TRUE(std::regex_search(h->plan.source.text, s_match, std::regex(R"(static constexpr int S = (\d+);)")));
    const int taps_per_row = std::stoi(s_match[1].str());
    ASSERT_EQ(h->maps.size(), 2u);
    for (const ops::TensorMapSlot& m : h->maps) {
      EXPECT_EQ(m.mode, ops::TensorMapSlot::Mode::kTiled);
      EXPECT_EQ(m.rank, 4u);
    }
    Result<jit::CompiledKernel> k = jit::compile_kernel(h->plan.source, kArch, true);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_EQ(k->spill_bytes, 0) << k->log;
    EXPECT_EQ(k->stack_bytes, 0) << k->log;
    EXPECT_EQ(k->log.find("C7508"), std::string::npos) << "setmaxnreg ignored:\n" << k->log;
    EXPECT_EQ(k->log.find(kWgmmaSerialized), std::string::npos) << k->log;
    EXPECT_GT(k->registers, 0);
    EXPECT_LE(k->registers, 65536 / (128 * (rows + 1))) << k->log;
    const std::string& ptx = k->ptx;
    auto count = [&](const std::string& what) {
      size_t n = 0;
      for (size_t at = ptx.find(what); at != std::string::npos; at = ptx.find(what, at + 1)) ++n;
      return n;
    };
    EXPECT_NE(ptx.find("setmaxnreg.dec.sync.aligned.u32 40;"), std::string::npos);
    EXPECT_NE(ptx.find("setmaxnreg.inc.sync.aligned.u32 " + std::to_string(rows == 3 ? 152 : 232) + ";"),
              std::string::npos);
    EXPECT_EQ(count("prefetch.tensormap"), 2u);
    EXPECT_EQ(count("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"), 2u);
    EXPECT_EQ(count(".im2col."), 0u);
    EXPECT_EQ(count("cp.async.cg.shared.global"), 0u);
    EXPECT_EQ(count("mbarrier.arrive.expect_tx"), 1u);
    EXPECT_EQ(expected_tx_bytes(ptx), 8192u + h->maps[1].box_bytes());
    EXPECT_EQ(barrier_init_counts(ptx), (std::set<std::string>{"1", std::to_string(4 * rows)}));
    const std::string wgmma = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(64 * taps_per_row) + "k16.f32";
    EXPECT_EQ(count(wgmma), 4u) << wgmma;  // the strip's four k16 slices, unrolled
    EXPECT_NE(ptx.find("boo_wgmma_dw_reduce"), std::string::npos);
  }
  ::unsetenv("BOO_WGMMA_TAPS");
}

TEST(NvrtcTest, HopperSplitConvModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  std::set<std::string> compiled;
  int split_modules = 0;
  for (const std::string& command : {
           "convbfp16 -n 16 -c 2048 -H 1 -W 30 -k 576 -y 1 -x 1 -F 1 -b 1 --activation gelu" + nhwc,
           "convfp16 -n 16 -c 576 -H 1 -W 30 -k 1728 -y 1 -x 1 -F 2" + nhwc,
           "convbfp16 -n 4 -c 1024 -H 7 -W 7 -k 200 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation relu" + nhwc,
           "convbfp16 -n 16 -c 1024 -H 7 -W 7 -k 1024 -y 3 -x 3 -p 1 -q 1 -F 2" + nhwc,
           "convbfp16 -n 16 -c 144 -H 24 -W 16 -k 144 -y 5 -x 5 -p 8 -q 8 -l 4 -j 4 -F 1" + nhwc,
           std::string("convbfp16 --spatial_dim 1 -n 4 -c 512 -H 64 -k 256 -y 5 -p 2 -F 1 --in_layout NHC "
                       "--fil_layout NHC --out_layout NHC"),
           std::string("convbfp16 -n 8 -c 1024 -H 7 -W 7 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1"),
           std::string("gemmbfp16 --a_w 1024 --a_h 8192 --b_w 512 --alpha 0.5"),
       }) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<runtime::Dispatch> d = runtime::choose_gpu_implementation(*p->signature, device);
    ASSERT_TRUE(d.ok() && d->chosen) << (d.ok() ? d->failure() : d.status()).to_string();
    ASSERT_TRUE(d->chosen->name() == "gpu:conv:wgmma_sm90" || d->chosen->name() == "gpu:gemm:wgmma_sm90");
    Result<ops::ConfigList> list = d->chosen->candidates(*d->problem, arch);
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    ASSERT_NE((*list)[0]->text().find(" as forward, splits "), std::string::npos) << (*list)[0]->text();
    const size_t last = compiled.empty() ? list->size() : 1;
    for (size_t i = 0; i < last; ++i) {
      const std::string config = (*list)[i]->text();
      SCOPED_TRACE(config);
      Result<ops::Plan> plan = d->chosen->plan(*d->problem, *(*list)[i], arch);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      if (!compiled.insert(plan->source.text).second) continue;
      Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, true);
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      EXPECT_EQ(k->spill_bytes, 0) << k->log;
      EXPECT_EQ(k->stack_bytes, 0) << k->log;
      EXPECT_EQ(k->log.find("C7508"), std::string::npos) << "setmaxnreg ignored:\n" << k->log;
      const size_t x1 = config.find("tile 128x") + 9, x2 = config.find('x', x1);
      const std::string wgmma = "wgmma.mma_async.sync.aligned.m64n" + config.substr(x1, x2 - x1) + "k16.f32";
      EXPECT_NE(k->ptx.find(wgmma), std::string::npos) << wgmma;
      const bool split = config.find(" as forward, splits ") != std::string::npos;
      const std::string result = config.find("dx: face 1") != std::string::npos ? "dx" : "y";
      EXPECT_NE(k->ptx.find(".entry boo_wgmma_" + result + "("), std::string::npos);
      EXPECT_EQ(k->ptx.find(".entry boo_wgmma_" + result + "_reduce(") != std::string::npos, split);
      split_modules += split ? 1 : 0;
    }
  }
  EXPECT_GE(split_modules, 14);  // 9 of the first line's 16 candidates, then one a line
}

// gpu:conv:fp32_bf16x6 (device/conv_fp32_split.cuh around the wgmma tier's bf16 conv with fp32 sums)
// compiles for sm_90a without spills for every face, NCHW and NHWC, padded channels, bias and activation.
TEST(NvrtcTest, Fp32Bf16x6ModulesCompile) {
  ::setenv("BOO_UNVERIFIED_KERNELS", "1", 1);
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::GpuImplementation* tier = conv_tier("gpu:conv:fp32_bf16x6");
  ASSERT_NE(tier, nullptr);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  for (const std::string& command : {
           std::string("conv -n 32 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation gelu"),
           std::string("conv -n 32 -c 120 -H 28 -W 28 -k 512 -y 3 -x 3 -p 1 -q 1 -F 2"),
           "conv -n 16 -c 256 -H 28 -W 28 -k 100 -y 3 -x 3 -p 1 -q 1 -F 4" + nhwc,
           "conv -n 32 -c 200 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + nhwc,
       }) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<Planned> planned = plan_for(*tier, *p->signature, device);
    ASSERT_TRUE(planned.ok()) << planned.status().to_string();
    Result<jit::CompiledKernel> k = jit::compile_kernel(planned->plan.source, kArch, true);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_EQ(k->spill_bytes, 0) << k->log;
    EXPECT_NE(k->ptx.find("wgmma.mma_async.sync.aligned"), std::string::npos);
    EXPECT_NE(k->ptx.find(".entry boo_fp32_split_"), std::string::npos);
    EXPECT_NE(k->ptx.find("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"), std::string::npos);
    EXPECT_NE(planned->plan.source.text.find("kPromote = true"), std::string::npos);
  }
  ::unsetenv("BOO_UNVERIFIED_KERNELS");
}

// gpu:conv:pointwise (device/conv_pointwise.cuh) compiles for sm_90a without
// spills or stack for every face and dtype: mma.sync for bf16/fp16, FFMA for
// fp32; bias and activations; pixels per image that are odd (7x7: element
// copies), a multiple of 4 but not 8 (14x14) or of 8; 1-D, 3-D and transposed
// convs; the issue's MobileNet and EfficientNet lines; small images' 32-column
// tiles; and every tile width of boo tune's alternatives of one line per face.
TEST(NvrtcTest, PointwiseModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  const ops::GpuImplementation* pointwise = conv_tier("gpu:conv:pointwise");
  ASSERT_NE(pointwise, nullptr);
  std::set<std::string> compiled;
  std::vector<std::string> commands;
  for (const char* dtype : {"conv", "convfp16", "convbfp16"}) {
    for (const char* geometry : {"-n 64 -c 32 -H 112 -W 112 -k 16", "-n 64 -c 16 -H 112 -W 112 -k 96",
                                 "-n 64 -c 144 -H 56 -W 56 -k 24", "-n 64 -c 192 -H 28 -W 28 -k 32",
                                 "-n 64 -c 32 -H 28 -W 28 -k 192", "-n 8 -c 40 -H 7 -W 7 -k 24",
                                 "-n 8 -c 24 -H 14 -W 14 -k 40"}) {
      for (const char* direction : {"-F 1", "-F 2", "-F 4"})
        commands.push_back(std::string(dtype) + " " + geometry + " -y 1 -x 1 " + direction);
    }
    commands.push_back(std::string(dtype) + " -n 16 -c 24 -H 28 -W 28 -k 64 -y 1 -x 1 -F 1 -b 1 --activation relu");
    commands.push_back(std::string(dtype) + " -n 16 -c 64 -H 7 -W 7 -k 24 -y 1 -x 1 -F 1 -b 1 --activation gelu");
    commands.push_back(std::string(dtype) + " --spatial_dim 1 -n 16 -c 48 -H 1000 -k 16 -y 1 -F 0 -b 1");
    commands.push_back(std::string(dtype) + " -n 8 -c 64 -H 28 -W 28 -k 16 -y 1 -x 1 -m trans -F 0");
    commands.push_back(std::string(dtype) + " -_ 3 -n 2 -c 32 --in_d 8 -H 14 -W 14 -k 16 --fil_d 1 -y 1 -x 1 -F 0");
    // Small images on 32-column tiles (64 x 14x14): 64 x 384 both ways, 384 x 96 (48 accumulators a thread);
    // 16-bit only (in fp32 their multiply-adds outlast their bytes: not this tier's).
    for (const char* geometry : {"-n 64 -c 64 -H 14 -W 14 -k 384", "-n 64 -c 384 -H 14 -W 14 -k 96"})
      for (const char* direction : {"-F 1", "-F 2"})
        if (std::string_view(dtype) != "conv")
          commands.push_back(std::string(dtype) + " " + geometry + " -y 1 -x 1 " + direction);
  }
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<std::unique_ptr<ops::OpProblem>> made = ops::find_op("conv")->make_problem(*p->signature);
    ASSERT_TRUE(made.ok()) << made.status().to_string();
    const ops::OpProblem& problem = **made;
    // It takes every line but those the Hopper tier's native NCHW path runs as fast (forward faces with 96 or
    // 192 output channels).
    const Status accepted = pointwise->accepts(problem, arch);
    if (!accepted.ok()) {
      EXPECT_NE(accepted.to_string().find("native NCHW 1x1 path runs it as fast"), std::string::npos)
          << accepted.to_string();
      continue;
    }
    Result<ops::ConfigList> list = pointwise->candidates(problem, arch);
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    // The lines of one geometry per face with every candidate; the others' chosen config.
    const bool every = command.find("-c 144 ") != std::string::npos;
    for (size_t i = 0; i < (every ? list->size() : 1); ++i) {
      SCOPED_TRACE((*list)[i]->text());
      Result<ops::Plan> plan = pointwise->plan(problem, *(*list)[i], arch);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      if (!compiled.insert(plan->source.text).second) continue;
      Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, true);
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      EXPECT_EQ(k->spill_bytes, 0) << k->log;
      EXPECT_EQ(k->stack_bytes, 0) << k->log;
      const bool fp32 = command.starts_with("conv ");
      EXPECT_EQ(k->ptx.find("mma.sync.aligned.m16n8k16") != std::string::npos, !fp32);
    }
  }
  EXPECT_GE(compiled.size(), 60u);
}

// Rows the fused backward cannot hold in registers still run on the row
// kernels (split backward), not on the simple ones.
TEST(NvrtcTest, WideRowBackwardsStayOnTheRowKernels) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  for (const char* command : {"layernormbfp16 -X 1024x12288 -o 1 -m 1 -F 14", "t5layernormbfp16 -X 1024x12288 -m 5 -F 2",
                              "layernormbfp16 -X 1024x16384 -o 1 -m 1 -F 14", "layernormbfp16 -X 8x65536 -o 1 -F 8"}) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    const ops::OpDefinition* op = ops::find_op(p->signature->op_name());
    const ops::GpuImplementation* rows = op->gpu_implementations()[0];
    EXPECT_NE(rows->name().find(":rows"), std::string_view::npos);
    Result<Planned> planned = plan_for(*rows, *p->signature, device);
    EXPECT_TRUE(planned.ok()) << planned.status().to_string();
  }
}

// Where layer norm's full backward keeps its dweight/dbias sums: shared memory
// for row groups of a warp or more (with the cp.async ring on sm_80+, the early
// load on sm_70, where a thread holds one vector), registers for narrower ones and for rows of one vector a
// thread that fill a 1024-thread block (8192: the rows through the cp.async
// ring on sm_80+, the early load on sm_70); bf16 rows of 12288 in 8-byte
// vectors (3 a thread; on sm_90 a 3-stage ring with dbias's sums in
// registers, on sm_80 the early load: 163 KiB a block), fp16 ones in 16-byte
// vectors; rows of
// 12288 fused where the device has the shared memory per block, split where
// it has not.
TEST(NvrtcTest, LayerNormBackwardPartialsFollowTheRowAndTheDevice) {
  struct Case {
    const char* arch;
    const char* command;
    const char* expected;  // in the compile parameters
    bool split;            // a column-parallel dweight/dbias kernel
  };
  for (const Case& c : {
           Case{"sm_90a", "layernormbfp16 -X 16384x4096 -o 1 -m 1 -F 14",
                "row_norm_backward<boo::bf16, 4096, 8, 512, 512, false, true, 4, ", false},
           Case{"sm_70", "layernormbfp16 -X 16384x4096 -o 1 -m 1 -F 14",
                "row_norm_backward<boo::bf16, 4096, 8, 512, 512, true, true, 0, ", false},
           Case{"sm_90a", "layernormbfp16 -X 13440x32 -o 1 -m 1 -F 14",
                "row_norm_backward<boo::bf16, 32, 8, 4, 128, false, false, ", false},
           Case{"sm_90a", "layernormbfp16 -X 4096x8192 -o 1 -m 1 -F 14",
                "row_norm_backward<boo::bf16, 8192, 8, 1024, 1024, false, false, 4, ", false},
           Case{"sm_70", "layernormbfp16 -X 4096x8192 -o 1 -m 1 -F 14",
                "row_norm_backward<boo::bf16, 8192, 8, 1024, 1024, true, false, 0, ", false},
           Case{"sm_90a", "layernormbfp16 -X 4096x6144 -o 1 -m 1 -F 14",
                "row_norm_backward<boo::bf16, 6144, 8, 1024, 1024, false, true, 4, ", false},
           Case{"sm_90a", "layernormbfp16 -X 65536x1024 -o 1 -m 1 -F 14",
                "row_norm_backward<boo::bf16, 1024, 8, 128, 128, false, true, 4, ", false},
           Case{"sm_90a", "layernormbfp16 -X 1024x12288 -o 1 -m 1 -F 14",
                "row_norm_backward<boo::bf16, 12288, 4, 1024, 1024, false, true, 3, true, ", false},
           Case{"sm_80", "layernormbfp16 -X 1024x12288 -o 1 -m 1 -F 14",
                "row_norm_backward<boo::bf16, 12288, 4, 1024, 1024, true, true, 0, false, ", false},
           Case{"sm_90a", "layernormfp16 -X 1024x12288 -o 1 -m 1 -F 14",
                "row_norm_backward<boo::f16, 12288, 8, 1024, 1024, false, true, ", false},
           Case{"sm_70", "layernormbfp16 -X 1024x12288 -o 1 -m 1 -F 14", "row_norm_param_grads<", true},
           Case{"sm_90a", "t5layernormbfp16 -X 16384x4096 -m 5 -F 2",
                "row_norm_backward<boo::bf16, 4096, 8, 512, 512, true, false, ", false},
       }) {
    SCOPED_TRACE(std::string(c.arch) + ": " + c.command);
    const DeviceInfo device = *DeviceInfo::for_arch(c.arch);
    Result<ParsedCommand> p = parse_command(std::string_view(c.command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    const ops::GpuImplementation* rows = ops::find_op(p->signature->op_name())->gpu_implementations()[0];
    Result<Planned> planned = plan_for(*rows, *p->signature, device);
    ASSERT_TRUE(planned.ok()) << planned.status().to_string();
    const std::string& params = planned->config;
    EXPECT_NE(params.find(c.expected), std::string::npos) << params;
    EXPECT_EQ(params.find("param_grads") != std::string::npos, c.split) << params;
  }
}

// A generated source that does not compile is boo's bug: kInternal (Python's
// RuntimeError), never kInvalidArgument (a ValueError, the caller's fault).
TEST(NvrtcTest, CompileErrorsAreInternalAndCarryTheLog) {
  jit::KernelSource src{"broken.cu", "extern \"C\" __global__ void k() { undefined_thing(); }\n", {"k"}};
  Result<jit::CompiledKernel> k = jit::compile_kernel(src, kArch, false);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kInternal) << k.status().to_string();
  EXPECT_NE(k.status().message().find("undefined_thing"), std::string::npos) << k.status().to_string();
  EXPECT_NE(k.status().message().find("broken.cu"), std::string::npos);
  EXPECT_NE(k.status().message().find(kArch), std::string::npos);
}

// An implementation that accepts every problem and plans one kernel with
// `source_text`, or fails to plan with `plan_error` when that is set.
class ScriptedImplementation final : public ops::GpuImplementation {
 public:
  struct ScriptedConfig final : ops::Config {
    std::string text() const override { return "scripted"; }
  };

  ScriptedImplementation(std::string source_text, Status plan_error)
      : source_text_(std::move(source_text)), plan_error_(std::move(plan_error)) {}
  std::string_view name() const override { return "gpu:test:scripted"; }
  Status accepts(const ops::OpProblem&, const ops::ArchSpec&) const override { return ok_status(); }
  Result<std::unique_ptr<const ops::Config>> configure(const ops::OpProblem&, const ops::ArchSpec&) const override {
    return std::unique_ptr<const ops::Config>(std::make_unique<ScriptedConfig>());
  }
  Result<ops::Plan> plan(const ops::OpProblem&, const ops::Config&, const ops::ArchSpec&) const override {
    if (!plan_error_.ok()) return plan_error_;
    ops::Plan plan;
    plan.source = base::KernelSource{"scripted.cu", source_text_, {"k"}};
    return plan;
  }

 private:
  std::string source_text_;
  Status plan_error_;
};

// The dispatch of `command` to `impl` alone.
runtime::Dispatch dispatch_to(const ScriptedImplementation& impl, const std::string& command) {
  Result<ParsedCommand> p = parse_command(std::string_view(command));
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  runtime::Dispatch d;
  d.arch = ops::ArchSpec::of(*DeviceInfo::for_arch(kArch));
  d.problem = std::move(*ops::find_op(p->signature->op_name())->make_problem(*p->signature));
  d.chosen = &impl;
  d.config = std::move(*impl.configure(*d.problem, d.arch));
  return d;
}

// An implementation that accepted and configured a problem and then cannot
// plan it (generate its source) has a bug, whatever code it reported.
TEST(NvrtcTest, PlanFailuresAfterAcceptingAreInternal) {
  const ScriptedImplementation impl("", invalid_argument("tile 7x3 does not divide the block"));
  const runtime::Dispatch d = dispatch_to(impl, "convbfp16 -n 1 -c 8 -H 4 -W 4 -k 8 -F 1");
  Result<ops::Plan> plan = runtime::plan_chosen(d);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInternal) << plan.status().to_string();
  const std::string message = plan.status().message();
  EXPECT_NE(message.find("gpu:test:scripted"), std::string::npos) << message;
  EXPECT_NE(message.find(d.problem->signature().command()), std::string::npos) << message;
  EXPECT_NE(message.find("INVALID_ARGUMENT: tile 7x3 does not divide the block"), std::string::npos) << message;
}

TEST(NvrtcTest, ModulesThatDoNotCompileAreInternalWithTheLog) {
  const ScriptedImplementation impl("extern \"C\" __global__ void k() { int x = not_declared_here; }\n", ok_status());
  const runtime::Dispatch d = dispatch_to(impl, "convbfp16 -n 1 -c 8 -H 4 -W 4 -k 8 -F 1");
  Result<ops::Plan> plan = impl.plan(*d.problem, *d.config, d.arch);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  Result<runtime::ModuleRequest> request = runtime::describe_module(impl.name(), *d.config, plan->source, kArch);
  ASSERT_TRUE(request.ok()) << request.status().to_string();
  const cache::ArtifactCache no_cache(cache::CacheConfig{"", false});
  const OpSignature& sig = d.problem->signature();
  Result<runtime::BuiltModule> built = runtime::build_module(*request, sig, no_cache, {});
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), StatusCode::kInternal) << built.status().to_string();
  EXPECT_NE(built.status().message().find("not_declared_here"), std::string::npos) << built.status().to_string();
  EXPECT_NE(built.status().to_string().find("compiling gpu:test:scripted for " + sig.command()), std::string::npos)
      << built.status().to_string();
}


// gpu:conv:wgmma_sm90's slices (device/conv_wgmma_slices.cuh): the strided
// data face by stride phases (one launch, a phase without taps storing zeros)
// and grouped forward and data faces compile for sm_90a with every tile width
// they may choose, both 16-bit types, bias and activation (a transposed conv's
// forward); without spills, with the register reallocation honoured.
TEST(NvrtcTest, HopperConvSlicesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  const ops::GpuImplementation* hopper = conv_tier("gpu:conv:wgmma_sm90");
  ASSERT_EQ(hopper->name(), "gpu:conv:wgmma_sm90");
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  std::set<std::string> compiled;
  for (const std::string& command : {
           // BOO's 413: stride 3 over 3 taps; a 1-D stride 2; ResNet's 1x1 at stride 2 (three zero phases).
           "convbfp16 -n 16 -c 2048 -H 48 -W 32 -k 2048 -y 3 -x 1 -p 1 -q 0 -u 3 -v 1 -F 2" + nhwc,
           "convbfp16 -n 16 -c 2048 -H 1 -W 512 -k 2048 -y 1 -x 2 -u 1 -v 2 -F 2" + nhwc,
           "convfp16 -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -u 2 -v 2 -F 2" + nhwc,
           "convbfp16 -n 16 -c 288 -H 48 -W 32 -k 288 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2" + nhwc,
           std::string("convfp16 -n 32 -c 256 -H 14 -W 14 -k 128 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2"),
           "convbfp16 -n 128 -c 576 -H 48 -W 32 -k 576 -y 3 -x 3 -p 1 -q 1 -g 6 -F 1" + nhwc,
           "convbfp16 -n 128 -c 576 -H 48 -W 32 -k 576 -y 3 -x 3 -p 1 -q 1 -g 6 -F 2" + nhwc,
           "convfp16 -n 128 -c 384 -H 24 -W 48 -k 384 -y 1 -x 3 -p 0 -q 1 -g 3 -F 1 -b 1 --activation relu" + nhwc,
           "convbfp16 -n 16 -c 288 -H 48 -W 32 -k 288 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 3 -F 2" + nhwc,
           "convbfp16 -n 16 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 2 -m trans -F 1 -b 1 "
           "--activation gelu" + nhwc,
       }) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<std::unique_ptr<ops::OpProblem>> made = ops::find_op("conv")->make_problem(*p->signature);
    ASSERT_TRUE(made.ok()) << made.status().to_string();
    const ops::OpProblem& problem = **made;
    ASSERT_TRUE(hopper->accepts(problem, arch).ok()) << hopper->accepts(problem, arch).to_string();
    // Every tile width (at its deepest ring) of the first line, the chosen config of the others.
    Result<ops::ConfigList> list = hopper->candidates(problem, arch);
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    std::set<std::string> widths;
    for (size_t i = 0; i < list->size() && (i == 0 || compiled.size() < 3); ++i) {
      const std::string config = (*list)[i]->text();
      SCOPED_TRACE(config);
      const size_t x1 = config.find('x'), x2 = config.find('x', x1 + 1);
      const std::string bn = config.substr(x1 + 1, x2 - x1 - 1);
      if (!widths.insert(bn).second) continue;
      EXPECT_TRUE(config.find("stride phases") != std::string::npos || config.find(" groups") != std::string::npos);
      Result<ops::Plan> plan = hopper->plan(problem, *(*list)[i], arch);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      if (!compiled.insert(plan->source.text).second) continue;
      Result<jit::CompiledKernel> k = jit::compile_kernel(plan->source, kArch, true);
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      EXPECT_EQ(k->spill_bytes, 0) << k->log;
      EXPECT_EQ(k->stack_bytes, 0) << k->log;
      EXPECT_EQ(k->log.find("C7508"), std::string::npos) << "setmaxnreg ignored:\n" << k->log;
      EXPECT_EQ(k->log.find(kWgmmaSerialized), std::string::npos) << k->log;
      const std::string wgmma = "wgmma.mma_async.sync.aligned.m64n" + bn + "k16.f32";
      EXPECT_NE(k->ptx.find(wgmma), std::string::npos) << wgmma;
      // K-major tiles, as the forward's; the filter read in place is an N-major B.
      const bool in_place = config.find("filter in place") != std::string::npos;
      EXPECT_NE(k->ptx.find(in_place ? ", p, 1, 1, 0, 1;" : ", p, 1, 1, 0, 0;"), std::string::npos);
    }
  }
  EXPECT_GE(compiled.size(), 12u);  // the first line's three widths, then one each
}

// The staged copies' kernels (device/conv_channel_pad.cuh) compile without
// spills for every walk and its variants, in each dtype: tiles (copy in and
// out; whole runs with folded outer indices, runs of pixels, a KCRS filter's
// flipped taps, a KRSC one's negative outer stride; 1- to 16-byte accesses),
// blocks through registers (8- and 16-byte accesses along the pixels, warps
// of 1 to 4 channel vectors), the 64 x 64 pair transpose, and a thread per
// dense pixel (int and 64-bit
// indices, one to four row digits); 16-byte accesses are single vector loads
// and stores in the PTX.
TEST(NvrtcTest, StagedCopyKernelsCompile) {
  using ops::conv::StagedCopy;
  // A copy of [outer][channels][size] stored in `order` (slowest first, names o c z y x).
  auto copy = [](const std::string& order, bool input, long long outer, const ops::conv::Dims3& size,
                 long long channels, long long padded) {
    StagedCopy c;
    c.tensor = input ? "x" : "y";
    c.input = input;
    c.outer = c.outer_rows = outer;
    c.size = size;
    c.channels = channels;
    c.padded = padded;
    const long long extent[5] = {outer, channels, size[0], size[1], size[2]};
    long long next = 1;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const int d = static_cast<int>(std::string("oczyx").find(*it));
      c.strides[static_cast<size_t>(d)] = next;
      next *= extent[d];
    }
    return c;
  };
  // The filter [k][c][taps] (stored KCRS or KRSC) flipped for the data face.
  auto flip = [](bool krsc, long long k, long long c, long long taps) {
    StagedCopy f;
    f.tensor = "w";
    f.flip = true;
    f.outer = f.outer_rows = taps;
    f.size = {1, 1, c};
    f.channels = f.padded = k;
    const long long kb = c * taps, cs = krsc ? 1 : taps, tap = krsc ? c : 1;
    f.strides = {-tap, kb, 0, 0, cs};
    f.origin = (taps - 1) * tap;
    return f;
  };
  std::vector<StagedCopy> copies;
  for (bool input : {true, false}) {
    copies.push_back(copy("oczyx", input, 64, {1, 224, 224}, 3, input ? 8 : 3));  // NCHW, 3 -> 8
    copies.push_back(copy("oczyx", input, 32, {1, 7, 7}, 2048, 2048));           // 49 pixels: whole runs
    copies.push_back(copy("oczyx", input, 32, {1, 3, 3}, 3, 4));                 // 9 taps: folded, scalar runs
    copies.push_back(copy("oczyx", input, 64, {1, 112, 112}, 64, 64));           // blocks, 16-byte accesses
    copies.push_back(copy("oczyx", input, 64, {1, 14, 14}, 576, 576));           // blocks, 8-byte pixel accesses
    copies.push_back(copy("oczyx", input, 16, {1, 70, 71}, 64, 64));             // the pair transpose (16-bit)
    copies.push_back(copy("ozyxc", input, 64, {1, 56, 56}, 35, 40));             // NHWC padding: one row digit
    copies.push_back(copy("czyxo", input, 8, {1, 9, 9}, 5, 8));                  // CHWN: two digits
    StagedCopy wide = copy("ozyxc", input, 3000, {4, 5, 6}, 13, 16);             // four digits, 64-bit offsets
    wide.strides = {1000003, 1, 7001, 301, 17};
    copies.push_back(wide);
  }
  copies.push_back(flip(false, 512, 512, 9));
  copies.push_back(flip(true, 2048, 768, 9));
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  Result<ParsedCommand> parsed = parse_command(std::string_view("convbfp16 -n 2 -c 8 -H 4 -W 4 -k 8 -y 3 -x 3 -F 0"));
  ASSERT_TRUE(parsed.ok());
  const ops::TensorRoles roles(*parsed->signature);
  std::set<std::string> calls;
  for (DType dtype : {DType::kBF16, DType::kF16, DType::kF32}) {
    for (StagedCopy c : copies) {
      ops::conv::plan_walk(c, static_cast<long long>(dtype_size_bytes(dtype)));
      SCOPED_TRACE(c.text());
      base::KernelSource source{"staged_copy.cu", "", {}};
      Result<ops::LaunchStep> step = ops::conv::staged_copy_step(c, dtype, roles, arch, source);
      ASSERT_TRUE(step.ok()) << step.status().to_string();
      const size_t call = source.text.find("{ boo::") + 7;
      calls.insert(source.text.substr(call, source.text.find("(p)", call) - call));
      Result<jit::CompiledKernel> k = jit::compile_kernel(source, kArch, true);
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      EXPECT_EQ(k->spill_bytes, 0) << k->log;
      EXPECT_EQ(k->stack_bytes, 0) << k->log;
      const bool sixteen = c.vec_channels * static_cast<long long>(dtype_size_bytes(dtype)) == 16;
      if (c.walk != ops::conv::CopyWalk::kTranspose && sixteen) {
        EXPECT_NE(k->ptx.find(c.input ? "st.global.v4" : "ld.global.v4"), std::string::npos) << k->ptx;
      }
    }
  }
  for (const char* kernel : {"conv_stage_tiles<boo::bf16, true, false, false, 8, 8>",  // 3 -> 8: runs of pixels
                             "conv_stage_tiles<boo::f16, false, true, false, 8, 8>",   // 49 pixels, out
                             "conv_stage_tiles<float, true, true, false, 1, 4>",       // 9 taps, folded
                             "conv_stage_tiles<boo::bf16, true, false, true, 8, 8>",   // KCRS flipped
                             "conv_stage_tiles<float, true, false, false, 4, 4>",      // KRSC flipped
                             "conv_transpose_channels<boo::f16, false>",
                             "conv_transpose_blocks<boo::bf16, true, 8, 1>",  // 3 -> 8, a warp of 32 pixel blocks
                             "conv_transpose_blocks<boo::f16, false, 4, 4>",  // 196 pixels, out
                             "conv_transpose_blocks<float, true, 4, 4>",
                             "conv_copy_pixels<boo::bf16, true, int, 1, 8>",
                             "conv_copy_pixels<float, false, int, 2, 4>",
                             "conv_copy_pixels<boo::f16, true, long long, 4, 8>"})
    EXPECT_EQ(calls.count(kernel), 1u) << kernel;
}


// gpu:conv:depthwise_planes (device/conv_depthwise_planes.cuh) compiles for sm_90a without spills or stack on
// issue 17's MobileNetV2 lines (576 and 384 channels at 14x14, stride 1 and 2: one launch) in every dtype, and on
// sliced images (the reduce launch), multipliers 2 and 8, 5x5 and 7x7 filters, dilation, 28-wide rows, 1-D,
// transposed, with db (-F 9); the heuristic keeps every thread's registers to 128 (four blocks of 128 per SM).
TEST(NvrtcTest, DepthwisePlanesModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::GpuImplementation* tier = conv_tier("gpu:conv:depthwise_planes");
  ASSERT_NE(tier, nullptr);
  std::vector<std::string> commands;
  for (const char* dtype : {"conv", "convfp16", "convbfp16"}) {
    for (const char* geometry : {"-n 64 -c 576 -H 14 -W 14 -k 576 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 576",
                                 "-n 64 -c 576 -H 14 -W 14 -k 576 -y 3 -x 3 -p 1 -q 1 -g 576",
                                 "-n 64 -c 384 -H 14 -W 14 -k 384 -y 3 -x 3 -p 1 -q 1 -g 384",
                                 "-n 32 -c 32 -H 28 -W 28 -k 32 -y 3 -x 3 -p 1 -q 1 -g 32",
                                 "-n 16 -c 240 -H 28 -W 28 -k 240 -y 5 -x 5 -p 2 -q 2 -g 240",
                                 "-n 16 -c 96 -H 15 -W 15 -k 96 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -g 96",
                                 "-n 4 -c 8 -H 14 -W 14 -k 16 -y 5 -x 5 -p 4 -q 4 -l 2 -j 2 -g 8",
                                 "-n 4 -c 4 -H 9 -W 9 -k 32 -y 3 -x 3 -p 1 -q 1 -g 4"})
      commands.push_back(std::string(dtype) + " " + geometry + " -F 4");
    commands.push_back(std::string(dtype) + " -n 8 -c 64 -H 7 -W 7 -k 64 -y 3 -x 3 -p 1 -q 1 -g 64 -F 9");
  }
  commands.push_back("conv --spatial_dim 1 -n 8 -c 16 -H 31 -k 16 -y 7 -p 3 -u 2 -g 16 -F 4");
  commands.push_back("convbfp16 -m trans -n 4 -c 16 -H 7 -W 7 -k 16 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 16 -F 4");
  std::set<std::string> compiled;
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<Planned> planned = plan_for(*tier, *p->signature, device);
    ASSERT_TRUE(planned.ok()) << planned.status().to_string();
    if (!compiled.insert(planned->plan.source.text).second) continue;
    Result<jit::CompiledKernel> k = jit::compile_kernel(planned->plan.source, kArch, false);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_EQ(k->spill_bytes, 0) << k->log;
    EXPECT_EQ(k->stack_bytes, 0) << k->log;
    EXPECT_LE(k->registers, 128) << planned->config << "\n" << k->log;
    if (std::getenv("BOO_TEST_PRINT_REGISTERS"))
      std::printf("%s\n  %s: %d registers\n", command.c_str(), planned->config.c_str(), k->registers);
  }
  EXPECT_GE(compiled.size(), 25u);
}


// gpu:conv:depthwise_channels (device/conv_depthwise_channels.cuh) compiles for sm_90a without spills or stack
// on issue 17's NHWC MobileNetV2 weight gradients (32 to 960 channels, 112 to 7 pixels, stride 1 and 2) in every
// dtype (16-byte vectors: 8 channels of 16 bits, 4 of fp32), and on 5x5 and 7x7 (narrower vectors), dilation,
// channels not a multiple of 8 (4- and 2-byte vectors), one slice (no reduce), 1-D, transposed, with db (-F 9).
TEST(NvrtcTest, DepthwiseChannelsModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::GpuImplementation* tier = conv_tier("gpu:conv:depthwise_channels");
  ASSERT_NE(tier, nullptr);
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  std::vector<std::string> commands;
  for (const char* dtype : {"conv", "convfp16", "convbfp16"}) {
    // (Up to 64 channels: the tier's limit.)
    for (const char* geometry : {"-n 64 -c 64 -H 14 -W 14 -k 64 -y 3 -x 3 -p 1 -q 1 -g 64",
                                 "-n 64 -c 32 -H 112 -W 112 -k 32 -y 3 -x 3 -p 1 -q 1 -g 32",
                                 "-n 64 -c 48 -H 56 -W 56 -k 48 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 48",
                                 "-n 64 -c 64 -H 7 -W 7 -k 64 -y 3 -x 3 -p 1 -q 1 -g 64",
                                 "-n 16 -c 64 -H 28 -W 28 -k 64 -y 5 -x 5 -p 2 -q 2 -g 64",
                                 "-n 16 -c 40 -H 15 -W 15 -k 40 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -g 40",
                                 "-n 4 -c 12 -H 14 -W 14 -k 12 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -g 12",
                                 "-n 1 -c 6 -H 5 -W 5 -k 6 -y 3 -x 3 -p 1 -q 1 -g 6"})
      commands.push_back(std::string(dtype) + " " + geometry + " -F 4" + nhwc);
  }
  commands.push_back("convbfp16 -n 8 -c 64 -H 7 -W 7 -k 64 -y 3 -x 3 -p 1 -q 1 -g 64 -F 9" + nhwc);
  commands.push_back("convbfp16 -m trans -n 4 -c 16 -H 7 -W 7 -k 16 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 16 -F 4" + nhwc);
  commands.push_back("conv --spatial_dim 1 -n 8 -c 16 -H 31 -k 16 -y 7 -p 3 -u 2 -g 16 -F 4 --in_layout NHC "
                     "--fil_layout NHC --out_layout NHC");
  std::set<std::string> compiled;
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<Planned> planned = plan_for(*tier, *p->signature, device);
    ASSERT_TRUE(planned.ok()) << planned.status().to_string();
    if (!compiled.insert(planned->plan.source.text).second) continue;
    Result<jit::CompiledKernel> k = jit::compile_kernel(planned->plan.source, kArch, false);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_EQ(k->spill_bytes, 0) << k->log;
    EXPECT_EQ(k->stack_bytes, 0) << k->log;
    EXPECT_LE(k->registers, 128) << planned->config << "\n" << k->log;
    if (std::getenv("BOO_TEST_PRINT_REGISTERS"))
      std::printf("%s\n  %s: %d registers\n", command.c_str(), planned->config.c_str(), k->registers);
  }
  EXPECT_EQ(compiled.size(), commands.size());
}

// gpu:conv:small_c_data (device/conv_small_c.cuh) compiles for sm_90a without spills or stack on issue 17's
// first-layer backward-data lines (7x7 stride 2 and 3x3 over 3 channels) and on 1, 2 and 4 channels, strides
// 1 to 4 (4 to 16 phases, phases without taps), 5x5 and 11x11, asymmetric strides and padding, a transposed
// conv's forward with bias and activation, with db; the fp16 and bf16 path (Staged16) on the 7x7 and 3x3 stems
// in NCHW (element loads) and NHWC (8-byte vectors of 4 channels), 11x11 stride 4 (512 threads), K not a
// multiple of the chunk (element loads across channels), 1 and 4 channels, a transposed conv's forward with bias
// and activation, with db.
TEST(NvrtcTest, SmallCDataModulesCompile) {
  const std::string kSmallCNhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::GpuImplementation* tier = conv_tier("gpu:conv:small_c_data");
  ASSERT_NE(tier, nullptr);
  std::set<std::string> compiled;
  for (const std::string& command : std::vector<std::string>{
           "conv -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -g 1 -F 2",
           "conv -n 16 -c 3 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -F 2",
           "conv -n 2 -c 1 -H 28 -W 28 -k 20 -y 5 -x 5 -F 2",
           "conv -n 2 -c 2 -H 31 -W 33 -k 16 -y 3 -x 5 -p 1 -q 2 -u 1 -v 2 -F 8",
           "conv -n 2 -c 4 -H 57 -W 57 -k 96 -y 11 -x 11 -p 2 -q 2 -u 4 -v 4 -F 2",
           "conv -n 2 -c 3 -H 20 -W 20 -k 8 -y 1 -x 1 -u 2 -v 2 -F 2",
           "conv -n 2 -c 3 -H 23 -W 23 -k 24 -y 3 -x 3 -u 3 -v 3 -F 2",
           "conv -m trans -n 2 -c 32 -H 14 -W 14 -k 3 -y 4 -x 4 -p 1 -q 1 -u 2 -v 2 -F 1 -b 1 --activation tanh",
           "convfp16 -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 2",
           "convbfp16 -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 2",
           "convbfp16 -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 2" + kSmallCNhwc,
           "convfp16 -n 16 -c 3 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2" + kSmallCNhwc,
           "convbfp16 -n 2 -c 4 -H 57 -W 57 -k 30 -y 5 -x 5 -p 2 -q 2 -u 2 -v 2 -F 8" + kSmallCNhwc,
           "convfp16 -n 2 -c 1 -H 28 -W 28 -k 20 -y 5 -x 5 -u 2 -v 2 -F 2",
           "convfp16 -n 2 -c 4 -H 57 -W 57 -k 96 -y 11 -x 11 -p 2 -q 2 -u 4 -v 4 -F 2",
           "convbfp16 -m trans -n 2 -c 32 -H 14 -W 14 -k 3 -y 4 -x 4 -p 1 -q 1 -u 2 -v 2 -F 1 -b 1 --activation tanh",
       }) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<Planned> planned = plan_for(*tier, *p->signature, device);
    ASSERT_TRUE(planned.ok()) << planned.status().to_string();
    ASSERT_TRUE(compiled.insert(planned->plan.source.text).second);
    Result<jit::CompiledKernel> k = jit::compile_kernel(planned->plan.source, kArch, false);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_EQ(k->spill_bytes, 0) << k->log;
    EXPECT_EQ(k->stack_bytes, 0) << k->log;
    EXPECT_LE(k->registers, 128) << planned->config << "\n" << k->log;
    if (std::getenv("BOO_TEST_PRINT_REGISTERS"))
      std::printf("%s\n  %s: %d registers\n", command.c_str(), planned->config.c_str(), k->registers);
  }
}

// gpu:conv:small_c_forward (device/conv_small_c_forward.cuh) compiles for sm_90a without spills or stack on the
// stems of nchw-models.txt (3x3 stride 2 and 1 over RGB, ResNet's 7x7 stride 2: two channel chunks) and on 1, 2 and
// 4 channels, 5x5, 11x11 stride 4, asymmetric strides and padding, odd widths (scalar stores), K not a multiple of
// 8, a transposed conv's backward-data, bias with activations, db; the bf16 and fp16 path (filters up to 3x3) on
// a stem, odd widths and db.
TEST(NvrtcTest, SmallCForwardModulesCompile) {
  const DeviceInfo device = *DeviceInfo::for_arch(kArch);
  const ops::GpuImplementation* tier = conv_tier("gpu:conv:small_c_forward");
  ASSERT_NE(tier, nullptr);
  std::set<std::string> compiled;
  for (const std::string command : {
           "conv -n 64 -c 3 -H 224 -W 224 -k 32 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 1 -t 1",
           "conv -n 16 -c 3 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1 -t 1",
           "conv -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 1 -t 1",
           "conv -n 2 -c 1 -H 28 -W 28 -k 20 -y 5 -x 5 -F 1 -b 1 --activation relu",
           "conv -n 2 -c 2 -H 31 -W 33 -k 16 -y 3 -x 5 -p 1 -q 2 -u 1 -v 2 -F 1 -b 1 --activation gelu",
           "conv -n 2 -c 3 -H 227 -W 227 -k 96 -y 11 -x 11 -u 4 -v 4 -F 1",
           "conv -n 3 -c 3 -H 37 -W 41 -k 13 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation leaky_relu:0.1",
           "conv -m trans -n 2 -c 24 -H 20 -W 20 -k 3 -y 4 -x 4 -p 1 -q 1 -u 2 -v 2 -F 2",
           "conv -m trans -n 2 -c 24 -H 20 -W 20 -k 3 -y 3 -x 3 -p 1 -q 1 -F 8",
           "convbfp16 -n 16 -c 3 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1 -t 1",
           "convbfp16 -n 3 -c 3 -H 37 -W 41 -k 13 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation silu",
           "convfp16 -m trans -n 2 -c 24 -H 20 -W 20 -k 3 -y 3 -x 3 -p 1 -q 1 -F 8",
       }) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    Result<Planned> planned = plan_for(*tier, *p->signature, device);
    ASSERT_TRUE(planned.ok()) << planned.status().to_string();
    ASSERT_TRUE(compiled.insert(planned->plan.source.text).second);
    Result<jit::CompiledKernel> k = jit::compile_kernel(planned->plan.source, kArch, false);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_EQ(k->spill_bytes, 0) << k->log;
    EXPECT_EQ(k->stack_bytes, 0) << k->log;
    EXPECT_LE(k->registers, 128) << planned->config << "\n" << k->log;
    if (std::getenv("BOO_TEST_PRINT_REGISTERS"))
      std::printf("%s\n  %s: %d registers\n", command.c_str(), planned->config.c_str(), k->registers);
  }
  ::unsetenv("BOO_UNVERIFIED_KERNELS");
}

}  // namespace
}  // namespace boo
