// Where one report goes, written so that nothing already at that path is destroyed: a regular
// file (or a new one) is replaced atomically (temporary file + rename, through symlinks to the
// file they name); character devices, FIFOs, sockets and /dev/std*, /dev/fd/N are written in
// place, never replaced. Every write and close is checked.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace capguard::cli {

class ReportFile {
 public:
  // path: a file name, "-" for stdout, or "" for stderr.
  explicit ReportFile(std::string path);
  ~ReportFile();
  ReportFile(const ReportFile&) = delete;
  ReportFile& operator=(const ReportFile&) = delete;

  // Prepares the destination; false (and error() says why) when it cannot be written.
  bool open();
  // Appends (buffered); failures are remembered for close().
  void write(std::string_view bytes);
  // Flushes, closes, renames into place. nullopt on success, else "cannot write report ...".
  std::optional<std::string> close();

  bool is_terminal() const;
  const std::string& error() const { return error_; }

 private:
  void flush();
  bool fail(const char* what, int error_number);  // remembers the first failure; false

  std::string path_;         // as given
  std::string destination_;  // the file finally written (symlinks resolved)
  std::string temporary_;    // non-empty: rename this over destination_ on close()
  int fd_ = -1;
  bool owns_fd_ = false;
  std::string buffer_;
  std::string error_;
};

}  // namespace capguard::cli
