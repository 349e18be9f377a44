// boo: trace part files and their merge into a Chrome trace-event JSON file.
#include "bench/trace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "base/file_util.hpp"
#include "base/json.hpp"
#include "base/strings.hpp"
#include "bench/executor_protocol.hpp"

namespace boo::bench {
namespace {

// One kernel, as a part file stores it.
struct PartRecord {
  int index = 0;
  std::string backend;
  uint32_t device = 0, stream = 0;
  uint64_t start_ns = 0, end_ns = 0;
  int64_t launch = 0;
  std::string name, command;
};

constexpr size_t kFields = 9;

Result<PartRecord> parse_record(const std::string& line) {
  const std::vector<std::string> f = decode_fields(line);
  if (f.size() != kFields) return invalid_argument("expected " + std::to_string(kFields) + " fields");
  PartRecord r;
  Result<int64_t> index = base::parse_int(f[0]), device = base::parse_int(f[2]), stream = base::parse_int(f[3]),
                  start = base::parse_int(f[4]), end = base::parse_int(f[5]), launch = base::parse_int(f[6]);
  for (const Result<int64_t>* v : {&index, &device, &stream, &start, &end, &launch})
    if (!v->ok()) return v->status();
  r.index = static_cast<int>(*index);
  r.backend = f[1];
  r.device = static_cast<uint32_t>(*device);
  r.stream = static_cast<uint32_t>(*stream);
  r.start_ns = static_cast<uint64_t>(*start);
  r.end_ns = static_cast<uint64_t>(*end);
  r.launch = *launch;
  r.name = f[7];
  r.command = f[8];
  return r;
}

std::string microseconds(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
  return buf;
}

// The command spans and stream tracks are tids of the GPU's process: 0 is the
// commands track, stream s is tid s + 1.
constexpr int64_t kCommandsTid = 0;

}  // namespace

Result<TracePart> TracePart::open(const std::string& path) {
  // Appended to by each executor of one run (a restarted one continues it); never through a link.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  std::FILE* f = fd < 0 ? nullptr : ::fdopen(fd, "a");
  if (!f) {
    const std::string err = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return failed_precondition("cannot open trace part '" + path + "': " + err);
  }
  return TracePart(f, path);
}

TracePart::~TracePart() {
  if (file_) std::fclose(file_);
}

Status TracePart::add(int index, const std::string& command, const std::string& backend,
                      const std::vector<KernelRecord>& kernels) {
  std::string text;
  for (const KernelRecord& k : kernels) {
    text += encode_fields({std::to_string(index), backend, std::to_string(k.device), std::to_string(k.stream),
                           std::to_string(k.start_ns), std::to_string(k.end_ns), std::to_string(k.launch), k.name,
                           command});
    text += '\n';
  }
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0)
    return failed_precondition("cannot write trace part '" + path_ + "': " + std::strerror(errno));
  return ok_status();
}

Result<TraceSummary> write_trace(const std::vector<std::string>& part_paths, const std::string& out_path) {
  std::vector<PartRecord> records;
  for (const std::string& path : part_paths) {
    std::ifstream in(path);
    if (!in) continue;  // an executor that timed nothing wrote no part
    std::string line;
    int64_t line_number = 0;
    while (std::getline(in, line)) {
      ++line_number;
      if (line.empty()) continue;
      Result<PartRecord> r = parse_record(line);
      if (!r.ok()) {
        Status st = r.status();
        return std::move(st).annotate("trace part " + path + " line " + std::to_string(line_number));
      }
      records.push_back(std::move(*r));
    }
  }
  std::sort(records.begin(), records.end(),
            [](const PartRecord& a, const PartRecord& b) { return a.start_ns < b.start_ns; });
  const uint64_t t0 = records.empty() ? 0 : records.front().start_ns;

  // A span per (GPU, command, backend): from its first kernel's start to its last kernel's end.
  struct Span {
    uint64_t start = std::numeric_limits<uint64_t>::max(), end = 0;
    int64_t kernels = 0;
    std::string command;
  };
  std::map<std::tuple<uint32_t, int, std::string>, Span> spans;
  std::set<std::pair<uint32_t, uint32_t>> streams;
  std::string events;
  auto add_event = [&](const std::string& e) {
    events += events.empty() ? "\n" : ",\n";
    events += e;
  };
  for (const PartRecord& r : records) {
    Span& s = spans[{r.device, r.index, r.backend}];
    s.start = std::min(s.start, r.start_ns);
    s.end = std::max(s.end, r.end_ns);
    ++s.kernels;
    s.command = r.command;
    streams.insert({r.device, r.stream});
    add_event("{\"name\":" + base::json_quote(r.name) + ",\"cat\":\"kernel\",\"ph\":\"X\",\"ts\":" +
              microseconds(r.start_ns - t0) + ",\"dur\":" + microseconds(r.end_ns - r.start_ns) +
              ",\"pid\":" + std::to_string(r.device) + ",\"tid\":" + std::to_string(int64_t{r.stream} + 1) +
              ",\"args\":{\"command\":" + std::to_string(r.index) + ",\"backend\":" + base::json_quote(r.backend) +
              ",\"launch\":" + std::to_string(r.launch) + ",\"invocation\":" + base::json_quote(r.command) + "}}");
  }
  for (const auto& [key, s] : spans) {
    const auto& [device, index, backend] = key;
    add_event("{\"name\":" + base::json_quote("#" + std::to_string(index) + " " + backend + ": " + s.command) +
              ",\"cat\":\"command\",\"ph\":\"X\",\"ts\":" + microseconds(s.start - t0) +
              ",\"dur\":" + microseconds(s.end - s.start) + ",\"pid\":" + std::to_string(device) +
              ",\"tid\":" + std::to_string(kCommandsTid) + ",\"args\":{\"command\":" + std::to_string(index) +
              ",\"backend\":" + base::json_quote(backend) + ",\"kernels\":" + std::to_string(s.kernels) +
              ",\"invocation\":" + base::json_quote(s.command) + "}}");
  }
  // Track names: "GPU d", its "commands" track first, then "stream s".
  std::set<uint32_t> devices;
  for (const auto& [device, stream] : streams) devices.insert(device);
  for (uint32_t d : devices) {
    const std::string pid = std::to_string(d);
    add_event("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"args\":{\"name\":\"GPU " + pid + "\"}}");
    add_event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":0,\"args\":{\"name\":\"commands\"}}");
    add_event("{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":" + pid +
              ",\"tid\":0,\"args\":{\"sort_index\":-1}}");
  }
  for (const auto& [device, stream] : streams)
    add_event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(device) +
              ",\"tid\":" + std::to_string(int64_t{stream} + 1) + ",\"args\":{\"name\":\"stream " +
              std::to_string(stream) + "\"}}");
  const std::string json = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[" + events + "\n]}\n";
  BOO_RETURN_IF_ERROR(base::write_file_atomic(out_path, json));
  return TraceSummary{static_cast<int64_t>(records.size()), static_cast<int64_t>(spans.size())};
}

}  // namespace boo::bench
