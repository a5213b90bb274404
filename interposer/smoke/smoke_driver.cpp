// Driver-API-only smoke program (like JAX/XLA or Triton): no cudart anywhere.
#include <cuda.h>

#include <cstdio>

#define SAY(call)                                           \
  do {                                                      \
    CUresult r_ = (call);                                   \
    printf("  %-60s -> %d\n", #call, static_cast<int>(r_)); \
  } while (0)

int main() {
  SAY(cuInit(0));
  CUdevice dev;
  CUcontext ctx;
  SAY(cuDeviceGet(&dev, 0));
  SAY(cuDevicePrimaryCtxRetain(&ctx, dev));
  SAY(cuCtxSetCurrent(ctx));
  CUstream s;
  SAY(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr d;
  SAY(cuMemAlloc(&d, 1024));
  char host[1024] = {};
  CUgraph g = nullptr;
  SAY(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  SAY(cuMemsetD8Async(d, 1, 1024, s));
  SAY(cuMemcpyHtoD(d, host, sizeof(host)));  // synchronous copy during capture: escapes
  SAY(cuMemsetD8Async(d, 2, 1024, s));
  SAY(cuStreamEndCapture(s, &g));
  size_t n = 0;
  SAY(cuGraphGetNodes(g, nullptr, &n));
  printf("  nodes %zu\n", n);
  SAY(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  SAY(cuCtxSynchronize());  // 900: invalidates
  SAY(cuStreamEndCapture(s, &g));
  return 0;
}
