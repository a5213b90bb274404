#include "interposer/kernel_launches.h"

#include <atomic>
#include <cstring>

#include "trace/kernel_record.h"

namespace capguard::interposer::kernel_launches {
namespace {

constexpr size_t kFunctions = 1024;  // per process; past it a function is not noted
constexpr size_t kExecs = 1024;
constexpr size_t kRing = 4;  // eager launches kept per function (the rule asks 3 by default)
constexpr size_t kArgs = 8;  // scalar arguments kept per launch
constexpr uint32_t kStackSamples = 64;  // per function: stacks taken at most (bounded unwinds)

enum Layout : uint32_t { kUnknown = 0, kAsking = 1, kKnown = 2 };

struct Launch {
  std::atomic<uint32_t> geometry[7];
  std::atomic<uint64_t> values[kArgs];
  std::atomic<bool> valid;
};

struct Function {
  std::atomic<uint64_t> handle;  // 0: free slot
  std::atomic<uint32_t> layout;
  uint8_t arg_count = 0;  // written before layout becomes kKnown
  uint8_t arg_index[kArgs] = {};
  uint8_t arg_size[kArgs] = {};
  std::atomic<bool> named;
  std::atomic<uint32_t> ring_next;
  Launch ring[kRing];
  // Coverage, since the last 'n' record.
  std::atomic<uint64_t> launches, threads;
  std::atomic<uint32_t> stack, samples;
};

struct Exec {
  std::atomic<uint64_t> handle;
  std::atomic<uint64_t> launches;
};

// A launched CUkernel's CUfunction (in the context of its first launch) → the launched handle's
// slot: the graph walk may see either handle for one kernel.
struct Alias {
  std::atomic<uint64_t> handle;
  std::atomic<uint32_t> function;  // index into g_functions, + 1 (0: not yet written)
};

Function g_functions[kFunctions];
Exec g_execs[kExecs];
Alias g_aliases[kFunctions];
Listener g_listener;
std::atomic<bool> g_counting{false};       // the first graph launch was seen
std::atomic<bool> g_eager_pending{false};  // eager launches since the last 'n' record
std::atomic_flag g_flushing = ATOMIC_FLAG_INIT;

size_t slot_of(uint64_t key, size_t size) {
  return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> 40) & (size - 1);
}

// The slot of `key` (claimed when free), or null when the table is full around it.
template <class Entry, size_t N>
Entry* find_or_claim(Entry (&table)[N], uint64_t key, bool& claimed) {
  claimed = false;
  size_t i = slot_of(key, N);
  for (size_t probe = 0; probe < 16; ++probe, i = (i + 1) & (N - 1)) {
    uint64_t seen = table[i].handle.load(std::memory_order_acquire);
    if (seen == key) return &table[i];
    if (seen == 0 && table[i].handle.compare_exchange_strong(seen, key)) {
      claimed = true;
      return &table[i];
    }
    if (seen == key) return &table[i];
  }
  return nullptr;
}

Function* find_function(uint64_t key) {
  size_t i = slot_of(key, kFunctions);
  for (size_t probe = 0; probe < 16; ++probe, i = (i + 1) & (kFunctions - 1)) {
    const uint64_t seen = g_functions[i].handle.load(std::memory_order_acquire);
    if (seen == key) return &g_functions[i];
    if (seen == 0) return nullptr;
  }
  return nullptr;
}

const Function* find_alias(uint64_t key) {
  size_t i = slot_of(key, kFunctions);
  for (size_t probe = 0; probe < 16; ++probe, i = (i + 1) & (kFunctions - 1)) {
    const uint64_t seen = g_aliases[i].handle.load(std::memory_order_acquire);
    if (seen == 0) return nullptr;
    if (seen != key) continue;
    const uint32_t index = g_aliases[i].function.load(std::memory_order_acquire);
    return index != 0 ? &g_functions[index - 1] : nullptr;
  }
  return nullptr;
}

void note_alias(void* launched, const Function& f) {
  void* function = nullptr;
  if (g_listener.function_of_kernel == nullptr ||
      g_listener.function_of_kernel(&function, launched) != 0 || function == nullptr ||
      function == launched)
    return;
  bool claimed = false;
  if (Alias* a = find_or_claim(g_aliases, reinterpret_cast<uint64_t>(function), claimed);
      a != nullptr && claimed)
    a->function.store(static_cast<uint32_t>(&f - g_functions) + 1, std::memory_order_release);
}

// Asked once per function, by the first thread to launch it: which parameters are scalars.
void learn_layout(void* function, Function& f) {
  uint32_t expected = kUnknown;
  if (!f.layout.compare_exchange_strong(expected, kAsking)) return;
  note_alias(function, f);
  uint8_t count = 0;
  for (size_t i = 0; g_listener.param_info != nullptr && i < 64 && count < kArgs; ++i) {
    size_t offset = 0, size = 0;
    if (g_listener.param_info(function, i, &offset, &size) != 0) break;
    if (size == 0 || size > 8) continue;  // structs: PyTorch's graph-safe RNG state among them
    f.arg_index[count] = static_cast<uint8_t>(i);
    f.arg_size[count] = static_cast<uint8_t>(size);
    ++count;
  }
  f.arg_count = count;
  f.layout.store(kKnown, std::memory_order_release);
}

void write(const char* buffer, size_t n) {
  if (n != 0 && g_listener.writer != nullptr) g_listener.writer->write_record(buffer, n);
}

void name_function(void* function, Function& f) {
  if (f.named.exchange(true) || g_listener.function_name == nullptr) return;
  const char* name = nullptr;
  if (g_listener.function_name(&name, function) != 0 || name == nullptr) name = "";
  static char buffer[64 + trace::kMaxKernelNameLength * 3];  // the name record is rare: locked
  static std::atomic_flag lock = ATOMIC_FLAG_INIT;
  while (lock.test_and_set(std::memory_order_acquire)) {
  }
  write(buffer, trace::format_kernel_name(buffer, sizeof buffer,
                                          {reinterpret_cast<uint64_t>(function), name}));
  lock.clear(std::memory_order_release);
}

void record_arguments(Function& f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                      unsigned bz, unsigned shared, void** params) {
  Launch& l = f.ring[f.ring_next.fetch_add(1, std::memory_order_relaxed) % kRing];
  l.valid.store(false, std::memory_order_relaxed);
  const unsigned geometry[7] = {gx, gy, gz, bx, by, bz, shared};
  for (int i = 0; i < 7; ++i) l.geometry[i].store(geometry[i], std::memory_order_relaxed);
  for (uint8_t a = 0; a < f.arg_count; ++a) {
    uint64_t value = 0;
    if (const void* p = params[f.arg_index[a]]) std::memcpy(&value, p, f.arg_size[a]);
    l.values[a].store(value, std::memory_order_relaxed);
  }
  l.valid.store(true, std::memory_order_release);
}

// Writes the counts since the last record; `kind` Phase at a graph launch, Exit at exit.
void flush(trace::LaunchCountKind kind) {
  if (g_flushing.test_and_set(std::memory_order_acquire)) return;  // another thread is at it
  g_eager_pending.store(false, std::memory_order_relaxed);
  static trace::ExecLaunches execs[trace::kMaxLaunchItems];
  static trace::EagerLaunches eager[trace::kMaxLaunchItems];
  static char buffer[trace::kKernelRecordBufferSize];
  size_t e = 0, k = 0, next_exec = 0, next_function = 0;
  do {
    e = k = 0;
    for (; next_exec < kExecs && e + k < trace::kMaxLaunchItems; ++next_exec) {
      Exec& x = g_execs[next_exec];
      if (const uint64_t n = x.launches.exchange(0, std::memory_order_relaxed); n != 0)
        execs[e++] = {x.handle.load(std::memory_order_relaxed), n};
    }
    for (; next_function < kFunctions && e + k < trace::kMaxLaunchItems; ++next_function) {
      Function& f = g_functions[next_function];
      if (const uint64_t n = f.launches.exchange(0, std::memory_order_relaxed); n != 0)
        eager[k++] = {f.handle.load(std::memory_order_relaxed), n,
                      f.threads.exchange(0, std::memory_order_relaxed),
                      f.stack.load(std::memory_order_relaxed)};
    }
    if (e + k == 0 && kind == trace::LaunchCountKind::Phase) break;
    trace::LaunchCountRecord record;
    record.seq = g_listener.next_seq != nullptr ? g_listener.next_seq(g_listener.context) : 0;
    record.time_ns = g_listener.now_ns != nullptr ? g_listener.now_ns() : 0;
    record.tid = g_listener.tid != nullptr ? g_listener.tid() : 0;
    record.kind = kind;
    record.execs = {execs, e};
    record.eager = {eager, k};
    write(buffer, trace::format_launch_count(buffer, sizeof buffer, record));
  } while (next_exec < kExecs || next_function < kFunctions);
  g_flushing.clear(std::memory_order_release);
}

}  // namespace

void listen(const Listener& listener) { g_listener = listener; }

void on_launch(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
               unsigned bz, unsigned shared, void** params) {
  if (function == nullptr || g_listener.writer == nullptr) return;
  if (g_listener.capturing != nullptr && g_listener.capturing(g_listener.context)) return;
  const auto key = reinterpret_cast<uint64_t>(function);
  bool claimed = false;
  Function* f = find_function(key);
  if (f == nullptr) f = find_or_claim(g_functions, key, claimed);
  if (f == nullptr) return;
  if (f->layout.load(std::memory_order_acquire) != kKnown) learn_layout(function, *f);
  if (f->layout.load(std::memory_order_acquire) == kKnown && params != nullptr)
    record_arguments(*f, gx, gy, gz, bx, by, bz, shared, params);
  if (!g_counting.load(std::memory_order_relaxed)) return;
  name_function(function, *f);
  // The phase's first launch of this function: its stack says where the eager work comes from.
  if (f->launches.fetch_add(1, std::memory_order_relaxed) == 0 &&
      f->samples.load(std::memory_order_relaxed) < kStackSamples &&
      g_listener.stack_here != nullptr) {
    f->samples.fetch_add(1, std::memory_order_relaxed);
    f->stack.store(g_listener.stack_here(g_listener.context), std::memory_order_relaxed);
  }
  f->threads.fetch_add(uint64_t{gx} * gy * gz * bx * by * bz, std::memory_order_relaxed);
  g_eager_pending.store(true, std::memory_order_relaxed);
}

void on_graph_launch(uint64_t exec) {
  if (g_listener.writer == nullptr) return;
  if (!g_counting.load(std::memory_order_relaxed) && !g_counting.exchange(true)) {
    static char buffer[128];
    trace::LaunchCountRecord record;
    record.seq = g_listener.next_seq != nullptr ? g_listener.next_seq(g_listener.context) : 0;
    record.time_ns = g_listener.now_ns != nullptr ? g_listener.now_ns() : 0;
    record.tid = g_listener.tid != nullptr ? g_listener.tid() : 0;
    record.kind =
        g_listener.launches_seen ? trace::LaunchCountKind::Start : trace::LaunchCountKind::Blind;
    write(buffer, trace::format_launch_count(buffer, sizeof buffer, record));
  }
  if (g_eager_pending.load(std::memory_order_relaxed)) flush(trace::LaunchCountKind::Phase);
  bool claimed = false;
  if (Exec* x = find_or_claim(g_execs, exec, claimed))
    x->launches.fetch_add(1, std::memory_order_relaxed);
}

void flush_at_exit() {
  if (g_counting.load(std::memory_order_relaxed)) flush(trace::LaunchCountKind::Exit);
}

void write_node_args(trace::TraceWriter& writer, uint64_t exec, uint32_t index, void* function,
                     void* kernel, const uint64_t geometry[7], const trace::KernelArg* node_args,
                     size_t node_arg_count) {
  const auto func_key = reinterpret_cast<uint64_t>(function);
  const auto kernel_key = reinterpret_cast<uint64_t>(kernel);
  const Function* f = func_key != 0 ? find_function(func_key) : nullptr;
  if (f == nullptr && kernel_key != 0) f = find_function(kernel_key);
  if (f == nullptr && func_key != 0) f = find_alias(func_key);
  if (f == nullptr || f->layout.load(std::memory_order_acquire) != kKnown) return;
  char buffer[256 + trace::kMaxKernelArgs * 40];
  trace::KernelArgsRecord record;
  record.exec = exec;
  record.node = index;
  record.geometry_count = 7;
  std::memcpy(record.geometry, geometry, sizeof record.geometry);
  record.args = {node_args, node_arg_count};
  const size_t n = trace::format_kernel_args(buffer, sizeof buffer, record);
  if (n != 0) writer.write_record(buffer, n);
  const uint32_t next = f->ring_next.load(std::memory_order_relaxed);
  trace::KernelArg args[kArgs];
  record.order = 0;
  for (uint32_t back = 1; back <= kRing && back <= next; ++back) {
    const Launch& l = f->ring[(next - back) % kRing];
    if (!l.valid.load(std::memory_order_acquire)) continue;  // being written: left out
    ++record.order;  // consecutive, as the reader wants them
    for (int i = 0; i < 7; ++i) record.geometry[i] = l.geometry[i].load(std::memory_order_relaxed);
    for (uint8_t a = 0; a < f->arg_count; ++a) {
      args[a] = {f->arg_index[a], f->arg_size[a], l.values[a].load(std::memory_order_relaxed)};
      if (args[a].size < 8) args[a].value &= (uint64_t{1} << (8 * args[a].size)) - 1;
    }
    record.args = {args, f->arg_count};
    const size_t m = trace::format_kernel_args(buffer, sizeof buffer, record);
    if (m != 0) writer.write_record(buffer, m);
  }
}

void reset_for_tests() {
  for (Function& f : g_functions) {
    f.handle.store(0);
    f.layout.store(kUnknown);
    f.named.store(false);
    f.ring_next.store(0);
    for (Launch& l : f.ring) l.valid.store(false);
    f.launches.store(0), f.threads.store(0), f.stack.store(0), f.samples.store(0);
  }
  for (Exec& x : g_execs) x.handle.store(0), x.launches.store(0);
  for (Alias& a : g_aliases) a.handle.store(0), a.function.store(0);
  g_listener = Listener{};
  g_counting.store(false);
  g_eager_pending.store(false);
}

}  // namespace capguard::interposer::kernel_launches
