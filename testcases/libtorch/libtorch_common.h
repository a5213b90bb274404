// Shared by the LibTorch programs (built on the GPU machine against pip torch's headers and
// libraries by scripts/gpu_libtorch.sh): a captured region on a side stream, the way
// torch.cuda.graph does it, with errors printed rather than raised (mistakes are intentional).
#pragma once

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/torch.h>

#include <cstdio>
#include <exception>

template <typename Body>
void guarded(const char* what, Body body) {
  try {
    body();
    std::printf("%s: ok\n", what);
  } catch (const std::exception& error) {
    std::printf("%s: %s\n", what, error.what());
  }
  std::fflush(stdout);
}
