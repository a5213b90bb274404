#include "symbolize/symbol_cache.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <string_view>
#include <vector>

#include "model/frame_owner.h"
#include "trace/format.h"

namespace capguard {
namespace {

constexpr std::string_view kMagic = "capguard-symbols\t1";

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

// std::getline without a bound would hold a line of any length in memory: a damaged or hostile
// file gets the same limit as a trace line. False at the end, or when the line is too long.
bool read_bounded_line(std::istream& in, std::string& line, bool& too_long) {
  line.clear();
  too_long = false;
  for (int c; (c = in.get()) != EOF;) {
    if (c == '\n') return true;
    if (line.size() == trace::kMaxLineLength) {
      too_long = true;
      return false;
    }
    line += static_cast<char>(c);
  }
  return !line.empty();
}

}  // namespace

std::optional<std::string> SymbolCache::load_beside(const std::string& trace_path) {
  const std::string path = path_for(trace_path);
  std::ifstream in(path);
  if (!in) return std::nullopt;  // no cache: nothing to add
  std::string line;
  bool too_long = false;
  if (!read_bounded_line(in, line, too_long) || line != kMagic)
    return path + ":1: not a capguard symbol cache (or a newer format)";
  uint64_t number = 2;
  for (; read_bounded_line(in, line, too_long); ++number) {
    const auto parts = split_tabs(line);
    uint32_t pid = 0;
    Frame frame;
    if (parts.size() != 6 || !parse(parts[0], pid, 16) || !parse(parts[1], frame.address, 16) ||
        !parse(parts[2], frame.line, 10))
      return path + ":" + std::to_string(number) + ": malformed frame";
    frame.module = parts[3];
    frame.function = parts[4];
    frame.file = parts[5];
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
  for (const GraphSiteInfo& site : report.graph_sites)
    if (site.pid == pid) collect(site.site, frames);
  const std::string path = path_for(trace_path);
  std::ofstream out(path, std::ios::trunc);
  out << kMagic << '\n';
  for (const auto& [address, run] : frames)
    for (const Frame* frame : run)
      out << std::hex << pid << '\t' << address << '\t' << std::dec << frame->line << '\t'
          << field(frame->module) << '\t' << field(frame->function) << '\t' << field(frame->file)
          << '\n';
  out.close();
  if (!out) return "cannot write " + path + ": " + std::strerror(errno);
  return std::nullopt;
}

const std::vector<Frame>* SymbolCache::find(uint32_t pid, uint64_t return_address) const {
  auto it = frames_.find({pid, return_address});
  return it == frames_.end() ? nullptr : &it->second;
}

}  // namespace capguard
