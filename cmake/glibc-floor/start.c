// The executable's start for glibc 2.28 (cmake/glibc_floor.cmake). Scrt1.o of glibc 2.34+ calls
// __libc_start_main with no init function, counting on the new __libc_start_main to run the
// program's constructors itself; the GLIBC_2.2.5 one (GLIBC_2.17 on aarch64) that a 2.28 link
// binds to would never run them. This passes an init function that runs them, as Scrt1.o did
// before 2.34: glibc 2.28 calls it, and every later glibc calls it instead of running them itself
// (old programs).
#define HIDDEN __attribute__((visibility("hidden")))

typedef int (*main_fn)(int, char**, char**);
typedef void (*void_fn)(void);
typedef void (*init_fn)(int, char**, char**);

extern int real_libc_start_main(main_fn, int, char**, void_fn, void_fn, void_fn, void*);
// The version of each architecture's first glibc, which is the one 2.28 has.
#if defined(__aarch64__)
__asm__(".symver real_libc_start_main, __libc_start_main@GLIBC_2.17");
#else
__asm__(".symver real_libc_start_main, __libc_start_main@GLIBC_2.2.5");
#endif

// Bounds of the executable's .init_array, defined by the linker. (.preinit_array is run by the
// dynamic loader in a dynamically linked program; GCC puts no constructor in .init.)
extern init_fn __init_array_start[] HIDDEN;
extern init_fn __init_array_end[] HIDDEN;

static void run_constructors(int argc, char** argv, char** envp) {
  for (init_fn* f = __init_array_start; f < __init_array_end; ++f) (*f)(argc, argv, envp);
}

HIDDEN int __libc_start_main(main_fn main, int argc, char** argv, void_fn init, void_fn fini,
                             void_fn rtld_fini, void* stack_end) {
  if (!init) init = (void_fn)run_constructors;
  return real_libc_start_main(main, argc, argv, init, fini, rtld_fini, stack_end);
}
