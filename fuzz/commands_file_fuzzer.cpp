// Fuzzes the commands-file reader (as .txt when the first byte is even, as
// .tsv when odd) and the parser over every line it returns, as the driver
// and `boo preload` read a workload.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "boo/registry.hpp"
#include "common/commands_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool tsv = data[0] & 1;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  int previous_line = 0;
  for (const boo::tools::CommandLine& cmd : boo::tools::commands_from_text(text, tsv, {"-t", "0"})) {
    // Lines come in order, each with its text, never a comment or a blank.
    if (cmd.line_number <= previous_line || cmd.text.empty() || cmd.text.front() == '#') {
      std::fprintf(stderr, "commands_file_fuzzer: line %d after %d: '%s'\n", cmd.line_number, previous_line,
                   cmd.text.c_str());
      std::abort();
    }
    previous_line = cmd.line_number;
    if (cmd.split_status.ok()) (void)boo::parse_command(cmd.words);
  }
  return 0;
}
