// A program with its own CUPTI client, linked against tests/fake_cupti's libcupti.so.13: it
// sets up activity buffers, subscribes, enables an NVTX callback, is played three of them, tries a
// second subscriber, and ends with cuptiFinalize, or, with "behind-back", finalizes through
// libcupti's own handle (a call capguard cannot intercept). Prints what it got; exits 1 if it is
// not what CUPTI gives a lone client (so natively and under capguard alike it must exit 0).
#include <cupti.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

extern "C" void fake_cupti_fire(CUpti_CallbackDomain d, CUpti_CallbackId cbid);
extern "C" bool fake_cupti_finalized();
extern "C" int fake_cupti_activity_calls();

namespace {
int g_calls = 0;
void CUPTIAPI count(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) { ++g_calls; }
void CUPTIAPI request(uint8_t**, size_t*, size_t*) {}
void CUPTIAPI complete(CUcontext, uint32_t, uint8_t*, size_t, size_t) {}
}  // namespace

int main(int argc, char** argv) {
  const bool behind_back = argc > 1 && strcmp(argv[1], "behind-back") == 0;
  // The activity API first, as a profiler sets up its buffers: it reaches CUPTI unchanged.
  bool activity_ok = cuptiActivityRegisterCallbacks(&request, &complete) == CUPTI_SUCCESS;
  activity_ok &= cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
  activity_ok &= cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_ERROR_INVALID_KIND;
  std::printf("activity calls that reached CUPTI: %d (expected 2)\n", fake_cupti_activity_calls());
  activity_ok &= fake_cupti_activity_calls() == 2;
  CUpti_SubscriberHandle client = nullptr, second = nullptr;
  const CUptiResult subscribed = cuptiSubscribe(&client, &count, nullptr);
  std::printf("subscribe -> %d\n", subscribed);
  if (subscribed != CUPTI_SUCCESS) return 2;  // CUPTI held by a tool: as natively
  bool ok = activity_ok && cuptiEnableCallback(1, client, CUPTI_CB_DOMAIN_NVTX, 5) == CUPTI_SUCCESS;
  for (int i = 0; i < 3; ++i) fake_cupti_fire(CUPTI_CB_DOMAIN_NVTX, 5);
  fake_cupti_fire(CUPTI_CB_DOMAIN_NVTX, 6);  // not enabled
  std::printf("callbacks: %d (expected 3)\n", g_calls);
  ok &= g_calls == 3;
  const CUptiResult again = cuptiSubscribe(&second, &count, nullptr);
  std::printf("second subscribe -> %d (expected %d)\n", again,
              CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  ok &= again == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  ok &= cuptiUnsubscribe(client) == CUPTI_SUCCESS;
  if (behind_back) {
    void* cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    auto finalize =
        reinterpret_cast<CUptiResult (*)()>(cupti ? dlsym(cupti, "cuptiFinalize") : nullptr);
    ok &= finalize != nullptr && finalize() == CUPTI_SUCCESS;
  } else {
    ok &= cuptiFinalize() == CUPTI_SUCCESS;
  }
  std::printf("%s\n", ok ? "client: as expected" : "client: NOT AS EXPECTED");
  return ok ? 0 : 1;
}
