// cuSPARSE SpMV captured correctly: matrix and vector descriptors made, the external buffer sized
// and allocated before the capture, the handle bound to the capturing stream, then cusparseSpMV
// inside a Global capture. capguard must report nothing.
#include <cusparse.h>

#include <vector>

#include "libs/lib_common.h"

constexpr int kN = 256;  // the identity matrix in CSR form

template <typename T>
T* upload(const std::vector<T>& host) {
  T* data = nullptr;
  CHECK(cudaMalloc(&data, host.size() * sizeof(T)));
  CHECK(cudaMemcpy(data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return data;
}

int main() {
  std::vector<int> offsets(kN + 1), columns(kN);
  for (int i = 0; i <= kN; ++i) offsets[i] = i;
  for (int i = 0; i < kN; ++i) columns[i] = i;
  int* d_offsets = upload(offsets);
  int* d_columns = upload(columns);
  float* d_values = upload(std::vector<float>(kN, 1.0f));
  float* d_x = upload(std::vector<float>(kN, 2.0f));
  float* d_y = upload(std::vector<float>(kN, 0.0f));

  cudaStream_t stream = non_blocking_stream();
  cusparseHandle_t handle = nullptr;
  LIB_CHECK(cusparseCreate(&handle));
  LIB_CHECK(cusparseSetStream(handle, stream));
  cusparseSpMatDescr_t matrix = nullptr;
  cusparseDnVecDescr_t x = nullptr, y = nullptr;
  LIB_CHECK(cusparseCreateCsr(&matrix, kN, kN, kN, d_offsets, d_columns, d_values, CUSPARSE_INDEX_32I,
                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  LIB_CHECK(cusparseCreateDnVec(&x, kN, d_x, CUDA_R_32F));
  LIB_CHECK(cusparseCreateDnVec(&y, kN, d_y, CUDA_R_32F));
  const float one = 1.0f, zero = 0.0f;
  size_t bytes = 0;
  LIB_CHECK(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix, x, &zero, y, CUDA_R_32F,
                                    CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
  void* buffer = nullptr;
  CHECK(cudaMalloc(&buffer, bytes > 0 ? bytes : 1));
  LIB_CHECK(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix, x, &zero, y, CUDA_R_32F,
                         CUSPARSE_SPMV_ALG_DEFAULT, buffer));  // warm-up
  CHECK(cudaStreamSynchronize(stream));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LIB_CHECK(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix, x, &zero, y, CUDA_R_32F,
                         CUSPARSE_SPMV_ALG_DEFAULT, buffer));
  end_and_replay(stream);

  LIB_CHECK(cusparseDestroySpMat(matrix));
  LIB_CHECK(cusparseDestroyDnVec(x));
  LIB_CHECK(cusparseDestroyDnVec(y));
  LIB_CHECK(cusparseDestroy(handle));
  for (void* p : {static_cast<void*>(d_offsets), static_cast<void*>(d_columns), static_cast<void*>(d_values),
                  static_cast<void*>(d_x), static_cast<void*>(d_y), buffer})
    CHECK(cudaFree(p));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
