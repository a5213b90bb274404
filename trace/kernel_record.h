// The kernel records of the trace (format.h, v9): what ran outside the graphs after the first
// replay ('n', graph coverage), the names of the kernel functions they count ('f'), and a graph
// kernel node's scalar arguments beside the same kernel's last eager launches ('a', frozen
// values). The interposer formats them into a caller's buffer (no allocation); the reader parses
// them for the analyzer. Facts only: what they mean is the analyzer's to say.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace capguard::trace {

// 'f': a kernel function handle the 'n' and 'a' records name, written before its first use.
struct KernelNameRecord {
  uint64_t function = 0;
  std::string_view name;  // mangled, as the driver names it; valid during the callback only
};

// What an 'n' record says about the launches counted since the previous one.
enum class LaunchCountKind : uint8_t {
  Start,  // the first graph launch: counting begins here, every kernel launch is seen
  Blind,  // the first graph launch, but eager launches bypass capguard's hooks: not counted
  Phase,  // a graph launch after eager launches: the phase between replays that it ends
  Exit,   // what was counted since the last record, at exit
};
inline constexpr const char* kLaunchCountWords[] = {"start", "blind", "phase", "exit"};

struct ExecLaunches {  // 'x' item: one exec launched this many times
  uint64_t exec = 0;
  uint64_t launches = 0;
};
struct EagerLaunches {  // 'k' item: one kernel launched eagerly
  uint64_t function = 0;
  uint64_t launches = 0;
  uint64_t threads = 0;  // grid x block threads, summed: the work the launches stand for
  uint32_t stack = 0;    // its first launch's stack in the phase; 0 none
};

struct LaunchCountRecord {
  uint64_t seq = 0;  // counts with the events' seq
  uint64_t time_ns = 0;
  uint32_t tid = 0;
  LaunchCountKind kind = LaunchCountKind::Phase;
  std::span<const ExecLaunches> execs;  // valid during the callback only
  std::span<const EagerLaunches> eager;
};

// 'a': a kernel node's arguments of at most 8 bytes that are no address the graph holds
// (order 0, right after the node's 'g' record), or one of the same kernel function's last eager
// launches before the walk (order 1 the most recent), with its geometry.
inline constexpr size_t kMaxKernelArgs = 16;  // per record
struct KernelArg {
  uint32_t param = 0;
  uint32_t size = 0;   // bytes, 1..8
  uint64_t value = 0;  // the bytes in memory order, as a little-endian number
  bool operator==(const KernelArg&) const = default;
};
struct KernelArgsRecord {
  uint64_t exec = 0;
  uint32_t node = 0;          // walk index of its 'g' record
  uint32_t order = 0;         // 0 the node's own; n: the n-th last eager launch
  uint64_t geometry[7] = {};  // grid x y z, block x y z, shared bytes; with geometry_count 7
  uint32_t geometry_count = 0;
  std::span<const KernelArg> args;  // valid during the callback only
};

// Items per 'n' record; a phase with more is written as several records (all but the last of
// kind Phase too, with no graph launch between them: the analyzer adds them up).
inline constexpr size_t kMaxLaunchItems = 128;
inline constexpr size_t kMaxKernelNameLength = 512;
inline constexpr size_t kKernelRecordBufferSize = 64 + kMaxLaunchItems * 72 + 512 * 3;

// Each returns the record's length including its '\n' (0 if it does not fit `capacity`).
size_t format_kernel_name(char* out, size_t capacity, const KernelNameRecord& record);
size_t format_launch_count(char* out, size_t capacity, const LaunchCountRecord& record);
size_t format_kernel_args(char* out, size_t capacity, const KernelArgsRecord& record);

class TraceSink;

// Parses an 'f', 'n' or 'a' line (without '\n') and hands it to the sink. False with `error`
// set when it breaks the grammar.
class KernelRecordParser {
 public:
  bool parse(std::string_view line, TraceSink& sink, std::string& error);

 private:
  std::string name_;
  std::vector<ExecLaunches> execs_;
  std::vector<EagerLaunches> eager_;
  std::vector<KernelArg> args_;
};

}  // namespace capguard::trace
