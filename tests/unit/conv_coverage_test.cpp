// boo tests: the quick GPU numerics lists reach every kernel configuration the workloads reach.
//
// gpu:conv:implicit_gemm compiles each face, tile shape, operand load mode and split-K choice into
// different code (a loader that steps rows over the tile, a vector width, a partial-sum epilogue).
// A configuration that only the large workloads reach is checked on the GPU only when they run
// (minutes each); 72028fe's loader bug lived in such a one (128-row tiles of 6-warp CTAs). This
// test fails when a line of workloads/ plans a configuration that no line of
// tests/gpu/conv_matrix.txt or tests/gpu/focus.txt plans, and names a line to add to focus.txt.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "boo/registry.hpp"
#include "ops/conv/conv_igemm_impl.hpp"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

// The configurations of one command's GEMMs, from the implementation's compile record
// ("pads ...; y: face 0 gemm MxNxK tile 128x96x64 warps 2x3 stages 3 A vecK8 B vecK8 splits 1; ..."):
// "face F tile BMxBNxBK A <mode> B <mode> split|whole" per GEMM. The problem size, warps (set by
// the tile) and pipeline depth are left out.
std::set<std::string> configurations(const std::string& command) {
  std::set<std::string> out;
  Result<ParsedCommand> p = parse_command(std::string_view(command));
  if (!p.ok()) {
    ADD_FAILURE() << command << ": " << p.status().to_string();
    return out;
  }
  const GpuImplementation& impl = conv::implicit_gemm_implementation();
  if (!test::accepts(impl, command)) return out;
  std::istringstream record(test::plan_of(impl, command).config);
  std::string part;
  std::getline(record, part, ';');  // pads ...
  while (std::getline(record, part, ';')) {
    std::istringstream words(part);
    std::map<std::string, std::string> field;  // "face" -> "0", "tile" -> "128x96x64", ...
    std::string key, value;
    words >> key;  // the result's name
    while (words >> key >> value) field[key] = value;
    out.insert("face " + field["face"] + " tile " + field["tile"] + " A " + field["A"] + " B " + field["B"] +
               (field["splits"] == "1" ? " whole" : " split"));
  }
  return out;
}

std::vector<std::string> conv_commands(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path << " (the test runs from the repository root)";
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("conv", 0) == 0) out.push_back(line);
  return out;
}

TEST(ConvCoverageTest, QuickGpuListsReachEveryConfigurationOfTheWorkloads) {
  std::set<std::string> reached;
  for (const char* path : {"tests/gpu/conv_matrix.txt", "tests/gpu/focus.txt"})
    for (const std::string& command : conv_commands(path))
      for (const std::string& c : configurations(command)) reached.insert(c);
  std::map<std::string, std::string> missing;  // configuration -> the first workload line planning it
  for (const char* path : {"workloads/boo-conv-413.txt", "workloads/boo-tuned-conv-257.txt", "workloads/boo-sample.txt"})
    for (const std::string& command : conv_commands(path))
      for (const std::string& c : configurations(command))
        if (!reached.count(c)) missing.emplace(c, command);
  EXPECT_GT(reached.size(), 20u);
  for (const auto& [configuration, command] : missing)
    ADD_FAILURE() << configuration << " is planned by\n  " << command << "\nand by no line of the quick GPU lists";
}

}  // namespace
}  // namespace boo::ops
