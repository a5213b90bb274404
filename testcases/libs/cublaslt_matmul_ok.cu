// cuBLASLt matmuls captured correctly: descriptors, layouts and the algorithm chosen before the
// capture, then cublasLtMatmul on the capturing stream, once without a workspace and once with a
// workspace the program allocated beforehand. capguard must report nothing.
#include <cublasLt.h>

#include "libs/lib_common.h"

constexpr int kN = 128;
constexpr size_t kWorkspace = 32 << 20;

struct Matmul {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layout = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic = {};
  bool found = false;

  explicit Matmul(size_t workspace) {
    LIB_CHECK(cublasLtCreate(&handle));
    LIB_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LIB_CHECK(cublasLtMatrixLayoutCreate(&layout, CUDA_R_32F, kN, kN, kN));
    cublasLtMatmulPreference_t preference = nullptr;
    LIB_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    LIB_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                   sizeof(workspace)));
    int count = 0;
    LIB_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, desc, layout, layout, layout, layout, preference, 1, &heuristic,
                                             &count));
    found = count > 0;
    LIB_CHECK(cublasLtMatmulPreferenceDestroy(preference));
  }
  ~Matmul() {
    LIB_CHECK(cublasLtMatrixLayoutDestroy(layout));
    LIB_CHECK(cublasLtMatmulDescDestroy(desc));
    LIB_CHECK(cublasLtDestroy(handle));
  }
  void run(const float* a, const float* b, float* c, void* workspace, size_t bytes, cudaStream_t stream) {
    const float one = 1.0f, zero = 0.0f;
    LIB_CHECK(cublasLtMatmul(handle, desc, &one, a, layout, b, layout, &zero, c, layout, c, layout,
                             found ? &heuristic.algo : nullptr, workspace, bytes, stream));
  }
};

int main() {
  float* a = device_floats(kN * kN, 1.0f);
  float* b = device_floats(kN * kN, 2.0f);
  float* c = device_floats(kN * kN, 0.0f);
  void* workspace = nullptr;
  CHECK(cudaMalloc(&workspace, kWorkspace));
  cudaStream_t stream = non_blocking_stream();

  for (size_t bytes : {size_t{0}, kWorkspace}) {
    Matmul matmul(bytes);
    matmul.run(a, b, c, workspace, bytes, stream);  // warm-up
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    matmul.run(a, b, c, workspace, bytes, stream);
    end_and_replay(stream);
  }

  CHECK(cudaFree(workspace));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
