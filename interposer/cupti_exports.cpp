// CUPTI's subscription calls, defined by libcapguard.so so that the program's own CUPTI client
// (preloaded first, these are the definitions its calls bind to) shares capguard's subscription
// instead of being refused: cupti_share.h. Only in the shared library: the unit tests and the
// analyzer must keep calling the real ones.
#include <cupti.h>
#include <dlfcn.h>

#include "interposer/cupti_share.h"

namespace share = capguard::interposer;

#define CAPGUARD_EXPORT extern "C" __attribute__((visibility("default")))

CAPGUARD_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber,
                                           CUpti_CallbackFunc callback, void* userdata) {
  return share::share_subscribe(subscriber, callback, userdata, nullptr, false,
                                __builtin_return_address(0));
}

CAPGUARD_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber,
                                              CUpti_CallbackFunc callback, void* userdata,
                                              CUpti_SubscriberParams* params) {
  return share::share_subscribe(subscriber, callback, userdata, params, true,
                                __builtin_return_address(0));
}

CAPGUARD_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  return share::share_unsubscribe(subscriber);
}

CAPGUARD_EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                                CUpti_CallbackDomain domain,
                                                CUpti_CallbackId cbid) {
  return share::share_enable_callback(enable, subscriber, domain, cbid);
}

CAPGUARD_EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                              CUpti_CallbackDomain domain) {
  return share::share_enable_domain(enable, subscriber, domain);
}

CAPGUARD_EXPORT CUptiResult cuptiEnableAllDomains(uint32_t enable,
                                                  CUpti_SubscriberHandle subscriber) {
  return share::share_enable_all_domains(enable, subscriber);
}

CAPGUARD_EXPORT CUptiResult cuptiGetCallbackState(uint32_t* enable,
                                                  CUpti_SubscriberHandle subscriber,
                                                  CUpti_CallbackDomain domain,
                                                  CUpti_CallbackId cbid) {
  return share::share_get_callback_state(enable, subscriber, domain, cbid);
}

CAPGUARD_EXPORT CUptiResult cuptiFinalize(void) { return share::share_finalize(); }

// The activity, profiler and PC sampling APIs need no subscription, and a finalize would end
// them: capguard notes that the program uses CUPTI (it then never detaches CUPTI while idle)
// and passes the call on to the libcupti the program would have called.
#define CAPGUARD_CUPTI_USE(function, params, args)                                           \
  CAPGUARD_EXPORT CUptiResult function params {                                              \
    share::share_note_program_use();                                                         \
    static auto next = reinterpret_cast<decltype(&::function)>(dlsym(RTLD_NEXT, #function)); \
    return next != nullptr ? next args : CUPTI_ERROR_NOT_INITIALIZED;                        \
  }
CAPGUARD_CUPTI_USE(cuptiActivityRegisterCallbacks,
                   (CUpti_BuffersCallbackRequestFunc request,
                    CUpti_BuffersCallbackCompleteFunc complete),
                   (request, complete))
CAPGUARD_CUPTI_USE(cuptiActivityEnable, (CUpti_ActivityKind kind), (kind))
