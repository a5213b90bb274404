// sync-during-capture on eight worker threads at once, after the callback gate has switched the
// launch callbacks on and off forty times while those threads were launching. A worker inside a
// cudaLaunchKernel whose callback goes off never gets that call's EXIT; capguard must still see
// each worker's later capture and the synchronize CUDA rejects in it (900, capture invalidated).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common.h"

constexpr int kWorkers = 8;
constexpr int kChurnCaptures = 40;

std::atomic<bool> g_churning{true};

void worker(int* data) {
  BumpArgs args(data);
  cudaStream_t stream = non_blocking_stream();
  // Launch nonstop while the other thread's captures switch the callbacks, gently enough that
  // the queue stays short (a sync every 32 launches, a short pause each time).
  for (int i = 0; g_churning.load(); ++i) {
    cudaLaunchKernel((const void*)bump, dim3(1), dim3(kThreads), args.argv, 0, stream);
    if (i % 32 == 31) {
      cudaStreamSynchronize(stream);
      usleep(100);
    }
  }
  cudaStreamSynchronize(stream);

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamSynchronize(stream));  // expect: sync-during-capture*8
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  CHECK(cudaStreamDestroy(stream));
}

int main() {
  std::vector<int*> buffers;
  for (int i = 0; i < kWorkers + 1; ++i) buffers.push_back(device_buffer());
  BumpArgs args(buffers.back());
  warm_up(args);

  std::vector<std::thread> workers;
  for (int i = 0; i < kWorkers; ++i) workers.emplace_back(worker, buffers[i]);

  // A 9th thread's correct captures: each turns every callback on, and 30 ms after its end the
  // gate lets them go again while the workers are inside their launches.
  cudaStream_t stream = non_blocking_stream();
  for (int i = 0; i < kChurnCaptures; ++i) {
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    cudaLaunchKernel((const void*)bump, dim3(1), dim3(kThreads), args.argv, 0, stream);
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture(stream, &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  g_churning.store(false);
  for (auto& t : workers) t.join();
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
