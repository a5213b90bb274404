#include "engine/test_marks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <unordered_map>

#include "util/regular_file.h"

namespace capguard {
namespace {

constexpr std::string_view kBegin = "capguard-test-begin ";
constexpr std::string_view kEnd = "capguard-test-end ";
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

// The next space-separated number of `line`, consumed; none when it is not one.
template <class T>
std::optional<T> take_number(std::string_view& line) {
  T value{};
  const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
  if (ec != std::errc() || end == line.data() + line.size() || *end != ' ') return std::nullopt;
  line.remove_prefix(static_cast<size_t>(end - line.data()) + 1);
  return value;
}

class Parser {
 public:
  explicit Parser(uint32_t pid) : pid_(pid) {}

  void line(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > kMaxTestMarkLine) return;
    const bool begin = line.starts_with(kBegin);
    if (!begin && !line.starts_with(kEnd)) return;
    line.remove_prefix(begin ? kBegin.size() : kEnd.size());
    const auto time = take_number<uint64_t>(line);
    const auto pid = take_number<uint32_t>(line);
    if (!time || !pid || *pid != pid_ || line.empty() || *time < last_ns_) return;
    last_ns_ = *time;
    if (begin)
      start(*time, line);
    else if (open_ && marks_.names[marks_.spans.back().test] == line)
      marks_.spans.back().end_ns = *time, open_ = false;
  }

  TestMarks finish() { return std::move(marks_); }

 private:
  void start(uint64_t time, std::string_view name) {
    if (open_) marks_.spans.back().end_ns = time;  // the last one never ended
    open_ = false;
    auto [at, fresh] = ids_.try_emplace(std::string(name), marks_.names.size());
    if (fresh) {
      if (marks_.names.size() >= kMaxTests) {
        ids_.erase(at);
        return;
      }
      marks_.names.emplace_back(name);
    }
    marks_.spans.push_back({time, kNever, at->second});
    open_ = true;
  }

  uint32_t pid_;
  TestMarks marks_;
  std::unordered_map<std::string, uint32_t> ids_;
  uint64_t last_ns_ = 0;
  bool open_ = false;
};

}  // namespace

std::optional<uint32_t> TestMarks::test_at(uint64_t time_ns) const {
  auto after = std::upper_bound(spans.begin(), spans.end(), time_ns,
                                [](uint64_t t, const TestSpan& s) { return t < s.begin_ns; });
  if (after == spans.begin()) return std::nullopt;
  const TestSpan& span = *(after - 1);
  if (time_ns >= span.end_ns) return std::nullopt;
  return span.test;
}

std::string test_marks_path(std::string_view trace_path) {
  constexpr std::string_view kTrace = ".trace";
  if (!trace_path.ends_with(kTrace)) return {};
  return std::string(trace_path.substr(0, trace_path.size() - kTrace.size())) + ".tests";
}

TestMarks parse_test_marks(std::string_view text, uint32_t pid) {
  Parser parser(pid);
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    parser.line(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return parser.finish();
}

TestMarks read_test_marks(const std::string& path, uint32_t pid, uint64_t not_before_unix_ns) {
  // Non-blocking and checked before reading: a FIFO or device named so is refused.
  OpenRegular why;
  struct stat st;
  const int fd = open_regular(path, why, st);
  if (fd < 0) return {};
  const uint64_t written = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                           static_cast<uint64_t>(st.st_mtim.tv_nsec);
  std::string text;
  if (st.st_mtim.tv_sec >= 0 && written + kStaleMarksSlackNs >= not_before_unix_ns) {
    char buffer[65536];
    while (text.size() < kMaxTestMarksBytes) {
      const ssize_t n = read(fd, buffer, sizeof buffer);
      if (n <= 0) break;
      text.append(buffer, static_cast<size_t>(n));
    }
    if (text.size() >= kMaxTestMarksBytes)  // cut: keep whole lines only
      text.resize(std::min(text.size(), text.rfind('\n', kMaxTestMarksBytes) + 1));
  }
  close(fd);
  return parse_test_marks(text, pid);
}

}  // namespace capguard
