// A CPU-only stand-in for libcupti.so.13 (no GPU, no driver), for tests/cupti_share_test.sh: the
// subscription calls with CUPTI 13.0's behaviour, measured on the H100 (one subscriber; a
// CUpti_SubscriberParams larger than 13.0's is refused with CUPTI_ERROR_INVALID_PARAMETER), or,
// with FAKE_CUPTI=multi, CUPTI 13.2's multi-subscriber mode, or with FAKE_CUPTI=held, a CUPTI
// another tool holds ("CUPTI for compute-sanitizer"). fake_cupti_fire() plays a callback.
#include <cupti.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kMaxSubscribers = 4;
constexpr size_t kSize130 = CUpti_SubscriberParams_STRUCT_SIZE;

struct Subscriber {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  bool allows_others = false;  // asked for allowMultipleSubscribers (multi mode)
  bool on[8][1024] = {};
};
Subscriber g_subscribers[kMaxSubscribers];
int g_count = 0;
bool g_finalized = false;

const char* mode() {
  const char* m = getenv("FAKE_CUPTI");
  return m != nullptr ? m : "13.0";
}
Subscriber* find(CUpti_SubscriberHandle h) {
  for (int i = 0; i < g_count; ++i)
    if (reinterpret_cast<CUpti_SubscriberHandle>(&g_subscribers[i]) == h) return &g_subscribers[i];
  return nullptr;
}

}  // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT CUptiResult cuptiGetResultString(CUptiResult, const char** text) {
  *text = "fake CUPTI result";
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* h, CUpti_CallbackFunc f, void* u,
                                     CUpti_SubscriberParams* params) {
  const bool multi = strcmp(mode(), "multi") == 0;
  if (params != nullptr && params->structSize > kSize130 && !multi)
    return CUPTI_ERROR_INVALID_PARAMETER;
  // 13.2's flag, the byte after 13.0's struct: a subscriber that did not ask keeps others out.
  const bool allows_others = multi && params != nullptr && params->structSize > kSize130 &&
                             reinterpret_cast<const uint8_t*>(params)[kSize130] != 0;
  bool others_allowed = multi;
  for (int i = 0; i < g_count; ++i) others_allowed &= g_subscribers[i].allows_others;
  const bool held = strcmp(mode(), "held") == 0;
  if (held || (g_count > 0 && !others_allowed) || g_count == kMaxSubscribers) {
    if (params != nullptr && params->oldSubscriberName != nullptr)
      snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s",
               held ? "CUPTI for compute-sanitizer" : "CUPTI for the first");
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  g_subscribers[g_count] = Subscriber{f, u, allows_others};
  *h = reinterpret_cast<CUpti_SubscriberHandle>(&g_subscribers[g_count++]);
  g_finalized = false;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* h, CUpti_CallbackFunc f, void* u) {
  return cuptiSubscribe_v2(h, f, u, nullptr);
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h) {
  Subscriber* s = find(h);
  if (s == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  s->callback = nullptr;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t e, CUpti_SubscriberHandle h, CUpti_CallbackDomain d,
                                       CUpti_CallbackId cbid) {
  Subscriber* s = find(h);
  if (s == nullptr || d >= 8 || cbid >= 1024 || g_finalized) return CUPTI_ERROR_INVALID_PARAMETER;
  s->on[d][cbid] = e != 0;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableDomain(uint32_t e, CUpti_SubscriberHandle h, CUpti_CallbackDomain d) {
  for (CUpti_CallbackId cbid = 0; cbid < 1024; ++cbid) {
    if (CUptiResult r = cuptiEnableCallback(e, h, d, cbid); r != CUPTI_SUCCESS) return r;
  }
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableAllDomains(uint32_t e, CUpti_SubscriberHandle h) {
  for (int d = 1; d < CUPTI_CB_DOMAIN_SIZE; ++d) {
    if (CUptiResult r = cuptiEnableDomain(e, h, static_cast<CUpti_CallbackDomain>(d));
        r != CUPTI_SUCCESS)
      return r;
  }
  return CUPTI_SUCCESS;
}

// As measured after cuptiFinalize: CUPTI_ERROR_INVALID_PARAMETER for the old handle.
EXPORT CUptiResult cuptiGetCallbackState(uint32_t* e, CUpti_SubscriberHandle h,
                                         CUpti_CallbackDomain d, CUpti_CallbackId cbid) {
  Subscriber* s = find(h);
  if (s == nullptr || g_finalized || d >= 8 || cbid >= 1024) return CUPTI_ERROR_INVALID_PARAMETER;
  *e = s->on[d][cbid];
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiFinalize() {
  g_finalized = true;
  g_count = 0;
  return CUPTI_SUCCESS;
}

// Plays one callback of (domain, cbid) to every subscriber that has it on.
EXPORT void fake_cupti_fire(CUpti_CallbackDomain d, CUpti_CallbackId cbid) {
  for (int i = 0; i < g_count; ++i) {
    const Subscriber& s = g_subscribers[i];
    if (!g_finalized && s.callback != nullptr && s.on[d][cbid])
      s.callback(s.userdata, d, cbid, nullptr);
  }
}
EXPORT bool fake_cupti_finalized() { return g_finalized; }

// The activity API: no subscription, counted (libcapguard.so defines both to note that the
// program uses CUPTI, and must pass them on).
int g_activity_calls = 0;
EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                  CUpti_BuffersCallbackCompleteFunc complete) {
  if (request == nullptr || complete == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  ++g_activity_calls;
  return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) return CUPTI_ERROR_INVALID_KIND;
  ++g_activity_calls;
  return CUPTI_SUCCESS;
}
EXPORT int fake_cupti_activity_calls() { return g_activity_calls; }
