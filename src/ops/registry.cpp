// boo: the op registry (one line per op) and command parsing.
#include <algorithm>
#include <cstdlib>

#include "base/parallel.hpp"
#include "base/random.hpp"
#include "base/strings.hpp"
#include "ops/conv/conv_op.hpp"
#include "ops/norm/norm_op.hpp"
#include "ops/op_definition.hpp"
#include "ops/testing/test_op.hpp"

namespace boo::ops {

std::span<const OpDefinition* const> all_ops() {
  static const OpDefinition* const kOps[] = {
      &conv::definition(),
      &norm::layer_norm_definition(),
      &norm::rms_norm_definition(),
      &testing::definition(),  // only with BOO_ENABLE_TEST_OPS=1 (below)
  };
  // The test ops (faulting and hanging kernels for the executor's tests) are
  // registered only when asked for.
  static const bool test_ops = [] {
    const char* v = std::getenv("BOO_ENABLE_TEST_OPS");
    return v && std::string_view(v) == "1";
  }();
  return std::span<const OpDefinition* const>(kOps, std::size(kOps) - (test_ops ? 0 : 1));
}

const OpDefinition* find_op_by_token(std::string_view token, DType* dtype_out) {
  for (const OpDefinition* op : all_ops()) {
    for (const OpToken& t : op->tokens()) {
      if (t.token == token) {
        if (dtype_out) *dtype_out = t.dtype;
        return op;
      }
    }
  }
  return nullptr;
}

const OpDefinition* find_op(std::string_view name) {
  for (const OpDefinition* op : all_ops())
    if (op->name() == name) return op;
  return nullptr;
}

Result<std::vector<base::HostTensor>> OpDefinition::make_arguments(const OpSignature& sig,
                                                                   const InputOptions& options) const {
  std::vector<base::HostTensor> args;
  for (TensorSpec& spec : sig.arguments()) {
    base::HostTensor t(std::move(spec));
    if (options.splat) fill_splat(t, *options.splat);
    else fill_uniform(t, options.seed, input_stream(t.spec().name));
    args.push_back(std::move(t));
  }
  return args;
}

uint64_t input_stream(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (char ch : name) h = (h ^ static_cast<uint8_t>(ch)) * 0x100000001b3ull;
  return h;
}

Result<double> OpDefinition::cancellation_scale(const OpSignature&, const std::vector<base::HostTensor>&,
                                                size_t) const {
  return 0.0;
}

Result<std::vector<double>> OpDefinition::reference_sample(const OpSignature& sig,
                                                          const std::vector<base::HostTensor>& args,
                                                          size_t result_index, const std::vector<int64_t>& linear) const {
  BOO_ASSIGN_OR_RETURN(std::vector<base::HostTensor> all, reference(sig, args));
  const base::HostTensor& r = all.at(result_index);
  std::vector<double> out;
  out.reserve(linear.size());
  for (int64_t i : linear) out.push_back(r.load(base::offset_of_linear(r.spec(), i)));
  return out;
}

void fill_uniform(base::HostTensor& tensor, uint64_t seed, uint64_t stream) {
  const TensorSpec& spec = tensor.spec();
  base::parallel_for(spec.numel(), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      tensor.store(base::offset_of_linear(spec, i), base::uniform_pm1(seed, stream, static_cast<uint64_t>(i)));
  });
}

void fill_splat(base::HostTensor& tensor, double value) {
  const TensorSpec& spec = tensor.spec();
  base::parallel_for(spec.numel(), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) tensor.store(base::offset_of_linear(spec, i), value);
  });
}

std::vector<base::HostTensor> make_f64_results(const OpSignature& sig) {
  std::vector<base::HostTensor> out;
  for (TensorSpec& spec : sig.results()) {
    spec.dtype = DType::kF64;
    out.emplace_back(std::move(spec));
  }
  return out;
}

std::span<const FlagSpec> common_run_flags() {
  static const FlagSpec kFlags[] = {
      {"iter", 'i', "100", "timed iterations (BOO's default 100)"},
      {"time", 't', "1", "1 = time the kernels, 0 = run untimed"},
      {"verify", 'V', "1", "MIOpenDriver's verification switch; boo verifies with --verify-numerics", 1, true},
      {"wall", 'w', "0", "MIOpenDriver's wall-clock timing; boo reports GPU kernel times", 1, true},
      {"help", 'h', "", "print this table", 1},
  };
  return kFlags;
}

Result<RunOptions> read_run_options(const ParsedFlags& flags) {
  RunOptions run;
  BOO_ASSIGN_OR_RETURN(run.iterations, flags.integer("iter"));
  if (run.iterations < 1)
    return invalid_argument("--iter/-i must be at least 1, got " + std::to_string(run.iterations));
  BOO_ASSIGN_OR_RETURN(int64_t time, flags.integer("time"));
  run.time = time != 0;
  return run;
}

}  // namespace boo::ops

namespace boo {
namespace {

// Op tokens of MIOpenDriver and BOO's driver that boo does not implement (yet).
// A command with one of these gets kUnimplemented (a skip), not a parse error.
constexpr std::string_view kKnownUnsupportedPrefixes[] = {
    "convint8", "convfp8", "convbfp8", "convfp32", "CBAInfer", "CAInfer", "pool", "lrn", "activ", "softmax",
    "bnorm", "rnn", "gemm", "ctc", "dropout", "tensorop", "reduce", "sum", "groupnorm", "cat", "addlayernorm",
    "t5layernorm", "adam", "ampadam", "adamw", "ampadamw", "transformersadamw", "transformersampadamw",
    "reduceextreme", "getitem", "reducecalculation", "rope", "prelu", "kthvalue", "glu", "softmarginloss",
    "multimarginloss", "aten::",
};

std::string supported_list() {
  std::string out;
  for (const std::string& t : supported_op_tokens()) out += (out.empty() ? "" : ", ") + t;
  return out;
}

}  // namespace

std::vector<std::string> supported_op_tokens() {
  std::vector<std::string> out;
  for (const ops::OpDefinition* op : ops::all_ops())
    for (const ops::OpToken& t : op->tokens()) out.emplace_back(t.token);
  return out;
}

Result<std::string> op_help(std::string_view op_token) {
  const ops::OpDefinition* op = ops::find_op_by_token(op_token, nullptr);
  if (!op) return invalid_argument("unknown op '" + std::string(op_token) + "'; boo supports " + supported_list());
  return ops::format_flag_help(op->flags(), op_token);
}

Result<ParsedCommand> parse_command(const std::vector<std::string>& words_in) {
  std::vector<std::string> words = words_in;
  // Logged commands start with the driver's path, sometimes after a log prefix:
  // "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv ...".
  for (size_t i = 0; i < words.size(); ++i) {
    std::string_view word = words[i];
    std::string_view base_name = word.substr(word.find_last_of('/') == std::string_view::npos ? 0 : word.find_last_of('/') + 1);
    const bool driver = base_name == "MIOpenDriver" || base_name == "MIOpenDriver.exe";
    const bool ours = i == 0 && (base_name == "boo-driver" || base_name == "iree-boo-driver");
    if (driver || ours) {
      words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      break;
    }
  }
  if (words.empty()) return invalid_argument("empty command: expected an op such as conv or layernormbfp16");
  const std::string& token = words.front();
  DType dtype;
  const ops::OpDefinition* op = ops::find_op_by_token(token, &dtype);
  if (!op) {
    for (std::string_view prefix : kKnownUnsupportedPrefixes) {
      if (base::starts_with(token, prefix))
        return unimplemented("unsupported op '" + token + "': boo does not implement it yet (supported: " +
                             supported_list() + ")");
    }
    return invalid_argument("unknown op '" + token + "': expected one of " + supported_list());
  }
  std::span<const std::string> flag_words(words.data() + 1, words.size() - 1);
  BOO_ASSIGN_OR_RETURN(ops::ParsedFlags flags, ops::parse_flags(op->flags(), flag_words, token));
  if (flags.given("help")) return invalid_argument(ops::format_flag_help(op->flags(), token));
  ParsedCommand parsed;
  BOO_ASSIGN_OR_RETURN(parsed.run, ops::read_run_options(flags));
  BOO_ASSIGN_OR_RETURN(parsed.signature, op->make_signature(dtype, flags));
  parsed.ignored_flags = flags.given_without_effect();
  return parsed;
}

Result<ParsedCommand> parse_command(std::string_view line) {
  BOO_ASSIGN_OR_RETURN(std::vector<std::string> words, base::shell_split(line));
  return parse_command(words);
}

double OpSignature::min_bytes_moved() const {
  double bytes = 0;
  for (const TensorSpec& t : arguments()) bytes += static_cast<double>(t.numel()) * dtype_size_bytes(t.dtype);
  for (const TensorSpec& t : results()) bytes += static_cast<double>(t.numel()) * dtype_size_bytes(t.dtype);
  return bytes;
}

}  // namespace boo
