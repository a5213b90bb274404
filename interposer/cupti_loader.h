// Finds libcupti at run time (no link-time dependency: libcapguard.so must load in any
// process) and subscribes to it, or says in words why it could not.
#pragma once

#include <cupti.h>

#include <cstddef>

#include "interposer/callback_gate.h"

namespace capguard::interposer {

struct CuptiApi {
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiSubscribe_v2) subscribe_v2 = nullptr;  // CUDA 13: names us, and who holds CUPTI
  decltype(&cuptiEnableDomain) enable_domain = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
  decltype(&cuptiGetResultString) get_result_string = nullptr;
};

// Loads CUPTI, subscribes callback (with userdata) and hands the switches to gate, which
// enables the reduced set of runtime and driver API callbacks (every callback if all_callbacks).
// On failure returns false and writes a reason a user can act on into why.
bool attach_cupti(CUpti_CallbackFunc callback, void* userdata, CuptiApi& api, CallbackGate& gate,
                  bool all_callbacks, char* why, size_t why_capacity);

}  // namespace capguard::interposer
