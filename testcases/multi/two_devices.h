// Shared by the two-GPU programs: skip (exit 0, saying why) where fewer than two devices exist.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "common.h"

inline void require_two_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) {
    std::printf("SKIP: needs 2 GPUs, found %d\n", count);
    std::exit(0);
  }
}

// A device buffer for bump() on `device`, with the kernel loaded there before any capture.
inline int* warm_buffer_on(int device) {
  CHECK(cudaSetDevice(device));
  int* data = device_buffer();
  BumpArgs args(data);
  warm_up(args);
  return data;
}
