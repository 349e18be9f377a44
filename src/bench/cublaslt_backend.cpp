// boo: the cublaslt backend — GEMMs (gemm commands and ATen's mm family, any
// signature whose problem is a GemmProblem) through cuBLASLt, the measured
// baseline of boo's GEMM tiers. cuBLASLt's heuristics offer a few algorithms
// for each product; each is timed once and the fastest kept, remembered in
// the cache folder by cuBLASLt version, device and matmul (bench/vendor_plans.hpp)
// so that the next run checks that one algorithm and times nothing else.
//
// cuBLASLt is column-major: a row-major product out = A @ B is computed as
// out^T = B^T @ A^T, each operand taken as stored (a transpose is an op, not
// a copy); a result stored column-major is computed directly.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "base/strings.hpp"
#include "bench/backend.hpp"
#include "bench/launch_timer.hpp"
#include "bench/vendor_plans.hpp"
#include "boo/runtime.hpp"
#include "cuda/cublaslt_api.hpp"
#include "ops/gemm/gemm_problem.hpp"
#include "ops/op_registry.hpp"

namespace boo::bench {
namespace {

using cuda::CublasLtApi;
using Strides3 = std::array<int64_t, 3>;

#define BOO_CUBLASLT_RETURN_IF_ERROR(api, call)                           \
  do {                                                                    \
    cublasStatus_t boo_cublaslt_status_ = (api).call;                     \
    if (boo_cublaslt_status_ != CUBLAS_STATUS_SUCCESS)                    \
      return ::boo::cuda::cublaslt_status((api), boo_cublaslt_status_, #call); \
  } while (0)

// Workspace cuBLASLt's algorithms may use (what PyTorch gives it on Hopper).
constexpr uint64_t kWorkspaceBytes = 32ull << 20;
// Candidates the heuristics are asked for, each timed once.
constexpr int kCandidates = 8;

// One column-major cuBLASLt operand: `trans` applied to a (rows x cols, ld) stored matrix.
struct Operand {
  bool trans = false;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0, batch_stride = 0;
  std::string text() const {
    return std::string(trans ? "T" : "N") + " " + std::to_string(rows) + "x" + std::to_string(cols) + " ld " +
           std::to_string(ld) + " bs " + std::to_string(batch_stride);
  }
};

// The operand that is the logical [r, c] view with strides `s` (batch, row,
// col): column-major as stored where its rows are contiguous, else its
// transpose when its columns are (a row-major matrix), else none.
Result<Operand> operand_of(const Strides3& s, int64_t r, int64_t c, bool may_transpose, const std::string& what) {
  const bool rows_unit = s[1] == 1 || r == 1, cols_unit = s[2] == 1 || c == 1;
  Operand op;
  op.batch_stride = s[0];
  if (rows_unit && (c == 1 || s[2] >= r)) {
    op.rows = static_cast<uint64_t>(r);
    op.cols = static_cast<uint64_t>(c);
    op.ld = c == 1 ? r : s[2];
    return op;
  }
  if (may_transpose && cols_unit && (r == 1 || s[1] >= c)) {
    op.trans = true;
    op.rows = static_cast<uint64_t>(c);
    op.cols = static_cast<uint64_t>(r);
    op.ld = r == 1 ? c : s[1];
    return op;
  }
  return unimplemented("cuBLASLt takes matrices with one unit stride and the other at least the contiguous extent; " +
                       what + " [" + std::to_string(r) + ", " + std::to_string(c) + "] has strides (" +
                       std::to_string(s[1]) + ", " + std::to_string(s[2]) + ")" +
                       (may_transpose ? "" : " and must be column-major here"));
}

Strides3 swapped(const Strides3& s) { return {s[0], s[2], s[1]}; }

// The matmul of a GemmDesc in cuBLASLt's terms: D = epilogue(alpha * op(A) @ op(B) + beta * C).
struct MatmulSpec {
  DType dtype = DType::kF32;
  bool tf32 = false;
  int64_t batch = 1;
  Operand a, b, d;             // c shares d's layout
  std::string a_name, b_name, c_name, d_name, bias_name;  // tensors bound to each ("" when absent)
  float alpha = 1, beta = 0;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;

  /// Everything the algorithm choice depends on, one line (the remembered plan's record).
  std::string text() const {
    return std::string(dtype_name(dtype)) + (tf32 ? " tf32" : "") + " batch " + std::to_string(batch) + " | A " +
           a.text() + " | B " + b.text() + " | D " + d.text() + (c_name.empty() ? "" : " | C") +
           " | epilogue " + std::to_string(static_cast<int>(epilogue)) + " | alpha " +
           base::format_double(alpha) + " beta " + base::format_double(beta);
  }
};

Result<MatmulSpec> spec_of(const ops::gemm::GemmDesc& g) {
  if (g.dtype == DType::kF64) return unimplemented("float64 runs on the CPU reference only (--backend cpu)");
  MatmulSpec m;
  m.dtype = g.dtype;
  m.tf32 = g.fp32_tf32;
  m.batch = g.batch;
  m.alpha = static_cast<float>(g.alpha);
  // Row-major results (the usual case) are computed transposed: D^T = B^T A^T, so the per-column
  // bias of the GEMM is cuBLASLt's per-row bias of D^T.
  const bool transposed = g.out.strides[2] == 1 || g.n == 1;
  const int64_t rows = transposed ? g.n : g.m, cols = transposed ? g.m : g.n;
  BOO_ASSIGN_OR_RETURN(m.d, operand_of(transposed ? swapped(g.out.strides) : g.out.strides, rows, cols, false,
                                       "the result " + g.out.tensor));
  if (transposed) {
    BOO_ASSIGN_OR_RETURN(m.a, operand_of(swapped(g.b.strides), g.n, g.k, true, g.b.tensor));
    BOO_ASSIGN_OR_RETURN(m.b, operand_of(swapped(g.a.strides), g.k, g.m, true, g.a.tensor));
    m.a_name = g.b.tensor;
    m.b_name = g.a.tensor;
  } else {
    BOO_ASSIGN_OR_RETURN(m.a, operand_of(g.a.strides, g.m, g.k, true, g.a.tensor));
    BOO_ASSIGN_OR_RETURN(m.b, operand_of(g.b.strides, g.k, g.n, true, g.b.tensor));
    m.a_name = g.a.tensor;
    m.b_name = g.b.tensor;
  }
  m.d_name = g.out.tensor;
  // The bias: a unit-stride row vector (the GEMM's bias, or beta = 1 times a broadcast C).
  std::optional<ops::gemm::MatrixView> bias = g.bias;
  std::optional<ops::gemm::MatrixView> c = g.c;
  if (!bias && c && g.beta == 1.0 && c->strides == Strides3{0, 0, 1}) {
    bias = c;
    c.reset();
  }
  if (bias) {
    if (!transposed || bias->strides != Strides3{0, 0, 1})
      return unimplemented("cuBLASLt's bias is one unit-stride vector per result column; " + bias->tensor +
                           " has strides (" + base::join_ints({bias->strides.begin(), bias->strides.end()}, ", ") + ")");
    m.bias_name = bias->tensor;
  }
  if (c) {
    // C is read with D's layout.
    const Strides3 d_view = g.out.strides;
    for (int i = 0; i < 3; ++i) {
      const int64_t extent = i == 0 ? g.batch : i == 1 ? g.m : g.n;
      if (extent > 1 && c->strides[static_cast<size_t>(i)] != d_view[static_cast<size_t>(i)])
        return unimplemented("cuBLASLt reads C with the result's layout; " + c->tensor + " has strides (" +
                             base::join_ints({c->strides.begin(), c->strides.end()}, ", ") + "), the result (" +
                             base::join_ints({d_view.begin(), d_view.end()}, ", ") + ")");
    }
    m.c_name = c->tensor;
    m.beta = static_cast<float>(g.beta);
  }
  using Kind = Activation::Kind;
  const bool b = !m.bias_name.empty();
  switch (g.activation.kind) {
    case Kind::kNone: m.epilogue = b ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT; break;
    case Kind::kRelu: m.epilogue = b ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU; break;
    case Kind::kGeluTanh: m.epilogue = b ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU; break;
    default:
      return unimplemented("cuBLASLt's epilogues apply relu and gelu_tanh, not " + g.activation.to_string());
  }
  return m;
}

cudaDataType_t cuda_type(DType dtype) {
  switch (dtype) {
    case DType::kF16: return CUDA_R_16F;
    case DType::kBF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

// A matmul's descriptors, its algorithm and the tensors it binds.
class Matmul {
 public:
  Matmul(const CublasLtApi& api, MatmulSpec spec) : api_(api), spec_(std::move(spec)) {}
  Matmul(const Matmul&) = delete;
  Matmul& operator=(const Matmul&) = delete;
  ~Matmul() {
    if (desc_) api_.cublasLtMatmulDescDestroy(desc_);
    for (cublasLtMatrixLayout_t l : {a_, b_, d_})
      if (l) api_.cublasLtMatrixLayoutDestroy(l);
  }

  Status create() {
    const cublasComputeType_t compute =
        spec_.dtype == DType::kF32 && spec_.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    BOO_CUBLASLT_RETURN_IF_ERROR(api_, cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F));
    const cublasOperation_t ta = spec_.a.trans ? CUBLAS_OP_T : CUBLAS_OP_N, tb = spec_.b.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    BOO_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    BOO_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    BOO_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_EPILOGUE, &spec_.epilogue, sizeof spec_.epilogue));
    BOO_ASSIGN_OR_RETURN(a_, layout(spec_.a));
    BOO_ASSIGN_OR_RETURN(b_, layout(spec_.b));
    BOO_ASSIGN_OR_RETURN(d_, layout(spec_.d));
    return ok_status();
  }

  // The bias address is an attribute of the descriptor: set before each launch.
  Status run(cublasLtHandle_t handle, const std::map<std::string, void*>& tensors, void* workspace, void* stream) {
    if (!spec_.bias_name.empty()) {
      void* bias = tensors.at(spec_.bias_name);
      BOO_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    }
    void* d = tensors.at(spec_.d_name);
    const void* c = spec_.c_name.empty() ? d : tensors.at(spec_.c_name);
    BOO_CUBLASLT_RETURN_IF_ERROR(
        api_, cublasLtMatmul(handle, desc_, &spec_.alpha, tensors.at(spec_.a_name), a_, tensors.at(spec_.b_name), b_,
                             &spec_.beta, c, d_, d, d_, &algo_, workspace, workspace_bytes_,
                             static_cast<cudaStream_t>(stream)));
    return ok_status();
  }

  // The heuristics' candidates, best first (at most kCandidates).
  Result<std::vector<cublasLtMatmulHeuristicResult_t>> candidates(cublasLtHandle_t handle) const {
    cublasLtMatmulPreference_t pref = nullptr;
    BOO_CUBLASLT_RETURN_IF_ERROR(api_, cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = kWorkspaceBytes;
    cublasStatus_t st = api_.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                                  sizeof ws);
    std::vector<cublasLtMatmulHeuristicResult_t> results(kCandidates);
    int count = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
      st = api_.cublasLtMatmulAlgoGetHeuristic(handle, desc_, a_, b_, d_, d_, pref, kCandidates, results.data(), &count);
    api_.cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS) return cuda::cublaslt_status(api_, st, "cublasLtMatmulAlgoGetHeuristic");
    results.resize(static_cast<size_t>(count));
    if (results.empty()) return unimplemented("cuBLASLt's heuristics offer no algorithm for " + spec_.text());
    return results;
  }

  // Uses `algo` when cuBLASLt accepts it for this matmul: its workspace is then known.
  Status use(cublasLtHandle_t handle, const cublasLtMatmulAlgo_t& algo) {
    cublasLtMatmulHeuristicResult_t checked{};
    BOO_CUBLASLT_RETURN_IF_ERROR(api_, cublasLtMatmulAlgoCheck(handle, desc_, a_, b_, d_, d_, &algo, &checked));
    algo_ = algo;
    workspace_bytes_ = checked.workspaceSize;
    return ok_status();
  }

  const MatmulSpec& spec() const { return spec_; }
  size_t workspace_bytes() const { return workspace_bytes_; }
  const cublasLtMatmulAlgo_t& algo() const { return algo_; }

 private:
  Status set_desc(cublasLtMatmulDescAttributes_t attr, const void* value, size_t size) {
    BOO_CUBLASLT_RETURN_IF_ERROR(api_, cublasLtMatmulDescSetAttribute(desc_, attr, value, size));
    return ok_status();
  }
  Result<cublasLtMatrixLayout_t> layout(const Operand& op) {
    cublasLtMatrixLayout_t l = nullptr;
    BOO_CUBLASLT_RETURN_IF_ERROR(api_, cublasLtMatrixLayoutCreate(&l, cuda_type(spec_.dtype), op.rows, op.cols, op.ld));
    if (spec_.batch > 1) {
      const int32_t count = static_cast<int32_t>(spec_.batch);
      cublasStatus_t st = api_.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
      if (st == CUBLAS_STATUS_SUCCESS)
        st = api_.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &op.batch_stride,
                                                   sizeof op.batch_stride);
      if (st != CUBLAS_STATUS_SUCCESS) {
        api_.cublasLtMatrixLayoutDestroy(l);
        return cuda::cublaslt_status(api_, st, "cublasLtMatrixLayoutSetAttribute");
      }
    }
    return l;
  }

  const CublasLtApi& api_;
  MatmulSpec spec_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_bytes_ = 0;
};

// An algorithm as remembered: its 64 opaque bytes in hex (valid for the
// cuBLASLt version and device of the record, and checked again on use).
std::string algo_text(const cublasLtMatmulAlgo_t& algo) {
  std::string out = "algo ";
  char hex[17];
  for (uint64_t word : algo.data) {
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(word));
    out += hex;
  }
  return out;
}

Result<cublasLtMatmulAlgo_t> parse_algo(const std::string& text) {
  cublasLtMatmulAlgo_t algo{};
  constexpr size_t kWords = sizeof algo.data / sizeof algo.data[0];
  if (text.size() != 5 + 16 * kWords || !base::starts_with(text, "algo "))
    return data_loss("cuBLASLt algorithm '" + text + "': expected 'algo ' and " + std::to_string(16 * kWords) +
                     " hex digits");
  for (size_t w = 0; w < kWords; ++w) {
    const std::string word = text.substr(5 + 16 * w, 16);
    char* end = nullptr;
    algo.data[w] = std::strtoull(word.c_str(), &end, 16);
    if (end != word.c_str() + 16) return data_loss("cuBLASLt algorithm '" + text + "': '" + word + "' is not hex");
  }
  return algo;
}

class CublasLtBackend final : public Backend {
 public:
  CublasLtBackend(Runtime& rt, const TimingOptions& timing, const CublasLtApi& api, cublasLtHandle_t handle)
      : rt_(rt),
        timing_(timing),
        api_(api),
        handle_(handle),
        plans_(timing.vendor_plan_dir, "cublaslt"),
        plan_context_(vendor_plan_context("cublaslt " + std::to_string(api.cublasLtGetVersion()), rt.device())) {}
  ~CublasLtBackend() override {
    matmuls_.clear();
    api_.cublasLtDestroy(handle_);
  }

  std::string name() const override { return "cublaslt"; }

  Result<BackendRun> run(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                         const RunOptions& run) override {
    const ops::OpDefinition* op = ops::find_op(sig.op_name());
    if (!op) return internal_error("no op registered under '" + std::string(sig.op_name()) + "'");
    BOO_ASSIGN_OR_RETURN(std::unique_ptr<ops::OpProblem> problem, op->make_problem(sig));
    const auto* gemm = dynamic_cast<const ops::gemm::GemmProblem*>(problem.get());
    if (!gemm)
      return unimplemented("the cublaslt backend runs GEMMs (gemm commands and ATen's mm family; " +
                           std::string(sig.op_name()) + " is none)");
    BackendRun out;
    const auto tuning_start = std::chrono::steady_clock::now();
    out.input_sets = run.time ? timed_input_sets(rt_, timing_, args) : 1;
    BOO_ASSIGN_OR_RETURN(BackendTensors tensors, upload_backend_tensors(rt_, sig, args, out.input_sets));
    const std::vector<TensorAddresses>& sets = tensors.sets;
    BOO_ASSIGN_OR_RETURN(DeviceBuffer workspace, rt_.allocate(kWorkspaceBytes));
    BOO_ASSIGN_OR_RETURN(Matmul* mm, matmul_for(sig, gemm->desc, sets[0], workspace));
    out.vendor_tuning_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tuning_start).count();
    auto launch = [&](int64_t i) {
      return mm->run(handle_, sets[static_cast<size_t>(i % out.input_sets)], workspace.data(), rt_.stream());
    };
    BOO_RETURN_IF_ERROR(launch(0));
    out.device = "cuda:" + std::to_string(rt_.device().ordinal);
    out.implementation = "cublaslt:gemm [" + algo_text(mm->algo()).substr(0, 21) + "...]";
    BOO_RETURN_IF_ERROR(download_backend_results(rt_, sig, tensors, out));
    if (run.time) BOO_RETURN_IF_ERROR(time_backend_launches(rt_, timing_, run, launch, out.implementation, out));
    BOO_RETURN_IF_ERROR(rt_.synchronize());
    return out;
  }

 private:
  static void warn(const std::string& message) { std::fprintf(stderr, "boo: warning: %s\n", message.c_str()); }

  // The matmul of a signature, its algorithm chosen once per process: the
  // remembered one when cuBLASLt accepts it, else the fastest candidate.
  Result<Matmul*> matmul_for(const OpSignature& sig, const ops::gemm::GemmDesc& desc,
                             const std::map<std::string, void*>& tensors, const DeviceBuffer& workspace) {
    const std::string key = sig.command();
    if (auto it = matmuls_.find(key); it != matmuls_.end()) return it->second.get();
    BOO_ASSIGN_OR_RETURN(MatmulSpec spec, spec_of(desc));
    auto mm = std::make_unique<Matmul>(api_, std::move(spec));
    BOO_RETURN_IF_ERROR(mm->create());
    const std::string record = plan_context_ + " | " + mm->spec().text();
    if (!timing_.vendor_retune) {
      Result<std::string> remembered = plans_.find(record);
      if (remembered.ok()) {
        Result<cublasLtMatmulAlgo_t> algo = parse_algo(*remembered);
        Status used = algo.ok() ? mm->use(handle_, *algo) : algo.status();
        if (used.ok()) return (matmuls_[key] = std::move(mm)).get();
        warn("the remembered cuBLASLt algorithm in " + plans_.path_of(record) + " is unusable (" + used.to_string() +
             "); searching again");
      } else if (remembered.status().code() != StatusCode::kNotFound) {
        warn(remembered.status().to_string() + "; searching again");
      }
    }
    BOO_RETURN_IF_ERROR(search(*mm, tensors, workspace));
    Status stored = plans_.store(record, algo_text(mm->algo()));
    if (!stored.ok() && !store_failure_reported_) {
      warn("cannot remember cuBLASLt algorithms (" + stored.to_string() + "); each run searches again");
      store_failure_reported_ = true;
    }
    return (matmuls_[key] = std::move(mm)).get();
  }

  // Times each candidate the heuristics offer once; keeps the fastest.
  Status search(Matmul& mm, const std::map<std::string, void*>& tensors, const DeviceBuffer& workspace) {
    BOO_ASSIGN_OR_RETURN(std::vector<cublasLtMatmulHeuristicResult_t> candidates, mm.candidates(handle_));
    double best_us = -1;
    cublasLtMatmulAlgo_t best{};
    Status last_error = unimplemented("no cuBLASLt algorithm runs " + mm.spec().text());
    for (const cublasLtMatmulHeuristicResult_t& c : candidates) {
      if (c.state != CUBLAS_STATUS_SUCCESS) continue;
      if (Status st = mm.use(handle_, c.algo); !st.ok()) {
        last_error = st;
        continue;
      }
      auto launch = [&](int64_t) { return mm.run(handle_, tensors, workspace.data(), rt_.stream()); };
      if (Status st = launch(0); !st.ok()) {
        last_error = st;
        continue;
      }
      Result<std::vector<double>> samples = rt_.time_on_stream(launch, 5);
      if (!samples.ok()) {
        last_error = samples.status();
        continue;
      }
      const double us = *std::min_element(samples->begin(), samples->end());
      if (best_us < 0 || us < best_us) {
        best_us = us;
        best = c.algo;
      }
    }
    if (best_us < 0) return last_error;
    return mm.use(handle_, best);
  }

  Runtime& rt_;
  TimingOptions timing_;
  const CublasLtApi& api_;
  cublasLtHandle_t handle_;
  std::map<std::string, std::unique_ptr<Matmul>> matmuls_;  // by canonical command
  VendorPlanStore plans_;
  const std::string plan_context_;  // "cublaslt <version> | <device>": what every remembered algorithm depends on
  bool store_failure_reported_ = false;
};

}  // namespace

Result<std::unique_ptr<Backend>> make_cublaslt_backend(Runtime& runtime, const TimingOptions& timing) {
  BOO_ASSIGN_OR_RETURN(const CublasLtApi* api, cuda::cublaslt_api());
  BOO_RETURN_IF_ERROR(runtime.synchronize());  // makes the runtime's context current on this thread
  cublasLtHandle_t handle = nullptr;
  BOO_CUBLASLT_RETURN_IF_ERROR(*api, cublasLtCreate(&handle));
  return std::unique_ptr<Backend>(std::make_unique<CublasLtBackend>(runtime, timing, *api, handle));
}

}  // namespace boo::bench
