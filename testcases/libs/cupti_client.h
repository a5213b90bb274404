// A program's own CUPTI client, as a profiler would write one: it subscribes, enables callbacks
// and counts them, and says whether it got exactly what it enabled. Natively it does; under
// capguard it must too (capguard shares CUPTI with it, cupti_share.h). Used by the cupti_client_*
// testcases, which exit 1 when a count is off, so the testcase checker fails them.
#pragma once

#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "libs/lib_common.h"

class CuptiClient {
 public:
  bool subscribe() {
    const CUptiResult result = cuptiSubscribe(&subscriber_, &CuptiClient::callback, this);
    std::printf("client: cuptiSubscribe -> %d\n", static_cast<int>(result));
    return result == CUPTI_SUCCESS;
  }
  // A second subscriber: CUPTI 13.0 takes one, so this is refused, natively as under capguard.
  static void try_second() {
    CUpti_SubscriberHandle second = nullptr;
    const CUptiResult result = cuptiSubscribe(&second, &CuptiClient::callback, nullptr);
    std::printf("client: second cuptiSubscribe -> %d\n", static_cast<int>(result));
    if (result == CUPTI_SUCCESS) cuptiUnsubscribe(second);
  }
  void enable_launches(bool on) {
    LIB_CHECK(cuptiEnableCallback(on, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                                  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  }
  void enable_runtime(bool on) {
    LIB_CHECK(cuptiEnableDomain(on, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API));
  }
  void unsubscribe() { LIB_CHECK(cuptiUnsubscribe(subscriber_)); }

  // Each call counted twice (enter and exit); false, with what differs, when a count is off.
  bool expect(const char* phase, int launches, int syncs) {
    const int got_launches = launches_.exchange(0), got_syncs = syncs_.exchange(0);
    std::printf("client: %s: %d launch and %d synchronize callbacks (expected %d and %d)\n", phase,
                got_launches, got_syncs, 2 * launches, 2 * syncs);
    return got_launches == 2 * launches && got_syncs == 2 * syncs;
  }

 private:
  static void CUPTIAPI callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void*) {
    if (self == nullptr || domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
    auto* client = static_cast<CuptiClient*>(self);
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) ++client->launches_;
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020) ++client->syncs_;
  }

  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::atomic<int> launches_{0}, syncs_{0};
};

// Past capguard's linger (20 ms), so that its callbacks are reduced again before what follows.
inline void pause_past_linger() { std::this_thread::sleep_for(std::chrono::milliseconds(60)); }
