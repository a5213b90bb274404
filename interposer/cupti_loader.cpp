#include "interposer/cupti_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "interposer/startup_times.h"

namespace capguard::interposer {
namespace {

constexpr char kLibrary[] = "libcupti.so.13";

// The normal search path first (and a copy already loaded, e.g. by PyTorch, by its soname),
// then the usual toolkit locations.
void* open_cupti() {
  if (void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_GLOBAL)) return lib;
  char path[4096];
  const char* roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  const char* subdirs[] = {"lib64", "extras/CUPTI/lib64", "lib", "targets/x86_64-linux/lib"};
  for (const char* root : roots) {
    if (root == nullptr || root[0] == '\0') continue;
    for (const char* sub : subdirs) {
      snprintf(path, sizeof(path), "%s/%s/%s", root, sub, kLibrary);
      if (void* lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL)) return lib;
    }
  }
  return nullptr;
}

const char* result_text(const CuptiApi& api, CUptiResult result) {
  const char* text = nullptr;
  if (api.get_result_string == nullptr || api.get_result_string(result, &text) != CUPTI_SUCCESS ||
      text == nullptr) {
    return "unknown CUPTI error";
  }
  return text;
}

// Who holds CUPTI, in words a user can act on: CUPTI's name for it (cuptiSubscribe_v2), else the
// NVIDIA tool whose launcher left its mark in the environment (kHolderMarks).
struct HolderMark {
  const char* variable_prefix;
  const char* tool;
};
constexpr HolderMark kHolderMarks[] = {
    {"NV_SANITIZER", "compute-sanitizer"},
    {"NSYS_", "Nsight Systems (nsys)"},
    {"NV_NSIGHT_COMPUTE", "Nsight Compute (ncu)"},
};

const char* holder_from_environment() {
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    for (const HolderMark& mark : kHolderMarks) {
      if (strncmp(*entry, mark.variable_prefix, strlen(mark.variable_prefix)) == 0)
        return mark.tool;
    }
  }
  return nullptr;
}

void describe_holder(const char* holder, char* why, size_t why_capacity) {
  // A holder that subscribed without a name is reported by CUPTI as "... <not provided>".
  const char* tool = holder[0] != '\0' && strstr(holder, "not provided") == nullptr
                         ? holder
                         : holder_from_environment();
  snprintf(why, why_capacity,
           "CUPTI is already in use by %s, and this CUPTI takes one subscriber: capguard cannot "
           "watch the same run. Run the two one after the other: `capguard run -- PROGRAM`, then "
           "the other tool on PROGRAM",
           tool != nullptr ? tool
                           : "another subscriber (a tool such as compute-sanitizer, Nsight "
                             "Systems or Nsight Compute)");
}

template <class Fn>
void find(void* lib, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(lib == RTLD_NEXT ? dlsym(RTLD_NEXT, name) : dlsym(lib, name));
}

void find_all(void* lib, CuptiCalls& calls) {
  find(lib, "cuptiSubscribe", calls.subscribe);
  find(lib, "cuptiSubscribe_v2", calls.subscribe_v2);
  find(lib, "cuptiUnsubscribe", calls.unsubscribe);
  find(lib, "cuptiEnableCallback", calls.enable_callback);
  find(lib, "cuptiEnableDomain", calls.enable_domain);
  find(lib, "cuptiEnableAllDomains", calls.enable_all_domains);
  find(lib, "cuptiGetCallbackState", calls.get_callback_state);
  find(lib, "cuptiFinalize", calls.finalize);
}

// CUPTI 13.2's CUpti_SubscriberParams: allowMultipleSubscribers follows oldSubscriberSize.
// CUPTI 13.0 refuses this size with CUPTI_ERROR_INVALID_PARAMETER (measured on the H100,
// libcupti 13.0.1): then we ask again with the struct it knows, and share by forwarding.
struct SubscriberParams132 {
  CUpti_SubscriberParams base;
  uint8_t allow_multiple_subscribers;
};
constexpr size_t kParams132Size =
    offsetof(SubscriberParams132, allow_multiple_subscribers) + sizeof(uint8_t);

}  // namespace

bool find_cupti_calls(CuptiCalls& calls) {
  find_all(RTLD_NEXT, calls);
  if (calls.subscribe != nullptr) return true;
  void* lib = open_cupti();
  if (lib == nullptr) return false;
  find_all(lib, calls);
  return calls.subscribe != nullptr;
}

bool attach_cupti(CUpti_CallbackFunc callback, void* userdata, CuptiApi& api, CallbackGate& gate,
                  bool all_callbacks, char* why, size_t why_capacity) {
  void* lib = open_cupti();
  startup::mark(startup::Phase::cupti_loaded);
  if (lib == nullptr) {
    snprintf(why, why_capacity,
             "%s not found (searched the library path, $CUDA_HOME and /usr/local/cuda); "
             "install CUPTI or add its directory to LD_LIBRARY_PATH",
             kLibrary);
    return false;
  }
  find_all(lib, api.calls);
  find(lib, "cuptiGetResultString", api.get_result_string);
  const CuptiCalls& calls = api.calls;
  if (calls.subscribe == nullptr || calls.enable_domain == nullptr) {
    snprintf(why, why_capacity, "%s lacks cuptiSubscribe/cuptiEnableDomain", kLibrary);
    return false;
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  // cuptiSubscribe_v2 shows a competing tool "CUPTI for capguard" and tells us who holds CUPTI
  // instead of leaving a guess.
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 4] = {};
  SubscriberParams132 params{};
  params.base.structSize = kParams132Size;
  params.base.subscriberName = "capguard";
  params.base.oldSubscriberName = holder;
  params.base.oldSubscriberSize = sizeof(holder);
  params.allow_multiple_subscribers = 1;
  ShareMode mode = ShareMode::Forward;
  CUptiResult subscribed = CUPTI_ERROR_INVALID_PARAMETER;
  if (calls.subscribe_v2 != nullptr) {
    subscribed = calls.subscribe_v2(&subscriber, &share_switchboard, userdata, &params.base);
    if (subscribed == CUPTI_SUCCESS) mode = ShareMode::Beside;
    if (subscribed == CUPTI_ERROR_INVALID_PARAMETER) {
      params.base.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
      subscribed = calls.subscribe_v2(&subscriber, &share_switchboard, userdata, &params.base);
    }
  } else {
    subscribed = calls.subscribe(&subscriber, &share_switchboard, userdata);
  }
  startup::mark(startup::Phase::subscribed);
  if (subscribed == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    holder[sizeof(holder) - 1] = '\0';
    describe_holder(holder, why, why_capacity);
    return false;
  }
  if (subscribed != CUPTI_SUCCESS) {
    snprintf(why, why_capacity, "cuptiSubscribe failed: %s", result_text(api, subscribed));
    return false;
  }
  share_attached(calls, subscriber, mode, callback);
  CuptiSwitches switches;
  switches.enable_domain = &share_own_enable_domain;
  // Without cuptiEnableCallback everything stays on.
  if (calls.enable_callback != nullptr) switches.enable_callback = &share_own_enable_callback;
  switches.subscriber = subscriber;
  gate.init(switches, all_callbacks);
  if (!gate.enable_reduced_set() && !gate.enable_everything()) {
    snprintf(why, why_capacity, "cuptiEnableDomain/cuptiEnableCallback failed");
    return false;
  }
  startup::mark(startup::Phase::callbacks_enabled);
  return true;
}

}  // namespace capguard::interposer
