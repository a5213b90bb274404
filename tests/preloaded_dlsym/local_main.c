// Loads local_user (linked against libcuda) RTLD_LOCAL, as Python loads an extension, and says
// whether its driver calls reached libcuda through libcapguard.so's exports.
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* user = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (user == NULL) {
    printf("cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  int (*calls)(void) = (int (*)(void))dlsym(user, "local_user_calls");
  if (calls == NULL) return 2;
  printf("calls from a library loaded RTLD_LOCAL that reached libcuda: %d of 2\n", calls());
  return 0;
}
