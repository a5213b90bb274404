#include "interposer/cupti_loader.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <cstdlib>

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

}  // namespace

bool attach_cupti(CUpti_CallbackFunc callback, void* userdata, CuptiApi& api, CallbackGate& gate,
                  bool all_callbacks, char* why, size_t why_capacity) {
  void* lib = open_cupti();
  if (lib == nullptr) {
    snprintf(why, why_capacity,
             "%s not found (searched the library path, $CUDA_HOME and /usr/local/cuda); "
             "install CUPTI or add its directory to LD_LIBRARY_PATH",
             kLibrary);
    return false;
  }
  api.subscribe = reinterpret_cast<decltype(api.subscribe)>(dlsym(lib, "cuptiSubscribe"));
  api.subscribe_v2 = reinterpret_cast<decltype(api.subscribe_v2)>(dlsym(lib, "cuptiSubscribe_v2"));
  api.enable_domain =
      reinterpret_cast<decltype(api.enable_domain)>(dlsym(lib, "cuptiEnableDomain"));
  api.enable_callback =
      reinterpret_cast<decltype(api.enable_callback)>(dlsym(lib, "cuptiEnableCallback"));
  api.get_result_string =
      reinterpret_cast<decltype(api.get_result_string)>(dlsym(lib, "cuptiGetResultString"));
  if (api.subscribe == nullptr || api.enable_domain == nullptr) {
    snprintf(why, why_capacity, "%s lacks cuptiSubscribe/cuptiEnableDomain", kLibrary);
    return false;
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  // cuptiSubscribe_v2 shows a competing tool "CUPTI for capguard" and tells us who holds CUPTI
  // instead of leaving a guess.
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 4] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "capguard";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof(holder);
  const CUptiResult subscribed = api.subscribe_v2 != nullptr
                                     ? api.subscribe_v2(&subscriber, callback, userdata, &params)
                                     : api.subscribe(&subscriber, callback, userdata);
  if (subscribed == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    holder[sizeof(holder) - 1] = '\0';
    // A holder that subscribed without a name is reported by CUPTI as "... <not provided>".
    if (holder[0] != '\0' && strstr(holder, "not provided") == nullptr) {
      snprintf(why, why_capacity, "CUPTI is already in use by another subscriber: %s", holder);
    } else {
      snprintf(why, why_capacity,
               "CUPTI is already in use by another subscriber (a profiler such as Nsight "
               "Systems or PyTorch's profiler)");
    }
    return false;
  }
  if (subscribed != CUPTI_SUCCESS) {
    snprintf(why, why_capacity, "cuptiSubscribe failed: %s", result_text(api, subscribed));
    return false;
  }
  CuptiSwitches switches;
  switches.enable_domain = api.enable_domain;
  switches.enable_callback = api.enable_callback;  // may be null: then everything stays on
  switches.subscriber = subscriber;
  gate.init(switches, all_callbacks);
  if (!gate.enable_reduced_set() && !gate.enable_everything()) {
    snprintf(why, why_capacity, "cuptiEnableDomain/cuptiEnableCallback failed");
    return false;
  }
  return true;
}

}  // namespace capguard::interposer
