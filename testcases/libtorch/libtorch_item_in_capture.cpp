// A LibTorch C++ program calls .item() inside an at::cuda::CUDAGraph capture: a device-to-host
// copy plus a synchronize of the capturing stream, which CUDA rejects (900); LibTorch throws, and
// capture_end reports the consequence. The culprit is the program's .item() line, with
// LibTorch's frames shown as the way there. Twin: libtorch_graph_ok.
#include "libtorch_common.h"

int main() {
  auto x = torch::ones({16}, torch::kCUDA);
  auto y = x * 2;  // warm-up: the kernel and the allocator's block exist before the capture
  torch::cuda::synchronize();

  auto stream = c10::cuda::getStreamFromPool();
  at::cuda::CUDAGraph graph;
  c10::cuda::CUDAStreamGuard guard(stream);
  graph.capture_begin();
  guarded("captured step", [&] {
    y = x * 2;
    if (y.sum().item<float>() > 0) y += 1;  // expect: sync-during-capture
  });
  guarded("capture_end", [&] { graph.capture_end(); });
  return 0;
}
