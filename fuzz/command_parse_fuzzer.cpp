// Fuzzes the command parser of every op. The first byte picks the op whose
// flags the rest is (or, when 0, leaves the line as written, op token
// included). Whatever parses must survive what the driver, `boo explain` and
// `boo preload` do with it: its canonical command parses back to an equal
// signature with the same command, its tensors, function name and problem
// exist, and dispatch and planning for sm_90a end in a value or a Status.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "boo/registry.hpp"
#include "ops/op_registry.hpp"
#include "runtime/dispatch.hpp"

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& line) {
  std::fprintf(stderr, "command_parse_fuzzer: %s\n  line: %s\n", what.c_str(), line.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const std::vector<std::string> tokens = boo::supported_op_tokens();
  static const boo::DeviceInfo device = *boo::DeviceInfo::for_arch("sm_90a");
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string line = data[0] == 0 ? rest : tokens[data[0] % tokens.size()] + " " + rest;
  boo::Result<boo::ParsedCommand> parsed = boo::parse_command(std::string_view(line));
  if (!parsed.ok()) return 0;
  const boo::OpSignature& sig = *parsed->signature;
  const std::string canonical = sig.command();
  boo::Result<boo::ParsedCommand> again = boo::parse_command(std::string_view(canonical));
  if (!again.ok()) fail("the canonical command does not parse: " + again.status().to_string(), line);
  if (!again->signature->equals(sig)) fail("the canonical command parses to another signature: " + canonical, line);
  if (again->signature->command() != canonical) fail("the canonical command is not stable: " + canonical, line);
  (void)sig.func_name();
  (void)sig.arguments();
  (void)sig.results();
  (void)sig.flop_count();
  (void)sig.min_bytes_moved();
  const boo::ops::OpDefinition* op = boo::ops::find_op(sig.op_name());
  if (!op) fail("no op registered for a parsed signature", line);
  (void)op->make_problem(sig);
  boo::Result<boo::runtime::Dispatch> dispatch = boo::runtime::choose_gpu_implementation(sig, device, "");
  if (dispatch.ok()) (void)boo::runtime::plan_chosen(*dispatch);
  return 0;
}
