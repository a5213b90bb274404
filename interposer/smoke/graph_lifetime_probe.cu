// Probe for graph lifetime, run natively on the H100: what CUDA answers around graph
// lifetime (results in docs/measured.md). nvcc -arch=sm_90 -o probe graph_lifetime_probe.cu -lcuda;
// ./probe walk|free|freehost|realloc|update. Not part of the build.
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define R(x)                                                              \
  do {                                                                    \
    cudaError_t e_ = (x);                                                 \
    std::printf("%-60s -> %s (%d)\n", #x, cudaGetErrorName(e_), (int)e_); \
  } while (0)
#define D(x)                                                       \
  do {                                                             \
    CUresult e_ = (x);                                             \
    const char* n_ = nullptr;                                      \
    cuGetErrorName(e_, &n_);                                       \
    std::printf("%-60s -> %s (%d)\n", #x, n_ ? n_ : "?", (int)e_); \
  } while (0)
__global__ void bump(int* d) { d[threadIdx.x] += 1; }
__global__ void bump2(int* d) { d[threadIdx.x] += 2; }
__global__ void many(int* a, float s, long n, int* b, char c, double* x) {
  if (a) a[0] += (int)s + b[0] + c + (int)n + (int)x[0];
}
struct Big {
  int v[40];
};
__global__ void big(Big b, int* p) { p[0] = b.v[3]; }

static void walk(cudaGraph_t g, int depth) {
  size_t n = 0;
  D(cuGraphGetNodes((CUgraph)g, nullptr, &n));
  CUgraphNode nodes[64];
  if (n > 64) n = 64;
  cuGraphGetNodes((CUgraph)g, nodes, &n);
  for (size_t i = 0; i < n; ++i) {
    CUgraphNodeType t;
    cuGraphNodeGetType(nodes[i], &t);
    std::printf("%*snode %zu type %d\n", depth * 2, "", i, (int)t);
    if (t == CU_GRAPH_NODE_TYPE_KERNEL) {
      CUDA_KERNEL_NODE_PARAMS p;
      std::memset(&p, 0, sizeof p);
      D(cuGraphKernelNodeGetParams(nodes[i], &p));
      std::printf("%*s func=%p kern=%p ctx=%p kernelParams=%p extra=%p\n", depth * 2, "",
                  (void*)p.func, (void*)p.kern, (void*)p.ctx, (void*)p.kernelParams,
                  (void*)p.extra);
      const char* name = nullptr;
      D(cuFuncGetName(&name, p.func));
      std::printf("   name=%s\n", name ? name : "(null)");
      for (size_t k = 0; k < 64; ++k) {
        size_t off = 0, sz = 0;
        CUresult r = cuFuncGetParamInfo(p.func, k, &off, &sz);
        if (r != CUDA_SUCCESS) {
          std::printf("   param %zu: result %d (stop)\n", k, (int)r);
          break;
        }
        unsigned long long v = 0;
        if (p.kernelParams) std::memcpy(&v, p.kernelParams[k], sz < 8 ? sz : 8);
        std::printf("   param %zu off %zu size %zu value %#llx\n", k, off, sz, v);
      }
    } else if (t == CU_GRAPH_NODE_TYPE_MEMCPY) {
      CUDA_MEMCPY3D m;
      std::memset(&m, 0, sizeof m);
      D(cuGraphMemcpyNodeGetParams(nodes[i], &m));
      std::printf(
          "   srcType %d srcDevice %#llx srcHost %p dstType %d dstDevice %#llx dstHost %p width "
          "%zu h %zu d %zu\n",
          (int)m.srcMemoryType, (unsigned long long)m.srcDevice, m.srcHost, (int)m.dstMemoryType,
          (unsigned long long)m.dstDevice, m.dstHost, m.WidthInBytes, m.Height, m.Depth);
    } else if (t == CU_GRAPH_NODE_TYPE_MEMSET) {
      CUDA_MEMSET_NODE_PARAMS m;
      std::memset(&m, 0, sizeof m);
      D(cuGraphMemsetNodeGetParams(nodes[i], &m));
      std::printf("   dst %#llx width %zu height %zu elem %u\n", (unsigned long long)m.dst, m.width,
                  m.height, m.elementSize);
    } else if (t == CU_GRAPH_NODE_TYPE_GRAPH) {
      CUgraph child;
      D(cuGraphChildGraphNodeGetGraph(nodes[i], &child));
      walk((cudaGraph_t)child, depth + 1);
    }
  }
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "walk";
  int* warm;
  cudaMalloc(&warm, 1024);
  bump<<<1, 32>>>(warm);
  bump2<<<1, 32>>>(warm);
  cudaDeviceSynchronize();
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  std::printf("== mode %s\n", mode);
  if (!std::strcmp(mode, "walk")) {
    int* a;
    float* f;
    double* x;
    int* hostp;
    cudaMalloc(&a, 4096);
    cudaMalloc(&x, 64);
    cudaMallocHost(&hostp, 4096);
    f = nullptr;
    many<<<1, 1>>>(a, 1.f, 2, a, 3, x);
    big<<<1, 1>>>(Big{}, a);
    cudaDeviceSynchronize();
    std::printf("a=%p x=%p hostp=%p\n", a, x, hostp);
    cudaGraph_t g;
    R(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    bump<<<1, 32, 0, s>>>(a);
    many<<<1, 1, 0, s>>>(a, 1.5f, 7, a + 4, 'c', x);
    big<<<1, 1, 0, s>>>(Big{}, a + 8);
    cudaMemcpyAsync(a, hostp, 128, cudaMemcpyHostToDevice, s);
    cudaMemsetAsync(a + 16, 0, 64, s);
    void* tmp;
    cudaMallocAsync(&tmp, 256, s);
    cudaMemsetAsync(tmp, 1, 256, s);
    cudaFreeAsync(tmp, s);
    R(cudaStreamEndCapture(s, &g));
    // child graph
    cudaGraph_t parent;
    cudaGraphCreate(&parent, 0);
    cudaGraphNode_t child;
    R(cudaGraphAddChildGraphNode(&child, parent, nullptr, 0, g));
    walk(parent, 0);
    cudaGraphExec_t ex;
    R(cudaGraphInstantiate(&ex, parent, 0));
    // walk cost
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; ++i) {
      size_t n = 0;
      CUgraphNode nodes[64];
      n = 64;
      cuGraphGetNodes((CUgraph)g, nodes, &n);
      for (size_t j = 0; j < n; ++j) {
        CUgraphNodeType t;
        cuGraphNodeGetType(nodes[j], &t);
        if (t == CU_GRAPH_NODE_TYPE_KERNEL) {
          CUDA_KERNEL_NODE_PARAMS p;
          cuGraphKernelNodeGetParams(nodes[j], &p);
          for (int k = 0; k < 8; ++k) {
            size_t o, z;
            if (cuFuncGetParamInfo(p.func, k, &o, &z)) break;
          }
        }
      }
    }
    auto t1 = std::chrono::steady_clock::now();
    std::printf("walk of %d-node graph: %.2f us\n", 8,
                std::chrono::duration<double, std::micro>(t1 - t0).count() / 100);
    CUdeviceptr base = 0;
    size_t sz = 0;
    D(cuMemGetAddressRange(&base, &sz, (CUdeviceptr)(a + 5)));
    std::printf("  range %#llx %zu\n", (unsigned long long)base, sz);
    D(cuMemGetAddressRange(&base, &sz, (CUdeviceptr)hostp));
    std::printf("  host range %#llx %zu\n", (unsigned long long)base, sz);
    CUdeviceptr hb = 0;
    size_t hs = 0;
    D(cuMemHostGetDevicePointer(&hb, hostp, 0));
    std::printf("  host devptr %#llx\n", (unsigned long long)hb);
    R(cudaGraphLaunch(ex, s));
    R(cudaStreamSynchronize(s));
  } else if (!std::strcmp(mode, "free") || !std::strcmp(mode, "freehost") ||
             !std::strcmp(mode, "realloc")) {
    int* tmp;
    cudaMalloc(&tmp, 1 << 20);
    int* hostp;
    cudaMallocHost(&hostp, 4096);
    cudaGraph_t g;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    if (!std::strcmp(mode, "freehost"))
      cudaMemcpyAsync(tmp, hostp, 4096, cudaMemcpyHostToDevice, s);
    else
      bump<<<2048, 32, 0, s>>>(tmp);
    cudaStreamEndCapture(s, &g);
    cudaGraphExec_t ex;
    R(cudaGraphInstantiate(&ex, g, 0));
    R(cudaGraphLaunch(ex, s));
    R(cudaStreamSynchronize(s));
    if (!std::strcmp(mode, "freehost"))
      R(cudaFreeHost(hostp));
    else
      R(cudaFree(tmp));
    if (!std::strcmp(mode, "realloc")) {
      int* again;
      R(cudaMalloc(&again, 1 << 20));
      std::printf("old %p new %p\n", tmp, again);
    }
    R(cudaGraphLaunch(ex, s));
    R(cudaStreamSynchronize(s));
    R(cudaGraphLaunch(ex, s));
    R(cudaDeviceSynchronize());
    R(cudaGetLastError());
    R(cudaMalloc(&tmp, 16));
  } else if (!std::strcmp(mode, "update")) {
    int* a;
    cudaMalloc(&a, 4096);
    auto cap = [&](int variant) {
      cudaGraph_t g;
      cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
      if (variant == 0) bump<<<1, 32, 0, s>>>(a);
      if (variant == 1) bump2<<<1, 32, 0, s>>>(a);
      if (variant == 2) {
        bump<<<1, 32, 0, s>>>(a);
        bump<<<1, 32, 0, s>>>(a);
      }
      if (variant == 3) cudaMemsetAsync(a, 0, 128, s);
      if (variant == 4) bump<<<1, 32, 0, s>>>(a + 8);
      if (variant == 5) bump<<<2, 32, 0, s>>>(a);
      cudaStreamEndCapture(s, &g);
      return g;
    };
    for (int v = 1; v <= 5; ++v) {
      cudaGraph_t g0 = cap(0);
      cudaGraphExec_t ex;
      cudaGraphInstantiate(&ex, g0, 0);
      cudaGraph_t g1 = cap(v);
      cudaGraphExecUpdateResultInfo info;
      std::memset(&info, 0, sizeof info);
      cudaError_t e = cudaGraphExecUpdate(ex, g1, &info);
      std::printf("variant %d: update -> %s (%d) result %d errorNode %p errorFromNode %p\n", v,
                  cudaGetErrorName(e), (int)e, (int)info.result, (void*)info.errorNode,
                  (void*)info.errorFromNode);
      R(cudaGetLastError());
    }
  }
  return 0;
}
