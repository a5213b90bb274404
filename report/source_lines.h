// The source lines around a frame's file:line, for reports that show the culprit line the way
// compilers do (text) or with more context (HTML). Files are read when the report is rendered;
// one that cannot be read simply shows no lines.
//
// Trust boundary (docs/security.md): the file names come from a trace, which anyone may have
// shaped, and the lines end up in published reports. So a trace never chooses what local content
// is copied: a line is shown only from a regular file under the source root (after resolving
// symlinks and `..`), whose name has a source-like extension, with no hidden component (a name
// starting with '.') below the root, of at most kMaxSourceFileBytes. Files are opened without
// blocking (a FIFO is refused, never waited on) and read only up to the line wanted.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace capguard {

struct SourceLine {
  int number = 0;
  std::string text;  // without the newline
};

inline constexpr uint64_t kMaxSourceFileBytes = 16ull << 20;

// True for a name with a source-like extension (.cu, .cpp, .h, .py, ...).
bool has_source_extension(const std::string& path);

class SourceReader {
 public:
  // `root`: the source root (the current directory when empty). Absolute paths under it are
  // read as they are; relative paths, and absolute ones recorded on another machine (e.g.
  // /home/ci/repo/src/a.cu), are looked for under it: root/src/a.cu, root/a.cu, ...
  explicit SourceReader(std::string root = {});

  // Lines [line - context, line + context] of `file` that exist; empty when it is unreadable,
  // outside the trust boundary, or has no such line.
  std::vector<SourceLine> around(const std::string& file, int line, int context);

  // The file `file` is read from (its real path), or nullopt when none is allowed.
  std::optional<std::string> resolve(const std::string& file);

 private:
  struct Known {
    std::string path;  // real path, under the root
    dev_t device = 0;
    ino_t inode = 0;
    std::vector<uint64_t> checkpoints;  // byte offset of line 1, 1 + kStride, 1 + 2 kStride...
    uint64_t lines = 0;                 // lines in the file, once read to its end; 0 before
    // Line starts far (kFarBytes) past the remembered one before them, line number -> offset:
    // after a huge line the next ones are reached without reading it again (a first
    // line of 15.9 MB was read again for each of 400 findings, in each format).
    std::map<uint64_t, uint64_t> far_starts;
  };
  std::optional<std::string> allowed(const std::string& candidate) const;
  Known* known(const std::string& file);

  std::string root_;  // real path of the root; empty when it does not exist
  std::map<std::string, std::optional<Known>> files_;  // by the name the trace gave
};

}  // namespace capguard
