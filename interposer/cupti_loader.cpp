#include "interposer/cupti_loader.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "interposer/api_table.h"
#include "interposer/startup_times.h"

namespace capguard::interposer {
namespace {

// The toolkit's per-target library directory: x86_64-linux, or sbsa-linux on aarch64 servers
// (Grace), the layout CUDA's SBSA packages install.
#if defined(__aarch64__)
constexpr const char* kCudaTargetLibDir = "targets/sbsa-linux/lib";
#else
constexpr const char* kCudaTargetLibDir = "targets/x86_64-linux/lib";
#endif

// Where a CUPTI of one major is looked for, in order: the path CAPGUARD_CUPTI names;
// one the program already loaded (PyTorch's profiler); beside the program's libcudart (PyPI's
// nvidia/cuda_runtime/lib next to nvidia/cuda_cupti/lib, a toolkit's lib64 next to
// extras/CUPTI/lib64); the loader's search path; then CUDA_HOME, CUDA_PATH, /usr/local/cuda-N
// and /usr/local/cuda. Every place tried is kept for the message when none is found.
struct Search {
  char library[32];  // libcupti.so.N
  char tried[1536];
  size_t used = 0;

  void note(const char* place) {
    if (used + 2 >= sizeof(tried)) return;
    const int n = snprintf(tried + used, sizeof(tried) - used, "%s%s", used ? ", " : "", place);
    if (n > 0) used = std::min(sizeof(tried) - 1, used + static_cast<size_t>(n));
  }
  void* open_in(const char* dir, const char* sub) {
    char path[1024];
    snprintf(path, sizeof(path), "%s%s%s/%s", dir, sub[0] ? "/" : "", sub, library);
    if (access(path, F_OK) != 0) {
      note(path);
      return nullptr;
    }
    void* lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) note(path);
    return lib;
  }
};

void* open_cupti_major(int major, const CudaVersions& versions, Search& search) {
  snprintf(search.library, sizeof(search.library), "libcupti.so.%d", major);
  if (const char* chosen = getenv("CAPGUARD_CUPTI"); chosen != nullptr && chosen[0] != '\0') {
    // A path is loaded only as a regular file (a FIFO hung dlopen, and the program
    // with it); a name without '/' is the loader's to search.
    struct stat st;
    const bool path = strchr(chosen, '/') != nullptr;
    void* lib = !path || (stat(chosen, &st) == 0 && S_ISREG(st.st_mode))
                    ? dlopen(chosen, RTLD_NOW | RTLD_GLOBAL)
                    : nullptr;
    search.note(chosen);
    return lib;  // the user's choice, or nothing: no silent second guess
  }
  if (void* lib = dlopen(search.library, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD)) return lib;
  if (versions.linkage == RuntimeLinkage::shared && versions.runtime / 1000 == major) {
    char dir[512];
    snprintf(dir, sizeof(dir), "%s", versions.runtime_path);
    if (char* slash = strrchr(dir, '/')) {
      *slash = '\0';
      for (const char* sub : {"", "../../cuda_cupti/lib", "../extras/CUPTI/lib64"})
        if (void* lib = search.open_in(dir, sub)) return lib;
    }
  }
  if (void* lib = dlopen(search.library, RTLD_NOW | RTLD_GLOBAL)) return lib;
  search.note("the loader's search path (LD_LIBRARY_PATH, ldconfig)");
  char versioned_root[64];
  snprintf(versioned_root, sizeof(versioned_root), "/usr/local/cuda-%d", major);
  const char* roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), versioned_root,
                         "/usr/local/cuda"};
  const char* subdirs[] = {"lib64", "extras/CUPTI/lib64", "lib", kCudaTargetLibDir};
  for (const char* root : roots) {
    if (root == nullptr || root[0] == '\0') continue;
    for (const char* sub : subdirs)
      if (void* lib = search.open_in(root, sub)) return lib;
  }
  return nullptr;
}

// The CUPTI majors worth trying: the runtime's own; with no runtime found (driver API only),
// the newest the driver runs, then the older one.
int majors_to_try(const CudaVersions& versions, int (&majors)[2]) {
  if (versions.runtime != 0) {
    majors[0] = versions.runtime / 1000;
    return 1;
  }
  if (versions.driver == 0 || versions.driver >= kNewestCudaMajor * 1000) {
    majors[0] = kNewestCudaMajor, majors[1] = kOldestCudaMajor;
    return 2;
  }
  majors[0] = kOldestCudaMajor;
  return 1;
}

CudaVersions g_versions;
bool g_probed = false;
void* g_cupti = nullptr;
int g_cupti_major = 0;

const CudaVersions& probed_versions() {
  if (!g_probed) {
    probe_cuda_runtime(g_versions);
    g_probed = true;
  }
  return g_versions;
}

// The CUPTI for this program, loaded once; search says where it was looked for.
void* open_cupti(Search* search_out = nullptr) {
  if (g_cupti != nullptr) return g_cupti;
  const CudaVersions& versions = probed_versions();
  int majors[2] = {};
  const int count = majors_to_try(versions, majors);
  Search search;
  for (int i = 0; i < count && g_cupti == nullptr; ++i) {
    if (majors[i] < kOldestCudaMajor || majors[i] > kNewestCudaMajor) break;
    g_cupti = open_cupti_major(majors[i], versions, search);
    if (g_cupti != nullptr) g_cupti_major = majors[i];
  }
  if (search_out != nullptr) *search_out = search;
  return g_cupti;
}

void format_version(int version, char* out, size_t capacity) {
  if (version % 1000 == kMinorUnknown)
    snprintf(out, capacity, "%d.x", version / 1000);
  else
    snprintf(out, capacity, "%d.%d", version / 1000, version % 1000 / 10);
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

namespace {
// cuptiSubscribe_v2 shows a competing tool "CUPTI for capguard" and tells us who holds CUPTI
// instead of leaving a guess.
CUptiResult subscribe_capguard(const CuptiCalls& calls, void* userdata,
                               CUpti_SubscriberHandle& subscriber, ShareMode& mode, char* holder,
                               size_t holder_size) {
  SubscriberParams132 params{};
  params.base.structSize = kParams132Size;
  params.base.subscriberName = "capguard";
  params.base.oldSubscriberName = holder;
  params.base.oldSubscriberSize = holder_size;
  params.allow_multiple_subscribers = 1;
  mode = ShareMode::Forward;
  if (calls.subscribe_v2 == nullptr)
    return calls.subscribe(&subscriber, &share_switchboard, userdata);
  CUptiResult subscribed =
      calls.subscribe_v2(&subscriber, &share_switchboard, userdata, &params.base);
  if (subscribed == CUPTI_SUCCESS) mode = ShareMode::Beside;
  if (subscribed == CUPTI_ERROR_INVALID_PARAMETER) {
    params.base.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    subscribed = calls.subscribe_v2(&subscriber, &share_switchboard, userdata, &params.base);
  }
  return subscribed;
}

const CuptiCalls* g_detach_calls = nullptr;  // detach_cupti's, for the gate's callback
bool g_unsubscribed = false;                 // ... and whether it ended the subscription
}  // namespace

bool detach_cupti(CUpti_CallbackFunc callback, void* userdata, const CuptiApi& api,
                  CallbackGate& gate) {
  if (api.calls.unsubscribe == nullptr || api.calls.finalize == nullptr) return false;
  g_detach_calls = &api.calls;
  g_unsubscribed = false;
  const bool detached = gate.detach([](CUpti_SubscriberHandle own) {
    if (g_detach_calls->unsubscribe(own) != CUPTI_SUCCESS) return false;
    g_unsubscribed = true;
    return g_detach_calls->finalize() == CUPTI_SUCCESS;
  });
  // Unsubscribed but not finalized: capguard subscribes again at once, never blind.
  if (!detached && g_unsubscribed) reattach_cupti(callback, userdata, api, gate);
  return detached;
}

bool reattach_cupti(CUpti_CallbackFunc callback, void* userdata, const CuptiApi& api,
                    CallbackGate& gate) {
  CUpti_SubscriberHandle subscriber = nullptr;
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 4] = {};
  ShareMode mode = ShareMode::Forward;
  if (subscribe_capguard(api.calls, userdata, subscriber, mode, holder, sizeof(holder)) !=
      CUPTI_SUCCESS) {
    return false;
  }
  share_attached(api.calls, subscriber, mode, callback);
  return gate.resubscribe(subscriber);
}

bool attach_cupti(CUpti_CallbackFunc callback, void* userdata, CuptiApi& api, CallbackGate& gate,
                  bool all_callbacks, CudaVersions& versions, char* why, size_t why_capacity) {
  const CudaVersions& found = probed_versions();
  versions = found;
  char runtime[16];
  format_version(found.runtime, runtime, sizeof(runtime));
  if (found.runtime != 0 && found.runtime / 1000 < kOldestCudaMajor) {
    snprintf(why, why_capacity,
             "this program runs the CUDA %s runtime (%s); capguard supports CUDA %d.x and %d.x "
             "(drivers of the R525 branch or newer for 12.x, R580 or newer for 13.x)",
             runtime, found.runtime_path, kOldestCudaMajor, kNewestCudaMajor);
    return false;
  }
  if (found.runtime / 1000 > kNewestCudaMajor) {
    snprintf(why, why_capacity,
             "this program runs the CUDA %s runtime (%s), newer than capguard knows; capguard "
             "supports CUDA %d.x and %d.x",
             runtime, found.runtime_path, kOldestCudaMajor, kNewestCudaMajor);
    return false;
  }
  Search search;
  void* lib = open_cupti(&search);
  startup::mark(startup::Phase::cupti_loaded);
  if (lib == nullptr) {
    if (found.runtime != 0) {
      snprintf(why, why_capacity,
               "%s not found: this program runs the CUDA %s runtime (%s), which needs CUPTI %d "
               "(%s). Searched: %s. Install it (pip install nvidia-cuda-cupti-cu%d, or the "
               "toolkit's CUPTI) or name it in CAPGUARD_CUPTI",
               search.library, runtime,
               found.linkage == RuntimeLinkage::shared ? found.runtime_path : "linked statically",
               found.runtime / 1000, search.library, search.tried, found.runtime / 1000);
    } else {
      snprintf(why, why_capacity,
               "no CUPTI found for a program with no CUDA runtime of its own (driver API only; "
               "driver %d): tried libcupti.so.%d and .%d. Searched: %s. Install CUPTI or name "
               "it in CAPGUARD_CUPTI",
               found.driver, kNewestCudaMajor, kOldestCudaMajor, search.tried);
    }
    return false;
  }
  select_api_major(g_cupti_major);
  versions.cupti_major = g_cupti_major;
  if (auto get_version =
          reinterpret_cast<CUptiResult (*)(uint32_t*)>(dlsym(lib, "cuptiGetVersion"))) {
    uint32_t api_version = 0;
    if (get_version(&api_version) == CUPTI_SUCCESS) versions.cupti_api = api_version;
  }
  Dl_info where{};
  if (void* symbol = dlsym(lib, "cuptiSubscribe");
      symbol != nullptr && dladdr(symbol, &where) && where.dli_fname != nullptr) {
    snprintf(versions.cupti_path, sizeof(versions.cupti_path), "%s", where.dli_fname);
  }
  find_all(lib, api.calls);
  find(lib, "cuptiGetResultString", api.get_result_string);
  const CuptiCalls& calls = api.calls;
  if (calls.subscribe == nullptr || calls.enable_domain == nullptr) {
    snprintf(why, why_capacity, "%s lacks cuptiSubscribe/cuptiEnableDomain", versions.cupti_path);
    return false;
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 4] = {};
  ShareMode mode = ShareMode::Forward;
  const CUptiResult subscribed =
      subscribe_capguard(calls, userdata, subscriber, mode, holder, sizeof(holder));
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
