#include "symbolize/symbol_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "model/frame_owner.h"
#include "trace/format.h"
#include "util/regular_file.h"

namespace capguard {
namespace {

constexpr std::string_view kMagic = "capguard-symbols\t1";
// A cache holds the frames of one process's findings and captures: far below these. A bigger
// file is damaged or hostile, and would only cost memory: bytes alone did not bound it
// (240 MiB of 18-byte lines took 1.95 GB as frames), so frames are counted too (each costs
// its strings and about 200 bytes: at most some 120 MB in all).
constexpr off_t kMaxCacheBytes = 64 << 20;
constexpr uint64_t kMaxCacheFrames = uint64_t{1} << 18;

std::string path_for(const std::string& trace_path) { return trace_path + ".symbols"; }

// Names never hold tabs or newlines in practice; a field must not break a line if one did.
std::string field(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return out;
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t tab = line.find('\t', start);
    parts.push_back(line.substr(start, tab - start));
    if (tab == std::string_view::npos) return parts;
    start = tab + 1;
  }
}

template <typename T>
bool parse(std::string_view text, T& value, int base) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  return error == std::errc() && end == text.data() + text.size();
}

// The frames of each native address, innermost first: a run of frames with one address is the
// code inlined there. The first location that resolved an address decides its frames.
void collect(const Location& location, std::map<uint64_t, std::vector<const Frame*>>& frames) {
  const auto& all = location.frames;
  for (size_t i = 0; i < all.size();) {
    size_t end = i + 1;
    while (end < all.size() && all[end].address == all[i].address) ++end;
    if (all[i].module != kPythonModule) {
      std::vector<const Frame*> run;
      for (size_t j = i; j < end; ++j)
        if (!all[j].function.empty() || !all[j].file.empty()) run.push_back(&all[j]);
      if (!run.empty()) frames.emplace(all[i].address, std::move(run));
    }
    i = end;
  }
}

// A line of at most trace::kMaxLineLength bytes (the limit of a trace line), from a buffered
// descriptor. False at the end, or when the line is too long.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  bool next(std::string& line, bool& too_long) {
    line.clear();
    too_long = false;
    for (;;) {
      if (at_ == size_) {
        const ssize_t n = read(fd_, buffer_, sizeof buffer_);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return !line.empty();
        at_ = 0, size_ = static_cast<size_t>(n);
      }
      const char c = buffer_[at_++];
      if (c == '\n') return true;
      if (line.size() == trace::kMaxLineLength) {
        too_long = true;
        return false;
      }
      line += c;
    }
  }

 private:
  int fd_;
  char buffer_[64 * 1024];
  size_t at_ = 0, size_ = 0;
};

}  // namespace

std::optional<std::string> SymbolCache::load_beside(const std::string& trace_path,
                                                    uint32_t process) {
  const std::string path = path_for(trace_path);
  // Beside a trace anyone may have shaped: opened without blocking (a FIFO), regular only.
  OpenRegular why;
  struct stat st;
  const int fd = open_regular(path, why, st);
  if (why == OpenRegular::Missing) return std::nullopt;  // no cache: nothing to add
  if (why == OpenRegular::NotRegular) return path + ": not a regular file";
  if (fd < 0) return "cannot read " + path + ": " + std::strerror(errno);
  if (st.st_size > kMaxCacheBytes) {
    close(fd);
    return path + ": larger than " + std::to_string(kMaxCacheBytes >> 20) + " MiB";
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  auto reader = std::make_unique<LineReader>(fd);
  std::string line;
  bool too_long = false;
  if (!reader->next(line, too_long) || line != kMagic)
    return path + ":1: not a capguard symbol cache (or a newer format)";
  uint64_t number = 2;
  for (; reader->next(line, too_long); ++number) {
    if (number - 2 == kMaxCacheFrames)
      return path + ": more than " + std::to_string(kMaxCacheFrames) +
             " frames; the rest are ignored";
    const auto parts = split_tabs(line);
    uint32_t pid = 0;
    Frame frame;
    if (parts.size() != 6 || !parse(parts[0], pid, 16) || !parse(parts[1], frame.address, 16) ||
        !parse(parts[2], frame.line, 10))
      return path + ":" + std::to_string(number) + ": malformed frame";
    frame.module = parts[3];
    frame.function = parts[4];
    frame.file = parts[5];
    if (process != 0)
      frames_[{process, frame.address}].push_back(frame);
    else
      add(pid, frame);
  }
  if (too_long)
    return path + ":" + std::to_string(number) + ": line is longer than " +
           std::to_string(trace::kMaxLineLength) + " bytes";
  return std::nullopt;
}

std::optional<std::string> SymbolCache::save_beside(const std::string& trace_path, uint32_t pid,
                                                    const Report& report) {
  std::map<uint64_t, std::vector<const Frame*>> frames;  // ordered: the file is deterministic
  for (const Finding& finding : report.findings) {
    if (finding.pid != pid) continue;
    collect(finding.location, frames);
    for (const Related& related : finding.related) collect(related.location, frames);
  }
  for (const CaptureInfo& capture : report.captures) {
    if (capture.pid != pid) continue;
    for_each_location(capture, [&](const Location& l) { collect(l, frames); });
  }
  for (const GraphSiteInfo& site : report.graph_sites) {
    if (site.pid != pid) continue;
    collect(site.site, frames);
    for (const HeldMemory& held : site.held) collect(held.alloc, frames);
  }
  for (const RehearsalInfo& rehearsal : report.rehearsals)
    if (rehearsal.pid == pid)
      for (const auto* items : {&rehearsal.warmup, &rehearsal.breaks})
        for (const RehearsalItem& item : *items) collect(item.location, frames);
  for (const CoverageInfo& coverage : report.coverage)
    if (coverage.pid == pid)
      for (const EagerSite& site : coverage.eager) collect(site.location, frames);
  for (const RankCollectives& rank : report.collectives)
    if (rank.pid == pid)
      for (const CollectiveGraph& graph : rank.graphs) collect(graph.site, frames);
  const std::string path = path_for(trace_path);
  // The trace directory may be shared: never write through what is already there (a planted
  // symlink to a file of someone else's), and never leave half a file. A new file of our own,
  // created exclusively, then renamed over the name (rename replaces a link, never follows it).
  struct stat st;
  if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return "not writing " + path + ": it exists and is not a regular file";
  std::string temporary = path + ".XXXXXX";
  const int fd = mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) return "cannot write " + path + ": " + std::strerror(errno);
  fchmod(fd, 0644);
  std::string out;
  out += kMagic;
  out += '\n';
  char number[64];
  for (const auto& [address, run] : frames)
    for (const Frame* frame : run) {
      std::snprintf(number, sizeof number, "%x\t%llx\t%d\t", pid,
                    static_cast<unsigned long long>(address), frame->line);
      out += number;
      out +=
          field(frame->module) + '\t' + field(frame->function) + '\t' + field(frame->file) + '\n';
    }
  bool ok = true;
  for (size_t written = 0; ok && written < out.size();) {
    const ssize_t n = write(fd, out.data() + written, out.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      ok = false;
    else
      written += static_cast<size_t>(n);
  }
  const int write_error = errno;
  if (close(fd) != 0 && ok) ok = false;
  if (ok && rename(temporary.c_str(), path.c_str()) == 0) return std::nullopt;
  const std::string message =
      "cannot write " + path + ": " + std::strerror(ok ? errno : write_error);
  unlink(temporary.c_str());
  return message;
}

const std::vector<Frame>* SymbolCache::find(uint32_t process, uint32_t pid,
                                            uint64_t return_address) const {
  if (process != 0)
    if (auto it = frames_.find({process, return_address}); it != frames_.end()) return &it->second;
  return find(pid, return_address);
}

const std::vector<Frame>* SymbolCache::find(uint32_t pid, uint64_t return_address) const {
  auto it = frames_.find({by_pid(pid), return_address});
  return it == frames_.end() ? nullptr : &it->second;
}

}  // namespace capguard
