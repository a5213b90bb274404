// Defines which() and asks dlsym(RTLD_NEXT) for the next one: libnext_b's, unless a dlsym
// wrapper answered from its own place in the search order (then this library's own).
#define _GNU_SOURCE
#include <dlfcn.h>
const char* which(void) { return "a"; }
const char* next_after_a(void) {
  const char* (*next)(void) = (const char* (*)(void))dlsym(RTLD_NEXT, "which");
  return next != 0 ? next() : "none";
}
