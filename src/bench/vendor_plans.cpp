// boo: remembered vendor plans.
#include "bench/vendor_plans.hpp"

#include "base/file_util.hpp"
#include "base/sha256.hpp"
#include "base/strings.hpp"

namespace boo::bench {
namespace {

// The first line of every plan file: the format's version.
constexpr std::string_view kFormatLine = "boo vendor plan 1";
constexpr std::string_view kRecordPrefix = "record: ";
constexpr std::string_view kPlanPrefix = "plan: ";

bool one_line(const std::string& text) { return text.find_first_of("\r\n") == std::string::npos; }

// A plan of any text kept on its file's one plan line: '\\', '\n' and '\r' escaped (an engine
// choice has none of them and reads the same either way; a serialized cuDNN plan may).
std::string escape_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out;
}

Result<std::string> unescape_line(std::string_view line, const std::string& path) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\') {
      out += line[i];
      continue;
    }
    const char next = i + 1 < line.size() ? line[++i] : '\0';
    if (next == '\\') out += '\\';
    else if (next == 'n') out += '\n';
    else if (next == 'r') out += '\r';
    else return data_loss("vendor plan '" + path + "' holds an unknown escape at byte " + std::to_string(i));
  }
  return out;
}

}  // namespace

std::string EngineChoice::to_text() const {
  std::string knob_text;
  for (const auto& [type, value] : knobs)
    knob_text += (knob_text.empty() ? "" : ",") + std::to_string(type) + "=" + std::to_string(value);
  return "engine " + std::to_string(engine) + " knobs " + (knob_text.empty() ? "-" : knob_text);
}

Result<EngineChoice> EngineChoice::parse(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return data_loss("engine choice '" + std::string(text) + "': " + why +
                     " (expected 'engine <index> knobs <type>=<value>,...' or 'knobs -')");
  };
  const std::vector<std::string> words = base::split(text, ' ');
  if (words.size() != 4 || words[0] != "engine" || words[2] != "knobs") return bad("malformed");
  EngineChoice choice;
  Result<int64_t> engine = base::parse_int(words[1]);
  if (!engine.ok() || *engine < 0) return bad("the engine index is not a non-negative integer");
  choice.engine = *engine;
  if (words[3] == "-") return choice;
  for (const std::string& knob : base::split(words[3], ',')) {
    const size_t equals = knob.find('=');
    if (equals == std::string::npos) return bad("knob '" + knob + "' has no '='");
    Result<int64_t> type = base::parse_int(knob.substr(0, equals));
    Result<int64_t> value = base::parse_int(knob.substr(equals + 1));
    if (!type.ok() || !value.ok()) return bad("knob '" + knob + "' is not <integer>=<integer>");
    choice.knobs.emplace_back(*type, *value);
  }
  return choice;
}

std::string vendor_plan_context(const std::string& library, const DeviceInfo& device) {
  return library + " | " + device.name + " sm_" + std::to_string(device.cc_major) + std::to_string(device.cc_minor) +
         " " + std::to_string(device.sm_count) + " SMs";
}

VendorPlanStore::VendorPlanStore(std::string cache_dir, std::string vendor)
    : folder_(cache_dir.empty() ? "" : cache_dir + "/vendor-plans/" + vendor) {}

std::string VendorPlanStore::path_of(const std::string& record) const {
  if (folder_.empty()) return "";
  const std::string key = base::sha256_hex(record);
  return folder_ + "/" + key.substr(0, 2) + "/" + key + ".txt";
}

Result<std::string> VendorPlanStore::find(const std::string& record) const {
  if (folder_.empty()) return not_found("vendor plans are not remembered (no cache folder)");
  const std::string path = path_of(record);
  BOO_ASSIGN_OR_RETURN(std::string text, base::read_file(path));
  // Three lines, each ending in a newline: a truncated file lacks at least the last one.
  std::vector<std::string> lines;
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  if (text.empty() || text.back() != '\n' || lines.size() != 3 || lines[0] != kFormatLine ||
      !base::starts_with(lines[1], kRecordPrefix) || !base::starts_with(lines[2], kPlanPrefix))
    return data_loss("vendor plan '" + path + "' is truncated or not a plan file");
  if (lines[1].substr(kRecordPrefix.size()) != record)
    return data_loss("vendor plan '" + path + "' holds another record: " + lines[1].substr(kRecordPrefix.size()));
  return unescape_line(std::string_view(lines[2]).substr(kPlanPrefix.size()), path);
}

Status VendorPlanStore::store(const std::string& record, const std::string& plan) const {
  if (folder_.empty()) return ok_status();
  if (!one_line(record)) return invalid_argument("a vendor plan's record is one line");
  const std::string path = path_of(record);
  BOO_RETURN_IF_ERROR(base::make_directories(path.substr(0, path.rfind('/'))));
  return base::write_file_atomic(path, std::string(kFormatLine) + "\n" + std::string(kRecordPrefix) + record + "\n" +
                                           std::string(kPlanPrefix) + escape_line(plan) + "\n");
}

}  // namespace boo::bench
