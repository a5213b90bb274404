// Frames already resolved, kept beside a trace as <trace>.symbols so that the trace can be
// re-analyzed where the program's binaries are not: CI replays traces recorded on the GPU
// machine. `capguard run` writes it; `capguard report` reads it when present. The symbolizer
// prefers the binaries themselves and falls back to the cache only for frames it cannot
// resolve (file missing, or rebuilt with another build-id).
//
// Format: tab-separated text. First line "capguard-symbols<TAB>1"; then one frame a line:
//   pid(hex) return-address(hex) line(decimal, 0 unknown) module function file
// Code inlined at one address gives one frame per inlined call: consecutive lines with the same
// pid and address, innermost first (a reader that keeps one frame per address keeps a valid one).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/report.h"

namespace capguard {

class SymbolCache {
 public:
  // Adds the frames of <trace_path>.symbols when that file exists; a message if it is damaged.
  // `process` (1-based, Report::processes) keeps them that trace's alone: processes of several
  // hosts share pids; 0: by the pid the file names.
  std::optional<std::string> load_beside(const std::string& trace_path, uint32_t process = 0);
  // Writes <trace_path>.symbols with every symbolized frame of process `pid` in the report.
  static std::optional<std::string> save_beside(const std::string& trace_path, uint32_t pid,
                                                const Report& report);

  // The frames at that address, innermost first (several where code was inlined); null if none.
  const std::vector<Frame>* find(uint32_t pid, uint64_t return_address) const;
  // The same for process `process` (as load_beside names it), else by pid.
  const std::vector<Frame>* find(uint32_t process, uint32_t pid, uint64_t return_address) const;
  void add(uint32_t pid, const Frame& frame) {
    frames_[{by_pid(pid), frame.address}].push_back(frame);
  }
  size_t size() const { return frames_.size(); }  // addresses known

 private:
  static uint64_t by_pid(uint32_t pid) { return uint64_t{1} << 32 | pid; }
  std::map<std::pair<uint64_t, uint64_t>, std::vector<Frame>> frames_;  // (owner, address)
};

}  // namespace capguard
