// Definitions that let binaries built on a new glibc (Debian 12: 2.36) run on glibc 2.28, linked
// into capguard and libcapguard.so by cmake/glibc_floor.cmake. The static C++ runtime
// and unwinder that GCC 12 ships were built against glibc 2.36 and call functions glibc 2.28
// lacks; each is defined here from what 2.28 has. Everything is hidden, so libcapguard.so never
// exports them into the program it is loaded into (which has its own C++ runtime).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HIDDEN __attribute__((visibility("hidden")))

// glibc 2.32: libstdc++ skips atomic reference counts while this says single-threaded. 0 (never
// claim to be single-threaded) is always correct, only a little slower.
HIDDEN char __libc_single_threaded = 0;

// glibc 2.36: std::random_device uses arc4random. The getrandom system call (Linux 3.17) blocks
// only until the kernel's pool is first initialized, as arc4random does.
HIDDEN uint32_t arc4random(void) {
  uint32_t value;
  size_t got = 0;
  while (got < sizeof value) {
    long n = syscall(SYS_getrandom, (char*)&value + got, sizeof value - got, 0);
    if (n > 0) {
      got += (size_t)n;
    } else if (n < 0 && errno != EINTR) {
      // Kernels before 3.17: the device; arc4random itself cannot fail, so neither may this.
      int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
      while (fd >= 0 && got < sizeof value) {
        ssize_t r = read(fd, (char*)&value + got, sizeof value - got);
        if (r > 0) got += (size_t)r;
        else if (r < 0 && errno != EINTR) break;
      }
      if (fd >= 0) close(fd);
      if (got < sizeof value) __builtin_trap();
    }
  }
  return value;
}

// glibc 2.35: GCC 12's unwinder (libgcc_eh: C++ exceptions, and _Unwind_Backtrace, with which the
// interposer records stacks) finds an address's unwind tables with _dl_find_object and has no
// fallback. Where the running glibc has it (2.35+), call it: it is lock-free and fast. Otherwise
// find the object that maps the address with dl_iterate_phdr, as unwinders did before 2.35,
// remembering the last few objects found until a library is loaded or unloaded (libgcc did the
// same), so that a stack of many frames does not walk every loaded object for each frame.
typedef int (*find_object_fn)(void*, struct dl_find_object*);

struct object_range {
  uintptr_t start, end;
  void* eh_frame;
};

// Guarded by the loader's lock, which dl_iterate_phdr holds while it calls find_in_object.
enum { kCachedObjects = 8 };
static struct object_range cache[kCachedObjects];
static unsigned cache_used, cache_next;
static unsigned long long cache_adds, cache_subs;

struct phdr_search {
  uintptr_t pc;
  int first;
  int found;
  struct object_range range;
};

static int find_in_object(struct dl_phdr_info* info, size_t size, void* data) {
  struct phdr_search* search = data;
  if (search->first) {
    search->first = 0;
    // The load and unload counters tell whether the cache still describes the loaded objects.
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
      cache_used = 0;
    } else if (info->dlpi_adds != cache_adds || info->dlpi_subs != cache_subs) {
      cache_used = 0;
      cache_adds = info->dlpi_adds;
      cache_subs = info->dlpi_subs;
    } else {
      for (unsigned i = 0; i < cache_used; ++i) {
        if (search->pc >= cache[i].start && search->pc < cache[i].end) {
          search->range = cache[i];
          search->found = 1;
          return 1;
        }
      }
    }
  }
  struct object_range range = {UINTPTR_MAX, 0, NULL};
  int contains = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* phdr = &info->dlpi_phdr[i];
    uintptr_t begin = info->dlpi_addr + phdr->p_vaddr;
    if (phdr->p_type == PT_LOAD) {
      if (begin < range.start) range.start = begin;
      if (begin + phdr->p_memsz > range.end) range.end = begin + phdr->p_memsz;
      if (search->pc >= begin && search->pc < begin + phdr->p_memsz) contains = 1;
    } else if (phdr->p_type == PT_GNU_EH_FRAME) {
      range.eh_frame = (void*)begin;
    }
  }
  if (!contains) return 0;
  search->range = range;
  search->found = 1;
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    cache[cache_next] = range;
    cache_next = (cache_next + 1) % kCachedObjects;
    if (cache_used < kCachedObjects) ++cache_used;
  }
  return 1;
}

HIDDEN int _dl_find_object(void* pc, struct dl_find_object* result) {
  // Resolved once; a race resolves it twice to the same value.
  static _Atomic(find_object_fn) real;
  static atomic_int resolved;
  if (!atomic_load_explicit(&resolved, memory_order_acquire)) {
    atomic_store_explicit(&real, (find_object_fn)dlvsym(RTLD_DEFAULT, "_dl_find_object", "GLIBC_2.35"),
                          memory_order_relaxed);
    atomic_store_explicit(&resolved, 1, memory_order_release);
  }
  find_object_fn fn = atomic_load_explicit(&real, memory_order_relaxed);
#ifdef CAPGUARD_COMPAT_TEST_FALLBACK  // tests/glibc_floor/compat_test.c: the pre-2.35 path anywhere
  fn = NULL;
#endif
  if (fn) return fn(pc, result);
  struct phdr_search search = {(uintptr_t)pc, 1, 0, {0, 0, NULL}};
  dl_iterate_phdr(find_in_object, &search);
  if (!search.found || !search.range.eh_frame) return -1;
  memset(result, 0, sizeof *result);
  result->dlfo_map_start = (void*)search.range.start;
  result->dlfo_map_end = (void*)search.range.end;
  result->dlfo_eh_frame = search.range.eh_frame;
  return 0;
}
