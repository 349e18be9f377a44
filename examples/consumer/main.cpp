// A consumer of an installed boo: one convolution through the public API
// (include/boo/), run on the float64 CPU reference, checked against a box sum
// computed here. Needs no GPU. Exit status 0 when every element matches.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "boo/reference.hpp"
#include "boo/registry.hpp"
#include "boo/version.hpp"

namespace {

// Storage offset of logical index {n, c, h, w} in a rank-4 tensor.
int64_t offset(const boo::TensorSpec& spec, int64_t n, int64_t c, int64_t h, int64_t w) {
  return n * spec.strides[0] + c * spec.strides[1] + h * spec.strides[2] + w * spec.strides[3];
}

}  // namespace

int main() {
  std::printf("boo %s (commit %s)\n", boo::library_version(), boo::git_commit());
  // 3x3 filter of ones with padding 1: y[n, k, h, w] is the sum of x over the 3x3
  // window around (h, w) inside the image, over all channels, for every k.
  boo::Result<boo::ParsedCommand> parsed = boo::parse_command(
      "conv -n 2 -c 3 -H 5 -W 4 -k 2 -y 3 -x 3 -p 1 -q 1 -F 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC");
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n", parsed.status().to_string().c_str());
    return 1;
  }
  const boo::OpSignature& sig = *parsed->signature;
  const std::vector<boo::TensorSpec> arg_specs = sig.arguments();   // x: [N, C, H, W], w: [K, C, Y, X]
  const std::vector<boo::TensorSpec> result_specs = sig.results();  // y: [N, K, H, W]
  if (arg_specs.size() != 2 || result_specs.size() != 1) {
    std::fprintf(stderr, "%s: expected arguments (x, w) and result y\n", sig.func_name().c_str());
    return 1;
  }
  const boo::TensorSpec& xs = arg_specs[0];
  const boo::TensorSpec& ys = result_specs[0];
  const int64_t N = xs.shape[0], C = xs.shape[1], H = xs.shape[2], W = xs.shape[3], K = ys.shape[1];

  std::vector<float> x(xs.storage_elems()), w(arg_specs[1].storage_elems(), 1.0f), y(ys.storage_elems());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t v = 0; v < W; ++v) x[offset(xs, n, c, h, v)] = static_cast<float>(((n * C + c) * H + h) * W + v);

  const std::vector<boo::TensorRef> args = {{x.data(), xs.shape, xs.strides, xs.dtype},
                                            {w.data(), arg_specs[1].shape, arg_specs[1].strides, arg_specs[1].dtype}};
  const std::vector<boo::TensorRef> results = {{y.data(), ys.shape, ys.strides, ys.dtype}};
  if (boo::Status st = boo::run_reference(sig, args, results); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.to_string().c_str());
    return 1;
  }

  int64_t mismatches = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t v = 0; v < W; ++v) {
          double expected = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t r = h - 1; r <= h + 1; ++r)
              for (int64_t s = v - 1; s <= v + 1; ++s)
                if (r >= 0 && r < H && s >= 0 && s < W) expected += x[offset(xs, n, c, r, s)];
          const float got = y[offset(ys, n, k, h, v)];
          if (got != static_cast<float>(expected)) {
            if (++mismatches <= 5)
              std::fprintf(stderr, "y[%lld, %lld, %lld, %lld] = %g, expected %g\n", static_cast<long long>(n),
                           static_cast<long long>(k), static_cast<long long>(h), static_cast<long long>(v), got,
                           expected);
          }
        }
  if (mismatches) {
    std::fprintf(stderr, "%lld of %zu elements differ\n", static_cast<long long>(mismatches), y.size());
    return 1;
  }
  std::printf("%s on the CPU reference: %zu elements as expected\n", sig.func_name().c_str(), y.size());
  return 0;
}
