// The entry points a family of trampolines has handed out (launch_hooks.h, attach_guards.h):
// per row (one hooked function), the originals it wrapped, legacy and per-thread pointers,
// runtime- or driver-named, one trampoline each, and a last slot for libcapguard.so's export of
// the same name, whose original (the next definition after this library) is found lazily.
// `Trampoline<Row, N>::get()` is the trampoline that calls slot N of Row. Claiming takes a lock
// (handing out is rare, never a call); a trampoline reads its slot without one.
#pragma once

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <utility>

namespace capguard::interposer {

// Set while capguard looks up the program's libcuda itself (loaded_driver_symbol): the dlsym
// libcapguard.so exports hands such a lookup to glibc untouched, never a trampoline.
inline thread_local bool t_raw_driver_lookup = false;

// `name` in the libcuda.so.1 the process loaded, wherever it was loaded: a program that is not
// linked against it gets it in a library's own scope (the runtime's dlopen, or a library that
// Python loads RTLD_LOCAL, such as TorchInductor's C++ wrapper), where RTLD_NEXT does not look.
inline void* loaded_driver_symbol(const char* name) {
  void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (cuda == nullptr) return nullptr;
  t_raw_driver_lookup = true;
  void* found = dlsym(cuda, name);
  t_raw_driver_lookup = false;
  dlclose(cuda);  // the reference RTLD_NOLOAD took; libcuda stays loaded
  return found;
}

template <int Rows, template <int Row, int N> class Trampoline>
class WrappedSlots {
 public:
  static constexpr int kSlots = 4;
  struct Slot {
    std::atomic<void*> original{nullptr};  // stored (release) before its trampoline is handed out
    bool runtime_named = false;
  };

  Slot& at(int row, int n) { return slots_[row][n]; }

  // The trampoline for `original` in a slot of `row` (the one already holding it, else a free
  // one), or null when every slot is taken.
  void* wrap(int row, void* original, bool runtime_named) {
    pthread_mutex_lock(&mutex_);
    int n = 0;
    for (; n < kSlots; ++n) {
      Slot& slot = slots_[row][n];
      void* held = slot.original.load(std::memory_order_relaxed);
      if (held == nullptr) {
        slot.runtime_named = runtime_named;
        slot.original.store(original, std::memory_order_release);
        break;
      }
      if (held == original && slot.runtime_named == runtime_named) break;
    }
    pthread_mutex_unlock(&mutex_);
    if (n == kSlots) return nullptr;
    return trampoline_of(row, n, std::make_integer_sequence<int, Rows>());
  }

  // The export's original: the definition of `name` next after libcapguard.so (libcuda's), else
  // libcuda's wherever it was loaded.
  void* export_original(int row, const char* name) {
    Slot& slot = slots_[row][kSlots];
    void* original = slot.original.load(std::memory_order_acquire);
    if (original == nullptr) {
      original = dlsym(RTLD_NEXT, name);
      if (original == nullptr) original = loaded_driver_symbol(name);
      slot.original.store(original, std::memory_order_release);
    }
    return original;
  }

  void reset_for_tests() {
    for (auto& row : slots_) {
      for (Slot& slot : row) {
        slot.original.store(nullptr);
        slot.runtime_named = false;
      }
    }
  }

 private:
  template <int Row, int... N>
  static void* in_row(int n, std::integer_sequence<int, N...>) {
    void* const table[] = {Trampoline<Row, N>::get()...};
    return table[n];
  }
  template <int... Row>
  static void* trampoline_of(int row, int n, std::integer_sequence<int, Row...>) {
    void* const table[] = {in_row<Row>(n, std::make_integer_sequence<int, kSlots>())...};
    return table[row];
  }

  Slot slots_[Rows][kSlots + 1];
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
};

}  // namespace capguard::interposer
