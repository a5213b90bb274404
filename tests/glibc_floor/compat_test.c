// cmake/glibc-floor/compat.c, on this machine's glibc: its _dl_find_object's own path (the one
// glibc before 2.35 takes) must find what glibc's _dl_find_object finds, for the program, the C
// library, a library loaded later and after an unload; arc4random must give random words.
#define _GNU_SOURCE
#define CAPGUARD_COMPAT_TEST_FALLBACK  // always the dl_iterate_phdr path
#define _dl_find_object compat_dl_find_object
#define arc4random compat_arc4random
#define __libc_single_threaded compat_libc_single_threaded
#include "../../cmake/glibc-floor/compat.c"
#undef _dl_find_object

#include <stdio.h>

static int failures;

// Where the mapping ends. glibc 2.36 for aarch64, run under qemu-user, ends the program's at its
// first segment (the segments are 64 KiB apart there), where compat.c takes the last one's end;
// libgcc's unwinder reads only the start and the eh_frame. Exact everywhere else.
static int same_end(const struct dl_find_object* want, const struct dl_find_object* got) {
#if defined(__aarch64__)
  return got->dlfo_map_end >= want->dlfo_map_end;
#else
  return got->dlfo_map_end == want->dlfo_map_end;
#endif
}

static void expect_same(const char* what, void* pc) {
  find_object_fn real = (find_object_fn)dlvsym(RTLD_DEFAULT, "_dl_find_object", "GLIBC_2.35");
  if (!real) {
    printf("skip: %s: this glibc has no _dl_find_object to compare with\n", what);
    return;
  }
  for (int round = 0; round < 2; ++round) {  // the second from the cache
    struct dl_find_object want, got;
    int want_status = real(pc, &want);
    int got_status = compat_dl_find_object(pc, &got);
    if (want_status != got_status ||
        (want_status == 0 &&
         (want.dlfo_eh_frame != got.dlfo_eh_frame || want.dlfo_map_start != got.dlfo_map_start ||
          !same_end(&want, &got)))) {
      printf("FAIL: %s (round %d): glibc says %d eh_frame %p map %p-%p; compat says %d %p %p-%p\n",
             what, round, want_status, want.dlfo_eh_frame, want.dlfo_map_start, want.dlfo_map_end,
             got_status, got.dlfo_eh_frame, got.dlfo_map_start, got.dlfo_map_end);
      ++failures;
      return;
    }
  }
  printf("ok: %s\n", what);
}

int main(void) {
  expect_same("the program", (void*)&main);
  expect_same("the C library", dlsym(RTLD_DEFAULT, "printf"));
  expect_same("an unmapped address", (void*)16);
  void* zlib = dlopen("libz.so.1", RTLD_NOW);
  if (!zlib) {
    printf("FAIL: dlopen libz.so.1: %s\n", dlerror());
    return 1;
  }
  void* in_zlib = dlsym(zlib, "zlibVersion");
  expect_same("a library loaded after the first lookups", in_zlib);
  dlclose(zlib);
  expect_same("an address of the library unloaded since", in_zlib);
  void* libm = dlopen("libm.so.6", RTLD_NOW);
  expect_same("a library after an unload", libm ? dlsym(libm, "cos") : NULL);
  expect_same("the program again", (void*)&main);

  uint32_t a = compat_arc4random(), b = compat_arc4random(), c = compat_arc4random();
  if (a == b && b == c) {
    printf("FAIL: arc4random gave %u three times\n", a);
    ++failures;
  } else {
    printf("ok: arc4random\n");
  }
  if (compat_libc_single_threaded != 0) {
    printf("FAIL: __libc_single_threaded claims a single thread\n");
    ++failures;
  }
  return failures ? 1 : 0;
}
