// A CPU-only libcuda.so.1: a resolver and a launch entry point that count their calls. Like the
// real one, the resolver hands out its own functions, not what the symbol binds to elsewhere.
#include <string.h>
typedef int CUresult;
static int launches = 0;
static CUresult launch(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned shared, void* stream, void** params, void** extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)params,
      (void)extra;
  ++launches;
  return stream == (void*)0x5000 ? 0 : 1;
}
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void* stream, void** params, void** extra) {
  return launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}
// A guarded entry point of six arguments (interposer/attach_guards.def): 0 only when each arrives
// as the caller passed it, through whichever wrapper.
static int guarded_calls = 0;
static CUresult begin_to_graph(void* stream, void* graph, const void* deps, const void* data,
                               unsigned long long count, int mode) {
  ++guarded_calls;
  return stream == (void*)0x5000 && graph == (void*)0x6000 && deps == (void*)0x7000 &&
                 data == (void*)0x8000 && count == 0x123456789ull && mode == 2
             ? 0
             : 1;
}
CUresult cuStreamBeginCaptureToGraph(void* stream, void* graph, const void* deps, const void* data,
                                     unsigned long long count, int mode) {
  return begin_to_graph(stream, graph, deps, data, count, mode);
}
static CUresult resolve(const char* symbol, void** pfn, int version, unsigned long long flags,
                        int* status) {
  (void)version, (void)flags;
  if (status) *status = 0;
  if (strcmp(symbol, "cuGetProcAddress") == 0) *pfn = (void*)&resolve;
  else if (strcmp(symbol, "cuLaunchKernel") == 0) *pfn = (void*)&launch;
  else if (strcmp(symbol, "cuStreamBeginCaptureToGraph") == 0) *pfn = (void*)&begin_to_graph;
  else return 500;  // CUDA_ERROR_NOT_FOUND
  return 0;
}
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, unsigned long long flags,
                             int* status) {
  return resolve(symbol, pfn, version, flags, status);
}
int fake_cuda_launches(void) { return launches; }
int fake_cuda_guarded_calls(void) { return guarded_calls; }
