// cuRAND generation captured correctly: the generator created, bound to the capturing stream and
// warmed up (its first call sets up its state) before the capture, then curandGenerateUniform
// inside a Global capture. capguard must report nothing.
#include <curand.h>

#include "libs/lib_common.h"

constexpr size_t kCount = 1 << 16;

int main() {
  float* data = device_floats(kCount, 0.0f);
  cudaStream_t stream = non_blocking_stream();
  curandGenerator_t generator = nullptr;
  LIB_CHECK(curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  LIB_CHECK(curandSetPseudoRandomGeneratorSeed(generator, 1234));
  LIB_CHECK(curandSetStream(generator, stream));
  LIB_CHECK(curandGenerateUniform(generator, data, kCount));  // warm-up
  CHECK(cudaStreamSynchronize(stream));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LIB_CHECK(curandGenerateUniform(generator, data, kCount));
  LIB_CHECK(curandGenerateNormal(generator, data, kCount, 0.0f, 1.0f));
  end_and_replay(stream);

  LIB_CHECK(curandDestroyGenerator(generator));
  CHECK(cudaFree(data));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
