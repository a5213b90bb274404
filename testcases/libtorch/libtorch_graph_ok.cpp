// A LibTorch C++ program capturing a small model step in an at::cuda::CUDAGraph, done right:
// warm-up iterations first (cuBLAS handles, the caching allocator's blocks), the capture on a
// side stream, static inputs refreshed between replays. capguard must report nothing.
#include "libtorch_common.h"

int main() {
  torch::manual_seed(0);
  torch::nn::Sequential model(torch::nn::Linear(64, 128), torch::nn::ReLU(), torch::nn::Linear(128, 8));
  model->to(torch::kCUDA);
  auto static_x = torch::randn({32, 64}, torch::kCUDA);
  torch::Tensor static_y;

  auto stream = c10::cuda::getStreamFromPool();
  at::cuda::CUDAGraph graph;
  {
    c10::cuda::CUDAStreamGuard guard(stream);
    for (int i = 0; i < 3; ++i) static_y = model->forward(static_x).relu();
    stream.synchronize();
    guarded("capture", [&] {
      graph.capture_begin();
      static_y = model->forward(static_x).relu();
      graph.capture_end();
    });
  }
  for (int i = 0; i < 5; ++i) {
    static_x.copy_(torch::randn({32, 64}, torch::kCUDA));
    graph.replay();
  }
  torch::cuda::synchronize();
  std::printf("y[0][0] after replays: %f\n", static_y[0][0].item<float>());
  return 0;
}
