// The module map: which objects are loaded where, written as 'm' records so that the analyzer
// can symbolize raw addresses offline. Objects loaded late (Python extensions, torch's CUDA
// libraries) are picked up when a stack holds an address no known module covers.
#pragma once

#include <link.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace capguard::trace {
class TraceWriter;
}

namespace capguard::interposer {

// The GNU build-id of a loaded object, as lower-case hex, read from its PT_NOTE segments in
// memory. Returns the number of characters written (0 when it has none); out is terminated.
size_t read_build_id(const dl_phdr_info& info, char* out, size_t capacity);

class ModuleMap {
 public:
  static constexpr size_t kMaxModules = 4096;

  // Writes an 'm' record for every loaded object not written before. Takes a lock: called at
  // start and on the rare stack that leaves the known map.
  void refresh(trace::TraceWriter& writer);
  // Lock-free: whether some written module's mapped range holds the address.
  bool contains(uint64_t address) const;
  // Forgets what was written (a fork child starts a trace of its own).
  void reset();
  // fork() must not happen while another thread holds the lock (see pthread_atfork).
  void lock() { pthread_mutex_lock(&mutex_); }
  void unlock() { pthread_mutex_unlock(&mutex_); }

 private:
  struct Range {
    std::atomic<uint64_t> start{0};
    std::atomic<uint64_t> end{0};
  };
  bool known(uint64_t start, uint64_t end) const;
  static int visit(dl_phdr_info* info, size_t size, void* self);

  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
  trace::TraceWriter* writer_ = nullptr;  // during refresh only
  Range ranges_[kMaxModules];
  std::atomic<size_t> count_{0};
  unsigned long long last_adds_ = 0, last_subs_ = 0;
  bool scanned_ = false;
};

}  // namespace capguard::interposer
