// boo tests: gpu:conv:wgmma_sm90's slices (device/conv_wgmma_slices.cuh) —
// groups and the stride phases of the strided data face — checked on the
// host without a GPU. The kernel's addressing is replayed here in float64:
// the constants the plan generates (its `struct Cfg`, read back from the
// source), slice_of run on the host, each tile row's receptive field and
// each (tap, channel) column found as conv_wgmma.cuh's producer finds them,
// each result stored where its epilogue stores it. The sums must equal the
// CPU reference's exactly (small integer inputs), and every result element
// must be written exactly once (the phases partition dx).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "device_on_host.hpp"
#include "ops/conv/device/conv_wgmma_slices.cuh"

#include "boo/conv.hpp"
#include "ops/common/unverified_kernels.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/conv_ref.hpp"
#include "ops/conv/conv_wgmma_impl.hpp"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

// The generated Cfg's integer constants, by name.
std::map<std::string, long long> constants_of(const std::string& source) {
  std::map<std::string, long long> out;
  const std::string tag = "static constexpr int ";
  for (size_t at = source.find(tag); at != std::string::npos; at = source.find(tag, at + 1)) {
    const size_t name = at + tag.size(), eq = source.find(" = ", name), end = source.find(';', eq);
    out[source.substr(name, eq - name)] = std::stoll(source.substr(eq + 3, end - eq - 3));
  }
  return out;
}

// A Cfg whose members are the plan's constants, set at run time; kPhases is
// compile-time in the kernel only to choose slice_of's branch (kPhased).
template <bool kPhased>
struct HostCfg {
  static constexpr int kPhases = kPhased ? 2 : 1;  // slice_of reads only whether it is 1
  static inline int kGroups, GA, GW, GY, kC, kN, kM, H, W, P, Q, R, S, SH, SW, PH, PW, DH, DW, XN, XH, XW, WK, WR,
      WS, YN, YH, YW, UH, UW, FR, FS, DPH, DPW, OH, OW;
  static void set(const std::map<std::string, long long>& c) {
    auto get = [&](const char* name) {
      const auto it = c.find(name);
      return it == c.end() ? 0 : static_cast<int>(it->second);
    };
    kGroups = get("kGroups"), GA = get("GA"), GW = get("GW"), GY = get("GY"), kC = get("kC"), kN = get("kN");
    kM = get("kM"), H = get("H"), W = get("W"), P = get("P"), Q = get("Q"), R = get("R"), S = get("S");
    SH = get("SH"), SW = get("SW"), PH = get("PH"), PW = get("PW"), DH = get("DH"), DW = get("DW");
    XN = get("XN"), XH = get("XH"), XW = get("XW"), WK = get("WK"), WR = get("WR"), WS = get("WS");
    YN = get("YN"), YH = get("YH"), YW = get("YW"), UH = get("UH"), UW = get("UW"), FR = get("FR"), FS = get("FS");
    DPH = get("DPH"), DPW = get("DPW"), OH = get("OH"), OW = get("OW");
  }
};

// Replays conv_wgmma<C>'s addressing: A and the filter by element offset,
// the result into `out` (storage elements), counting the writes.
template <class C, class LoadA, class LoadW>
void replay(int slices, LoadA a, LoadW w, std::vector<double>& out, std::vector<int>& writes) {
  for (int slice = 0; slice < slices; ++slice) {
    const wgmma_conv::Slice sl = wgmma_conv::slice_of<C>(slice);
    ASSERT_LE(sl.reduced, C::R * C::S * C::kC) << "a phase's reduction within the k-blocks the grid is sized for";
    for (int m = 0; m < C::kM; ++m) {
      const int n = m / (C::P * C::Q), pq = m % (C::P * C::Q), ph = pq / C::Q, pw = pq % C::Q;
      const int ih = ph * C::SH - sl.pad_h, iw = pw * C::SW - sl.pad_w;  // the producer's a_hw
      for (int col = 0; col < C::kN; ++col) {
        double sum = 0;
        for (int kk = 0; kk < sl.reduced; ++kk) {
          const int tap = kk / C::kC, c = kk % C::kC, r = tap / sl.taps_w, s = tap % sl.taps_w;
          const int h = ih + r * C::DH, x = iw + s * C::DW;
          if (h < 0 || h >= C::H || x < 0 || x >= C::W) continue;
          sum += a(sl.a + n * C::XN + h * C::XH + x * C::XW + c) * w(sl.w + col * C::WK + r * C::WR + s * C::WS + c);
        }
        if (C::kPhases > 1 && (ph >= sl.rows_h || pw >= sl.rows_w)) continue;  // the epilogue's mask
        const long long o = n * C::YN + ph * C::YH + pw * C::YW + col + sl.out;
        ASSERT_GE(o, 0);
        ASSERT_LT(o, static_cast<long long>(out.size()));
        out[static_cast<size_t>(o)] = sum;
        ++writes[static_cast<size_t>(o)];
      }
    }
  }
}

class ScopedUnverified {
 public:
  ScopedUnverified() { setenv(kUnverifiedKernelsVariable, "1", 1); }
  ~ScopedUnverified() { unsetenv(kUnverifiedKernelsVariable); }
};

// Plans `command` (one face, NHWC) on the tier, replays its kernel and compares with the reference.
void check(const std::string& command, const std::string& config_part) {
  SCOPED_TRACE(command);
  ScopedUnverified unverified;
  std::unique_ptr<OpProblem> problem = test::problem_of(command);
  ASSERT_TRUE(problem);
  const GpuImplementation& tier = conv::wgmma_sm90_implementation();
  // (The tier declines convs this small for speed; its configure and plan do not.)
  Result<std::unique_ptr<const Config>> config = tier.configure(*problem, test::sm90());
  ASSERT_TRUE(config.ok()) << config.status().to_string();
  EXPECT_NE((*config)->text().find(config_part), std::string::npos) << (*config)->text();
  Result<Plan> plan = tier.plan(*problem, **config, test::sm90());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const std::map<std::string, long long> c = constants_of(plan->source.text);
  const auto& sig = dynamic_cast<const ConvSignature&>(problem->signature());
  const bool data = dynamic_cast<const conv::ConvProblem&>(*problem).tasks[0].face == conv::kDataFace;

  // Inputs of small integers (exact in bf16 and in the sums), the reference's results.
  std::vector<base::HostTensor> args;
  for (const TensorSpec& spec : sig.arguments()) {
    base::HostTensor t(spec);
    for (int64_t i = 0; i < static_cast<int64_t>(t.size_bytes() / 2); ++i)
      t.store(i, static_cast<double>((i * 7 + args.size() * 3) % 9) - 4);
    args.push_back(std::move(t));
  }
  Result<std::vector<base::HostTensor>> ref = conv::conv_reference(sig, args);
  ASSERT_TRUE(ref.ok()) << ref.status().to_string();
  const base::HostTensor& expected = (*ref)[0];
  const base::HostTensor& a = args[0];  // x (forward) or dy (data face)
  const base::HostTensor& w = args[1];
  // The data face reads the flipped copy W'[r'][s'][c][kb] = W[kb, c, R-1-r', S-1-s'] (boo_conv_flip_w).
  std::vector<double> flipped;
  if (data) {
    const int64_t k = w.spec().shape[0], cg = w.spec().shape[1], r = w.spec().shape[2], s = w.spec().shape[3];
    for (int64_t r2 = 0; r2 < r; ++r2)
      for (int64_t s2 = 0; s2 < s; ++s2)
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t kb = 0; kb < k; ++kb) flipped.push_back(w.at({kb, ci, r - 1 - r2, s - 1 - s2}));
  }
  auto load_a = [&](long long o) { return a.load(o); };
  auto load_w = [&](long long o) { return data ? flipped.at(static_cast<size_t>(o)) : w.load(o); };
  const size_t elements = expected.size_bytes() / sizeof(double);
  std::vector<double> out(elements, -1e9);
  std::vector<int> writes(elements, 0);
  const int slices = static_cast<int>(c.at("kGroups") * c.at("kPhases"));
  if (c.at("kPhases") > 1) {
    HostCfg<true>::set(c);
    replay<HostCfg<true>>(slices, load_a, load_w, out, writes);
  } else {
    HostCfg<false>::set(c);
    replay<HostCfg<false>>(slices, load_a, load_w, out, writes);
  }
  for (size_t i = 0; i < elements; ++i) {
    ASSERT_EQ(writes[i], 1) << "element " << i;
    ASSERT_EQ(out[i], expected.load(static_cast<int64_t>(i))) << "element " << i;
  }
}

const std::string kNhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";

TEST(ConvWgmmaSlicesTest, StridedDataFaceByPhases) {
  // 2x3 phases; along W the stride (3) exceeds the filter (2): a phase without taps stores zeros.
  // H = 7: phases of 4 and 3 rows on one grid of 4.
  check("convbfp16 -n 2 -c 16 -H 7 -W 9 -k 8 -y 3 -x 2 -p 1 -q 0 -u 2 -v 3 -F 2" + kNhwc, "2x3 stride phases");
  // BOO's 413: stride 3 over 3 taps, padding 1 (one tap a phase, pad' -1 or 0).
  check("convbfp16 -n 1 -c 8 -H 8 -W 5 -k 16 -y 3 -x 1 -p 1 -q 0 -u 3 -v 1 -F 2" + kNhwc, "3x1 stride phases");
  check("convbfp16 -n 2 -c 16 -H 1 -W 12 -k 8 -y 1 -x 2 -u 1 -v 2 -F 2" + kNhwc, "1x2 stride phases");
  // Padding larger than the filter: negative phase paddings; 1x1 at stride 2: three zero phases.
  check("convfp16 -n 1 -c 8 -H 6 -W 6 -k 8 -y 3 -x 3 -p 3 -q 2 -u 2 -v 2 -F 2" + kNhwc, "2x2 stride phases");
  check("convfp16 -n 2 -c 8 -H 6 -W 5 -k 16 -y 1 -x 1 -u 2 -v 2 -F 2" + kNhwc, "2x2 stride phases");
  check("convbfp16 -n 1 -c 8 -H 9 -W 11 -k 8 -y 5 -x 4 -p 2 -q 1 -u 2 -v 3 -F 2" + kNhwc, "2x3 stride phases");
}

TEST(ConvWgmmaSlicesTest, GroupsInTheForwardAndDataFaces) {
  check("convbfp16 -n 2 -c 32 -H 5 -W 6 -k 16 -y 3 -x 3 -p 1 -q 1 -u 2 -v 1 -g 2 -F 1" + kNhwc, "2 groups");
  check("convbfp16 -n 2 -c 24 -H 6 -W 5 -k 48 -y 3 -x 2 -p 2 -q 1 -l 2 -j 1 -g 3 -F 2" + kNhwc, "3 groups");
  // Groups and phases together: slices phase-major.
  check("convbfp16 -n 2 -c 32 -H 7 -W 6 -k 16 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 2 -F 2" + kNhwc,
        "2x2 stride phases, 2 groups");
  // A transposed conv's forward is the data face: strided (a phase without taps along H), grouped.
  check("convbfp16 -n 2 -c 16 -H 4 -W 5 -k 32 -y 2 -x 2 -u 3 -v 2 -g 2 -m trans -F 1" + kNhwc,
        "2 groups");
}

// The host's stride phases (ConvProblem's, which gpu:conv:implicit_gemm runs) and
// the kernel's (slice_of) are the same pixels and taps.
TEST(ConvWgmmaSlicesTest, PhaseArithmeticMatchesTheRelation) {
  for (const char* command : {
           "convbfp16 -n 1 -c 8 -H 7 -W 9 -k 8 -y 3 -x 2 -p 1 -q 0 -u 2 -v 3 -F 2",
           "convbfp16 -n 1 -c 8 -H 6 -W 6 -k 8 -y 3 -x 3 -p 3 -q 2 -u 2 -v 2 -F 2",
           "convbfp16 -n 1 -c 8 -H 48 -W 32 -k 8 -y 3 -x 1 -p 1 -q 0 -u 3 -v 1 -F 2",
           "convbfp16 -n 1 -c 8 -H 9 -W 11 -k 8 -y 5 -x 4 -p 2 -q 1 -u 2 -v 3 -F 2",
       }) {
    SCOPED_TRACE(command);
    std::unique_ptr<OpProblem> problem = test::problem_of(command);
    ASSERT_TRUE(problem);
    const conv::Relation& r = dynamic_cast<const conv::ConvProblem&>(*problem).relation;
    for (const conv::Phase& p : conv::phases(r)) {
      for (int d = 1; d < 3; ++d) {
        const wgmma_conv::PhaseDim k = wgmma_conv::phase_dim(static_cast<int>(p.t0[d]), static_cast<int>(r.stride[d]),
                                                             static_cast<int>(r.f_size[d]),
                                                             static_cast<int>(r.pad[d]), static_cast<int>(r.a_size[d]));
        EXPECT_EQ(k.first, p.i0[d]);
        EXPECT_EQ(k.rows, p.is[d]);
        EXPECT_EQ(k.taps, p.tn[d]);
        // Tap j' of the kernel's (flipped) phase is tap t0 + stride * (tn - 1 - j') of the filter,
        // and reads dy at t - pad' + j' = (i + pad - r) / stride for pixel i = i0 + stride * t.
        for (int j = 0; j < k.taps; ++j) {
          const long long tap = r.f_size[d] - 1 - (k.tap0 + r.stride[d] * j);
          EXPECT_EQ(tap, p.t0[d] + r.stride[d] * (k.taps - 1 - j));
          for (int t = 0; t < k.rows; ++t) {
            const long long i = k.first + r.stride[d] * t;
            EXPECT_EQ((i + r.pad[d] - tap) % r.stride[d], 0);
            EXPECT_EQ(t - k.pad + j, (i + r.pad[d] - tap) / r.stride[d]);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace boo::ops
