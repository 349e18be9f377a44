// boo: the CPU reference convolution, float64 accumulation.
//
// Each face of the regular relation (conv_problem.hpp) is written as a direct
// sum, element by element, on float64 copies of the operands.
#include "ops/conv/conv_ref.hpp"

#include <array>

#include "base/parallel.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/op_definition.hpp"

namespace boo::ops::conv {
namespace {

// A float64 copy of an activation tensor, stored [N][D][H][W][C] so that
// channel loops are contiguous.
struct ActivationF64 {
  int64_t n = 0, c = 0;
  Dims3 size{};
  std::vector<double> v;

  const double* at(int64_t in, int64_t z, int64_t y, int64_t x) const {
    return &v[static_cast<size_t>((((in * size[0] + z) * size[1] + y) * size[2] + x) * c)];
  }
};

// A float64 copy of a filter [F0, F1, taps...], stored [F0][Z][Y][X][F1].
struct FilterF64 {
  int64_t f0 = 0, f1 = 0;
  Dims3 size{};
  std::vector<double> v;

  const double* at(int64_t i0, int64_t z, int64_t y, int64_t x) const {
    return &v[static_cast<size_t>((((i0 * size[0] + z) * size[1] + y) * size[2] + x) * f1)];
  }
};

// Storage offset of element (i0, i1, z, y, x) of a tensor whose logical shape
// is [F0, F1, spatial...] with S = rank - 2 spatial dims (padded coordinates
// of missing leading dims are 0).
int64_t offset5(const TensorSpec& s, int64_t i0, int64_t i1, int64_t z, int64_t y, int64_t x) {
  const int spatial_dims = s.rank() - 2;
  const int64_t spatial[3] = {z, y, x};
  int64_t offset = i0 * s.strides[0] + i1 * s.strides[1];
  for (int d = 0; d < spatial_dims; ++d) offset += spatial[3 - spatial_dims + d] * s.strides[2 + d];
  return offset;
}

// Splits a 5-D row-major index over (e0, e1, size[0], size[1], size[2]).
std::array<int64_t, 5> unravel(int64_t linear, int64_t e0, int64_t e1, const Dims3& size) {
  std::array<int64_t, 5> out{};
  const int64_t extents[5] = {e0, e1, size[0], size[1], size[2]};
  for (int d = 4; d >= 0; --d) {
    out[d] = linear % extents[d];
    linear /= extents[d];
  }
  return out;
}

ActivationF64 load_activation(const base::HostTensor& t) {
  const TensorSpec& s = t.spec();
  ActivationF64 a;
  a.n = s.shape[0];
  a.c = s.shape[1];
  a.size = pad3(std::vector<int64_t>(s.shape.begin() + 2, s.shape.end()), 1);
  a.v.resize(static_cast<size_t>(s.numel()));
  base::parallel_for(a.n * a.size[0] * a.size[1] * a.size[2], [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      std::array<int64_t, 5> i = unravel(p, 1, a.n, a.size);
      for (int64_t ch = 0; ch < a.c; ++ch)
        a.v[static_cast<size_t>(p * a.c + ch)] = t.load(offset5(s, i[1], ch, i[2], i[3], i[4]));
    }
  });
  return a;
}

FilterF64 load_filter(const base::HostTensor& t) {
  const TensorSpec& s = t.spec();
  FilterF64 f;
  f.f0 = s.shape[0];
  f.f1 = s.shape[1];
  f.size = pad3(std::vector<int64_t>(s.shape.begin() + 2, s.shape.end()), 1);
  f.v.resize(static_cast<size_t>(s.numel()));
  const int64_t taps = f.size[0] * f.size[1] * f.size[2];
  for (int64_t p = 0; p < f.f0 * taps; ++p) {
    std::array<int64_t, 5> i = unravel(p, 1, f.f0, f.size);
    for (int64_t ch = 0; ch < f.f1; ++ch)
      f.v[static_cast<size_t>(p * f.f1 + ch)] = t.load(offset5(s, i[1], ch, i[2], i[3], i[4]));
  }
  return f;
}

// Splits a result's logical linear index into (i0, i1, z, y, x) over (e0, e1, spatial3).
std::array<int64_t, 5> split_index(int64_t linear, const TensorSpec& spec) {
  const Dims3 sp = pad3(std::vector<int64_t>(spec.shape.begin() + 2, spec.shape.end()), 1);
  return unravel(linear, spec.shape[0], spec.shape[1], sp);
}

// Forward face element: B[n, kb, o] = sum_{c in group(kb), r} A[n, c, o*s - p + r*d] * W[kb, c, r].
double forward_at(const Relation& rel, const ActivationF64& a, const FilterF64& w, int64_t cb, int64_t in,
                  int64_t kb, int64_t oz, int64_t oy, int64_t ox) {
  const int64_t ca_per_group = a.c / rel.groups, c0 = (kb / (cb / rel.groups)) * ca_per_group;
  double acc = 0;
  for (int64_t rz = 0; rz < w.size[0]; ++rz) {
    const int64_t iz = oz * rel.stride[0] - rel.pad[0] + rz * rel.dil[0];
    if (iz < 0 || iz >= a.size[0]) continue;
    for (int64_t ry = 0; ry < w.size[1]; ++ry) {
      const int64_t iy = oy * rel.stride[1] - rel.pad[1] + ry * rel.dil[1];
      if (iy < 0 || iy >= a.size[1]) continue;
      for (int64_t rx = 0; rx < w.size[2]; ++rx) {
        const int64_t ix = ox * rel.stride[2] - rel.pad[2] + rx * rel.dil[2];
        if (ix < 0 || ix >= a.size[2]) continue;
        const double* av = a.at(in, iz, iy, ix) + c0;
        const double* wv = w.at(kb, rz, ry, rx);
        for (int64_t c = 0; c < ca_per_group; ++c) acc += av[c] * wv[c];
      }
    }
  }
  return acc;
}

// Data face element: A[n, ca, i] = sum over (kb in group, r) with o*stride = i + pad - r*dil of B[n, kb, o] * W[kb, c, r].
double data_at(const Relation& rel, const ActivationF64& b, const FilterF64& w, int64_t ca, int64_t in, int64_t ch,
               int64_t iz, int64_t iy, int64_t ix) {
  const int64_t ca_per_group = ca / rel.groups, cb_per_group = b.c / rel.groups;
  const int64_t g = ch / ca_per_group, c = ch % ca_per_group;
  // The B coordinate that reads A coordinate i through tap r, or -1.
  auto source = [&](int d, int64_t i, int64_t r) -> int64_t {
    const int64_t t = i + rel.pad[d] - r * rel.dil[d];
    if (t < 0 || t % rel.stride[d] != 0) return -1;
    const int64_t o = t / rel.stride[d];
    return o < b.size[d] ? o : -1;
  };
  double acc = 0;
  for (int64_t rz = 0; rz < w.size[0]; ++rz) {
    const int64_t oz = source(0, iz, rz);
    if (oz < 0) continue;
    for (int64_t ry = 0; ry < w.size[1]; ++ry) {
      const int64_t oy = source(1, iy, ry);
      if (oy < 0) continue;
      for (int64_t rx = 0; rx < w.size[2]; ++rx) {
        const int64_t ox = source(2, ix, rx);
        if (ox < 0) continue;
        const double* bv = b.at(in, oz, oy, ox);
        for (int64_t kb = g * cb_per_group; kb < (g + 1) * cb_per_group; ++kb) acc += bv[kb] * w.at(kb, rz, ry, rx)[c];
      }
    }
  }
  return acc;
}

// Weight face: W[kb, c, r] = sum_{n, o} A[n, g*cpg + c, o*stride - pad + r*dil] * B[n, kb, o] for every
// c of one (kb, r) at once (the row is contiguous in A's channels-last copy).
void weight_row(const Relation& rel, const ActivationF64& a, const ActivationF64& b, int64_t f1, int64_t kb,
                int64_t rz, int64_t ry, int64_t rx, double* acc) {
  const int64_t c0 = (kb / (b.c / rel.groups)) * f1;
  std::fill(acc, acc + f1, 0.0);
  for (int64_t in = 0; in < b.n; ++in) {
    for (int64_t oz = 0; oz < b.size[0]; ++oz) {
      const int64_t iz = oz * rel.stride[0] - rel.pad[0] + rz * rel.dil[0];
      if (iz < 0 || iz >= a.size[0]) continue;
      for (int64_t oy = 0; oy < b.size[1]; ++oy) {
        const int64_t iy = oy * rel.stride[1] - rel.pad[1] + ry * rel.dil[1];
        if (iy < 0 || iy >= a.size[1]) continue;
        for (int64_t ox = 0; ox < b.size[2]; ++ox) {
          const int64_t ix = ox * rel.stride[2] - rel.pad[2] + rx * rel.dil[2];
          if (ix < 0 || ix >= a.size[2]) continue;
          const double bv = b.at(in, oz, oy, ox)[kb];
          const double* av = a.at(in, iz, iy, ix) + c0;
          for (int64_t c = 0; c < f1; ++c) acc[c] += av[c] * bv;
        }
      }
    }
  }
}

// One element of the weight face (as weight_row, for one channel c).
double weight_at(const Relation& rel, const ActivationF64& a, const ActivationF64& b, int64_t f1, int64_t kb,
                 int64_t c, int64_t rz, int64_t ry, int64_t rx) {
  const int64_t ch = (kb / (b.c / rel.groups)) * f1 + c;
  double acc = 0;
  for (int64_t in = 0; in < b.n; ++in) {
    for (int64_t oz = 0; oz < b.size[0]; ++oz) {
      const int64_t iz = oz * rel.stride[0] - rel.pad[0] + rz * rel.dil[0];
      if (iz < 0 || iz >= a.size[0]) continue;
      for (int64_t oy = 0; oy < b.size[1]; ++oy) {
        const int64_t iy = oy * rel.stride[1] - rel.pad[1] + ry * rel.dil[1];
        if (iy < 0 || iy >= a.size[1]) continue;
        for (int64_t ox = 0; ox < b.size[2]; ++ox) {
          const int64_t ix = ox * rel.stride[2] - rel.pad[2] + rx * rel.dil[2];
          if (ix < 0 || ix >= a.size[2]) continue;
          acc += a.at(in, iz, iy, ix)[ch] * b.at(in, oz, oy, ox)[kb];
        }
      }
    }
  }
  return acc;
}

// db[k] = sum of dy over the batch and every spatial position.
double bias_gradient_at(const ActivationF64& dy, int64_t k) {
  const int64_t positions = dy.n * dy.size[0] * dy.size[1] * dy.size[2];
  double acc = 0;
  for (int64_t p = 0; p < positions; ++p) acc += dy.v[static_cast<size_t>(p * dy.c + k)];
  return acc;
}

const base::HostTensor* find_arg(const ConvSignature& sig, const std::vector<base::HostTensor>& args,
                                 std::string_view name) {
  const std::vector<TensorSpec> specs = sig.arguments();
  for (size_t i = 0; i < specs.size() && i < args.size(); ++i)
    if (specs[i].name == name) return &args[i];
  return nullptr;
}

// Float64 copies of a signature's inputs, and every result element as a function of them.
class Evaluator {
 public:
  static Result<Evaluator> create(const ConvSignature& sig, const std::vector<base::HostTensor>& args) {
    BOO_RETURN_IF_ERROR(sig.validate());
    const std::vector<TensorSpec> specs = sig.arguments();
    if (args.size() != specs.size())
      return invalid_argument("conv reference: expected " + std::to_string(specs.size()) + " arguments, got " +
                              std::to_string(args.size()));
    for (size_t i = 0; i < specs.size(); ++i) {
      if (args[i].spec().shape != specs[i].shape)
        return invalid_argument("conv reference: argument '" + specs[i].name + "' has shape " +
                                format_dims(args[i].spec().shape) + ", expected " + format_dims(specs[i].shape));
    }
    Evaluator e(sig);
    if (const base::HostTensor* x = find_arg(sig, args, "x")) e.x_ = load_activation(*x);
    if (const base::HostTensor* dy = find_arg(sig, args, "dy")) e.dy_ = load_activation(*dy);
    if (const base::HostTensor* w = find_arg(sig, args, "w")) e.w_ = load_filter(*w);
    if (const base::HostTensor* b = find_arg(sig, args, "b"); b && sig.bias)
      for (int64_t k = 0; k < sig.k; ++k) e.bias_.push_back(b->load(k));
    if (const base::HostTensor* z = find_arg(sig, args, "z"); z && sig.residual) e.z_ = load_activation(*z);
    return e;
  }

  /// Element `linear` (logical row-major index) of result `name`.
  double at(std::string_view name, const TensorSpec& spec, int64_t linear) const {
    if (name == "db") return bias_gradient_at(dy_, linear);
    const auto [i0, i1, z, y, x] = split_index(linear, spec);
    if (name == "y") {
      double v = sig_.transposed ? data_at(rel_, x_, w_, spec.shape[1], i0, i1, z, y, x)
                                 : forward_at(rel_, x_, w_, spec.shape[1], i0, i1, z, y, x);
      if (!bias_.empty()) v += bias_[static_cast<size_t>(i1)];
      if (sig_.residual) v += z_.at(i0, z, y, x)[i1];  // before the activation, as cuDNN's conv-bias-add-act
      return sig_.activation.apply(v);
    }
    if (name == "dx")
      return sig_.transposed ? forward_at(rel_, dy_, w_, spec.shape[1], i0, i1, z, y, x)
                             : data_at(rel_, dy_, w_, spec.shape[1], i0, i1, z, y, x);
    return weight_at(rel_, sig_.transposed ? dy_ : x_, sig_.transposed ? x_ : dy_, spec.shape[1], i0, i1, z, y, x);
  }

  /// Every element of result `name` into `out`.
  void all(std::string_view name, base::HostTensor& out) const {
    const TensorSpec& spec = out.spec();
    if (name == "dw") {  // a row of channels at a time
      const int64_t f1 = spec.shape[1];
      const Dims3 fsize = pad3(std::vector<int64_t>(spec.shape.begin() + 2, spec.shape.end()), 1);
      base::parallel_for(spec.shape[0] * fsize[0] * fsize[1] * fsize[2], [&](int64_t begin, int64_t end) {
        std::vector<double> row(static_cast<size_t>(f1));
        for (int64_t p = begin; p < end; ++p) {
          const auto [unused, kb, rz, ry, rx] = unravel(p, 1, spec.shape[0], fsize);
          weight_row(rel_, sig_.transposed ? dy_ : x_, sig_.transposed ? x_ : dy_, f1, kb, rz, ry, rx, row.data());
          for (int64_t c = 0; c < f1; ++c) out.store(offset5(spec, kb, c, rz, ry, rx), row[static_cast<size_t>(c)]);
        }
      });
      return;
    }
    base::parallel_for(spec.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out.store(base::offset_of_linear(spec, i), at(name, spec, i));
    });
  }

 private:
  explicit Evaluator(const ConvSignature& sig) : sig_(sig), rel_(ConvProblem(sig).relation) {}
  const ConvSignature& sig_;
  Relation rel_;
  ActivationF64 x_, dy_, z_;  // z_: the residual, y's shape
  FilterF64 w_;
  std::vector<double> bias_;
};

}  // namespace

Result<std::vector<base::HostTensor>> conv_reference(const ConvSignature& sig,
                                                     const std::vector<base::HostTensor>& args) {
  BOO_ASSIGN_OR_RETURN(Evaluator e, Evaluator::create(sig, args));
  std::vector<base::HostTensor> results = make_f64_results(sig);
  for (base::HostTensor& r : results) e.all(r.spec().name, r);
  return results;
}

Result<std::vector<double>> conv_reference_sample(const ConvSignature& sig, const std::vector<base::HostTensor>& args,
                                                  size_t result_index, const std::vector<int64_t>& linear) {
  BOO_ASSIGN_OR_RETURN(Evaluator e, Evaluator::create(sig, args));
  const TensorSpec spec = sig.results().at(result_index);
  std::vector<double> out(linear.size());
  base::parallel_for(static_cast<int64_t>(linear.size()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[static_cast<size_t>(i)] = e.at(spec.name, spec, linear[static_cast<size_t>(i)]);
  });
  return out;
}

}  // namespace boo::ops::conv
