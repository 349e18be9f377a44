// boo tests: helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/host_tensor.hpp"
#include "boo/registry.hpp"
#include "ops/op_registry.hpp"

namespace boo::testing {

/// The parse of `command`, which must be valid (a failed expectation and an empty command otherwise).
inline ParsedCommand must_parse(const std::string& command) {
  Result<ParsedCommand> p = parse_command(command);
  EXPECT_TRUE(p.ok()) << command << "\n  -> " << p.status().to_string();
  if (!p.ok()) return {};
  return std::move(*p);
}

/// The canonical command of `command` parses back to an equal signature with the same name.
inline void expect_round_trip(const std::string& command) {
  SCOPED_TRACE(command);
  ParsedCommand first = must_parse(command);
  ASSERT_TRUE(first.signature);
  const std::string canonical = first.signature->command();
  ParsedCommand second = must_parse(canonical);
  ASSERT_TRUE(second.signature);
  EXPECT_TRUE(first.signature->equals(*second.signature)) << "canonical: " << canonical;
  EXPECT_EQ(second.signature->command(), canonical);
  EXPECT_EQ(second.signature->func_name(), first.signature->func_name());
}

/// A parsed command with its inputs and float64 reference results.
struct ReferenceRun {
  std::unique_ptr<OpSignature> sig;
  std::vector<base::HostTensor> args;
  std::vector<base::HostTensor> results;
};

/// Parses `command` (which must be valid), makes seeded inputs and runs the CPU reference.
inline ReferenceRun run_reference(const std::string& command, uint64_t seed = 10) {
  ReferenceRun run;
  Result<ParsedCommand> parsed = parse_command(command);
  EXPECT_TRUE(parsed.ok()) << command << ": " << parsed.status().to_string();
  if (!parsed.ok()) return run;
  run.sig = std::move(parsed->signature);
  const ops::OpDefinition* op = ops::find_op(run.sig->op_name());
  Result<std::vector<base::HostTensor>> args = op->make_arguments(*run.sig, ops::InputOptions{seed, {}});
  EXPECT_TRUE(args.ok()) << args.status().to_string();
  run.args = std::move(*args);
  Result<std::vector<base::HostTensor>> results = op->reference(*run.sig, run.args);
  EXPECT_TRUE(results.ok()) << command << ": " << results.status().to_string();
  if (results.ok()) run.results = std::move(*results);
  return run;
}

/// Sum over the logical elements of a * b (same shapes, any strides and dtypes).
inline double inner_product(const base::HostTensor& a, const base::HostTensor& b) {
  EXPECT_EQ(a.spec().shape, b.spec().shape);
  double sum = 0;
  const int64_t n = a.spec().numel();
  for (int64_t i = 0; i < n; ++i)
    sum += a.load(base::offset_of_linear(a.spec(), i)) * b.load(base::offset_of_linear(b.spec(), i));
  return sum;
}

/// Elements in logical row-major order.
inline std::vector<double> logical_values(const base::HostTensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.spec().numel(); ++i) out.push_back(t.load(base::offset_of_linear(t.spec(), i)));
  return out;
}

/// A tensor with the given logical values (row-major) in the given spec.
inline base::HostTensor tensor_from(const TensorSpec& spec, const std::vector<double>& values) {
  base::HostTensor t(spec);
  for (int64_t i = 0; i < spec.numel(); ++i) t.store(base::offset_of_linear(spec, i), values[static_cast<size_t>(i)]);
  return t;
}

}  // namespace boo::testing
