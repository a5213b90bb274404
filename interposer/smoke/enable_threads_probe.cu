// Probe: CUPTI callbacks switched off while a worker thread calls the API all along. Which ways
// of switching a callback off can be undone later? Prints the worker's callbacks per phase.
// Measured on CUDA 13.0 / driver 580 (docs/measured.md): a callback that cuptiEnableCallback(0)
// switched off from inside its own EXIT callback never comes back, whatever is enabled later.
#include <cuda_runtime.h>
#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

std::atomic<int> g_seen{0};
std::atomic<bool> g_stop{false};
CUpti_SubscriberHandle g_sub;
constexpr auto kRt = CUPTI_CB_DOMAIN_RUNTIME_API;
constexpr CUpti_CallbackId kQuery = CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020;
constexpr CUpti_CallbackId kTrigger = CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020;
std::function<void()> g_in_trigger;                    // run inside the main thread's callback
std::atomic<std::function<void()>*> g_in_worker_exit{nullptr};  // run inside the worker's EXIT

void CUPTIAPI count(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const auto* d = static_cast<const CUpti_CallbackData*>(data);
  if (domain != kRt) return;
  if (cbid == kQuery && d->callbackSite == CUPTI_API_EXIT) {
    if (auto* f = g_in_worker_exit.exchange(nullptr)) (*f)();
  }
  if (d->callbackSite != CUPTI_API_ENTER) return;
  if (cbid == kQuery) ++g_seen;
  if (cbid == kTrigger && g_in_trigger) {
    g_in_trigger();
    g_in_trigger = nullptr;
  }
}

void window(const char* what) {
  const int before = g_seen.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  std::printf("  %-60s worker callbacks: %d\n", what, g_seen.load() - before);
}

void in_trigger(std::function<void()> f) {
  g_in_trigger = std::move(f);
  cudaDeviceSynchronize();
}
void in_worker_exit(std::function<void()> f) {
  static std::function<void()> held;
  held = std::move(f);
  g_in_worker_exit = &held;
  while (g_in_worker_exit.load() != nullptr) std::this_thread::yield();
}

void reduce() {  // everything off, then the reduced set (the trigger) on
  cuptiEnableDomain(0, g_sub, kRt);
  cuptiEnableCallback(1, g_sub, kRt, kTrigger);
}
void full() { cuptiEnableDomain(1, g_sub, kRt); }

void trial(const char* name, std::function<void()> switch_off) {
  std::printf("%s\n", name);
  in_trigger(full);
  window("all on");
  switch_off();
  window("switched off");
  in_trigger(full);
  window("domain enabled inside a callback");
}

int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  cudaFree(nullptr);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cuptiSubscribe(&g_sub, &count, nullptr);
  cuptiEnableCallback(1, g_sub, kRt, kTrigger);
  std::thread worker([&] { while (!g_stop) cudaStreamQuery(s); });
  trial("A: domain off + reduced set, inside the main thread's callback", [] { in_trigger(reduce); });
  trial("B: the one callback off, inside the main thread's callback",
        [] { in_trigger([] { cuptiEnableCallback(0, g_sub, kRt, kQuery); }); });
  trial("C: domain off + reduced set, inside the worker's EXIT of that call",
        [] { in_worker_exit(reduce); });
  trial("D: the one callback off, inside the worker's EXIT of that call",
        [] { in_worker_exit([] { cuptiEnableCallback(0, g_sub, kRt, kQuery); }); });
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) in_trigger([] { reduce(); full(); });
  std::printf("reduce + full inside a callback: %.1f us per pair\n",
              std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / 100);
  g_stop = true;
  worker.join();
  return 0;
}
