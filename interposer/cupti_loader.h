// Finds libcupti at run time (no link-time dependency: libcapguard.so must load in any
// process) and subscribes to it, or says in words why it could not.
#pragma once

#include <cupti.h>

#include <cstddef>

#include "interposer/callback_gate.h"
#include "interposer/cuda_versions.h"
#include "interposer/cupti_share.h"

namespace capguard::interposer {

struct CuptiApi {
  CuptiCalls calls;  // subscribe_v2 (CUDA 13) names us, and who holds CUPTI
  decltype(&cuptiGetResultString) get_result_string = nullptr;
};

// Loads the CUPTI of the program's CUDA major (cuda_versions.h; CAPGUARD_CUPTI names one
// explicitly), selects that major's API table, subscribes callback (with userdata) through
// cupti_share.h's switchboard, asking CUPTI to allow further subscribers where it can, and hands
// the switches to gate, which enables the reduced set of runtime and driver API callbacks (every
// callback if all_callbacks). On failure returns false and writes a reason a user can act on into
// why. versions gets what was found (runtime, driver, CUPTI), also on failure.
bool attach_cupti(CUpti_CallbackFunc callback, void* userdata, CuptiApi& api, CallbackGate& gate,
                  bool all_callbacks, CudaVersions& versions, char* why, size_t why_capacity);

// CUPTI detached while idle (idle_detach.h): capguard's subscription ended and CUPTI finalized
// under the gate's lock; false (still attached) when CUPTI refused either.
bool detach_cupti(CUpti_CallbackFunc callback, void* userdata, const CuptiApi& api,
                  CallbackGate& gate);
// Subscribed again as attach_cupti did, the reduced set enabled on the new subscription.
bool reattach_cupti(CUpti_CallbackFunc callback, void* userdata, const CuptiApi& api,
                    CallbackGate& gate);

// CUPTI's entry points for the program's calls that go straight through: the libcupti the
// program would have called (the next definition after libcapguard.so), else the one
// attach_cupti loads.
bool find_cupti_calls(CuptiCalls& calls);

}  // namespace capguard::interposer
