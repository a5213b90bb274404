// Sharing CUPTI with the program's own CUPTI client: torch.profiler (kineto), a CuPy or Numba
// profiler, a user's callbacks. CUPTI 13.0 takes one subscriber, and capguard subscribes first:
// a later cuptiSubscribe fails (measured on the H100: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_-
// SUPPORTED, and kineto then records no kernel events at all). So libcapguard.so, preloaded,
// defines CUPTI's subscription calls (cupti_exports.cpp) and answers them here:
//
// - Forward (CUPTI without a multi-subscriber mode): the client gets a handle of capguard's; a
//   callback it enables is switched on in capguard's subscription too, and capguard's callback
//   hands it on before capguard looks at it. capguard itself still sees only the callbacks its
//   gate enabled, so its recording does not change. One client at a time, as CUPTI allows.
// - Beside (CUPTI 13.2's allowMultipleSubscribers accepted): the client's calls go to CUPTI.
// - Off (capguard did not attach, or CAPGUARD_CUPTI_SHARE=0): everything goes to CUPTI.
//
// A client's cuptiFinalize would end capguard's subscription too: it ends the client's only.
// The client's subscribing, leaving and finalizing are written to the trace ('k' records).
#pragma once

#include <cupti.h>

#include <cstdint>

#include "trace/format.h"

namespace capguard::interposer {

// CUPTI's own entry points, never the definitions in cupti_exports.cpp.
struct CuptiCalls {
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiSubscribe_v2) subscribe_v2 = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
  decltype(&cuptiEnableDomain) enable_domain = nullptr;
  decltype(&cuptiEnableAllDomains) enable_all_domains = nullptr;
  decltype(&cuptiGetCallbackState) get_callback_state = nullptr;
  decltype(&cuptiFinalize) finalize = nullptr;
};

enum class ShareMode : uint8_t { Off, Forward, Beside };

struct ShareHooks {
  // Subscribes capguard now, if it is to subscribe at all and has not yet (a client that comes
  // before cuInit must not take CUPTI from under it), or again if it detached while idle.
  void (*attach_now)() = nullptr;
  // Attaches CUPTI again if it was detached while idle (idle_detach.h), nothing more: the
  // activity API's calls must not make capguard attach before cuInit.
  void (*attach_if_detached)() = nullptr;
  void (*note)(trace::CuptiClientEvent what, const char* name) = nullptr;  // a 'k' record
  // CUPTI's entry points for calls that go straight through (Off), found when first needed
  // (null: cupti_loader.h's find_cupti_calls).
  bool (*find_cupti)(CuptiCalls& calls) = nullptr;
};

void share_set_hooks(const ShareHooks& hooks);

// capguard subscribed `own` with share_switchboard, whose calls go on to `inner`.
void share_attached(const CuptiCalls& cupti, CUpti_SubscriberHandle own, ShareMode mode,
                    CUpti_CallbackFunc inner);
ShareMode share_mode();

// The callback capguard subscribes with.
void CUPTIAPI share_switchboard(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void* data);

// capguard's own switches (the gate's CuptiSwitches): a client's callbacks stay on.
CUptiResult share_own_enable_domain(uint32_t enable, CUpti_SubscriberHandle own,
                                    CUpti_CallbackDomain domain);
CUptiResult share_own_enable_callback(uint32_t enable, CUpti_SubscriberHandle own,
                                      CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

// At process exit: notes 'lost' when capguard's subscription is gone (CUPTI was finalized by a
// call that did not come through here, e.g. one found with dlsym on libcupti's own handle).
void share_check_alive();

// The program calls CUPTI itself (a subscription, or the activity API: a client capguard's
// finalize would end): CUPTI never detaches while idle again (idle_detach.h), and is attached
// again now if it was (ShareHooks::attach_if_detached).
void share_note_program_use();
bool share_program_uses_cupti();

// The program's calls (cupti_exports.cpp). `v2`: cuptiSubscribe_v2 (params may be null);
// `caller`: the return address, to name the client.
CUptiResult share_subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                            void* userdata, CUpti_SubscriberParams* params, bool v2,
                            const void* caller);
CUptiResult share_unsubscribe(CUpti_SubscriberHandle subscriber);
CUptiResult share_enable_callback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                  CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
CUptiResult share_enable_domain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                CUpti_CallbackDomain domain);
CUptiResult share_enable_all_domains(uint32_t enable, CUpti_SubscriberHandle subscriber);
CUptiResult share_get_callback_state(uint32_t* enable, CUpti_SubscriberHandle subscriber,
                                     CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
CUptiResult share_finalize();

// Forgets everything (the unit tests).
void share_reset_for_tests();

}  // namespace capguard::interposer
