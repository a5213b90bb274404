// The module map of one traced process: which object was loaded where, for symbolization.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace capguard {

struct Module {
  uint64_t base = 0;   // load bias (dlpi_addr): file address = runtime address - base
  uint64_t start = 0;  // first mapped byte
  uint64_t end = 0;    // one past the last mapped byte
  std::string path;
  std::string build_id;
};

// A Python frame named by a 'y' record (trace format 2).
struct PythonFrame {
  std::string file;
  std::string function;
  int line = 0;  // 0 when unknown
};

// A Location's addresses hold the Python frames of its stack after the native return
// addresses, each as this tag or'ed with the frame's id: not an address any process can have.
inline constexpr uint64_t kPythonFrameTag = 0xfffe000000000000ull;
inline constexpr bool is_python_frame_tag(uint64_t address) {
  return (address & 0xffff000000000000ull) == kPythonFrameTag;
}

struct ProcessModules {
  uint32_t pid = 0;
  uint32_t process = 0;  // 1-based index into Report::processes (pids can repeat); 0 unknown
  std::vector<Module> modules;
  std::unordered_map<uint32_t, PythonFrame> python_frames;  // by 'y' record id
  // The module that maps the address, nullptr when none does. Where two records overlap (a
  // range reused after dlclose), the later record wins: it is the newer mapping. A binary
  // search in an index of the records made on the first call (again if `modules` grew): a trace
  // may hold any number of records (200k modules x 40k findings took 91 s).
  const Module* find(uint64_t address) const;

 private:
  struct Segment {
    uint64_t start = 0;
    uint64_t end = 0;
    uint32_t module = 0;  // index into `modules`
  };
  mutable std::vector<Segment> index_;  // disjoint, sorted by start
  mutable size_t indexed_ = 0;          // modules.size() when index_ was built
  mutable const Module* indexed_data_ = nullptr;
};

}  // namespace capguard
