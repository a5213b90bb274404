// Finds libcupti at run time (no link-time dependency: libcapguard.so must load in any
// process) and subscribes to it, or says in words why it could not.
#pragma once

#include <cupti.h>

#include <cstddef>

namespace capguard::interposer {

struct CuptiApi {
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiEnableDomain) enable_domain = nullptr;
  decltype(&cuptiGetResultString) get_result_string = nullptr;
};

// Loads CUPTI and subscribes callback (with userdata) to the runtime and driver API domains. On
// failure returns false and writes a reason a user can act on into why.
bool attach_cupti(CUpti_CallbackFunc callback, void* userdata, CuptiApi& api, char* why,
                  size_t why_capacity);

}  // namespace capguard::interposer
