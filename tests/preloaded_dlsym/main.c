// Under the preloaded libcapguard.so (tests/preloaded_dlsym_test.sh): its dlsym keeps RTLD_NEXT
// the caller's, and a launch reaches libcuda by each way a program takes: the runtime's (dlsym
// the resolver, resolve cuGetProcAddress through it, then the launch), dlsym of the symbol, and
// a call linked against libcuda. Prints whether each was wrapped; exit 0 when all launches arrived.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
typedef int (*Resolve)(const char*, void**, int, unsigned long long, int*);
typedef int (*Launch)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                      void*, void**, void**);
const char* next_after_a(void);
int cuLaunchKernel(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                   void*, void**, void**);
int fake_cuda_launches(void);
typedef int (*BeginToGraph)(void*, void*, const void*, const void*, unsigned long long, int);
int cuStreamBeginCaptureToGraph(void*, void*, const void*, const void*, unsigned long long, int);
int fake_cuda_guarded_calls(void);
// Whether a function pointer is libcuda's own (not a wrapper elsewhere).
static int in_libcuda(void* function) {
  Dl_info info;
  return function != 0 && dladdr(function, &info) != 0 && info.dli_fname != 0 &&
         strstr(info.dli_fname, "libcuda") != 0;
}
int main(void) {
  int failed = 0;
  const char* next = next_after_a();
  printf("RTLD_NEXT from libnext_a: %s\n", next);
  failed |= strcmp(next, "b") != 0;
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  Resolve resolve = (Resolve)dlsym(cuda, "cuGetProcAddress_v2");
  Resolve runtime_resolve = 0;
  int status = 0;
  failed |= resolve == 0 || resolve((const char*)"cuGetProcAddress", (void**)&runtime_resolve,
                                    12000, 0, &status) != 0;
  Launch by_runtime = 0;
  failed |= runtime_resolve == 0 ||
            runtime_resolve("cuLaunchKernel", (void**)&by_runtime, 12000, 0, &status) != 0;
  Launch by_dlsym = (Launch)dlsym(cuda, "cuLaunchKernel");
  printf("launch by the runtime's resolver wrapped: %s\n", in_libcuda((void*)by_runtime) ? "no" : "yes");
  printf("launch by dlsym wrapped: %s\n", in_libcuda((void*)by_dlsym) ? "no" : "yes");
  void* stream = (void*)0x5000;
  failed |= by_runtime == 0 || by_runtime(0, 1, 1, 1, 1, 1, 1, 0, stream, 0, 0) != 0;
  failed |= by_dlsym == 0 || by_dlsym(0, 1, 1, 1, 1, 1, 1, 0, stream, 0, 0) != 0;
  failed |= cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, stream, 0, 0) != 0;
  printf("launches that reached libcuda: %d of 3\n", fake_cuda_launches());
  failed |= fake_cuda_launches() != 3;
  // A guarded entry point (interposer/attach_guards.def) by the same three ways, its six
  // arguments checked by libcuda.
  BeginToGraph guarded_by_runtime = 0;
  failed |= runtime_resolve("cuStreamBeginCaptureToGraph", (void**)&guarded_by_runtime, 12000, 0,
                            &status) != 0;
  BeginToGraph guarded_by_dlsym = (BeginToGraph)dlsym(cuda, "cuStreamBeginCaptureToGraph");
  printf("guarded call by the runtime's resolver wrapped: %s\n",
         in_libcuda((void*)guarded_by_runtime) ? "no" : "yes");
  printf("guarded call by dlsym wrapped: %s\n", in_libcuda((void*)guarded_by_dlsym) ? "no" : "yes");
  int arrived = 0;
  const void *deps = (const void*)0x7000, *data = (const void*)0x8000;
  arrived += guarded_by_runtime != 0 &&
             guarded_by_runtime(stream, (void*)0x6000, deps, data, 0x123456789ull, 2) == 0;
  arrived += guarded_by_dlsym != 0 &&
             guarded_by_dlsym(stream, (void*)0x6000, deps, data, 0x123456789ull, 2) == 0;
  arrived += cuStreamBeginCaptureToGraph(stream, (void*)0x6000, deps, data, 0x123456789ull, 2) == 0;
  printf("guarded calls that arrived intact: %d of 3 (%d reached libcuda)\n", arrived,
         fake_cuda_guarded_calls());
  failed |= arrived != 3 || fake_cuda_guarded_calls() != 3;
  return failed;
}
