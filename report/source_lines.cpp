#include "report/source_lines.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace capguard {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxLineLength = 400;  // a minified or generated line is cut, not shown whole

std::optional<std::vector<std::string>> read_lines(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > kMaxLineLength) line.resize(kMaxLineLength);
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace

const std::vector<std::string>* SourceReader::lines_of(const std::string& file) {
  auto [it, inserted] = files_.try_emplace(file);
  if (!inserted) return it->second ? &*it->second : nullptr;
  const fs::path path(file);
  std::optional<std::vector<std::string>> lines = read_lines(path);
  // Try the path's tails under the root: the same checkout at another place.
  const fs::path root = root_.empty() ? fs::path(".") : fs::path(root_);
  for (auto part = path.begin(); !lines && part != path.end(); ++part) {
    fs::path tail;
    for (auto rest = part; rest != path.end(); ++rest)
      if (*rest != "/") tail /= *rest;
    if (!tail.empty() && std::next(part) != path.end()) lines = read_lines(root / tail);
  }
  it->second = std::move(lines);
  return it->second ? &*it->second : nullptr;
}

std::vector<SourceLine> SourceReader::around(const std::string& file, int line, int context) {
  std::vector<SourceLine> out;
  if (file.empty() || line <= 0) return out;
  const std::vector<std::string>* lines = lines_of(file);
  if (!lines || static_cast<size_t>(line) > lines->size()) return out;
  const int first = std::max(1, line - context);
  const int last = std::min(static_cast<int>(lines->size()), line + context);
  for (int n = first; n <= last; ++n) out.push_back({n, (*lines)[static_cast<size_t>(n - 1)]});
  return out;
}

}  // namespace capguard
