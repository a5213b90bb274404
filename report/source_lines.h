// The source lines around a frame's file:line, for reports that show the culprit line the way
// compilers do (text) or with more context (HTML). Files are read when the report is rendered;
// one that cannot be read simply shows no lines.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace capguard {

struct SourceLine {
  int number = 0;
  std::string text;  // without the newline
};

class SourceReader {
 public:
  // Relative paths, and absolute ones recorded on another machine (e.g. /home/ci/repo/src/a.cu),
  // are also looked for under `root`: root/src/a.cu, root/a.cu, ... (the current directory when
  // empty).
  explicit SourceReader(std::string root = {}) : root_(std::move(root)) {}

  // Lines [line - context, line + context] of `file` that exist; empty when it is unreadable
  // or has no such line.
  std::vector<SourceLine> around(const std::string& file, int line, int context);

 private:
  const std::vector<std::string>* lines_of(const std::string& file);
  std::string root_;
  std::map<std::string, std::optional<std::vector<std::string>>> files_;  // cached, by path
};

}  // namespace capguard
