// Probe of CUPTI's cost (not part of capguard): which CUPTI callbacks a program's calls
// raise with both API domains on, and what is left once the launch family (and the runtime's
// push/pop of a <<<>>> launch's configuration) is switched off. An injection library:
//   CUDA_INJECTION64_PATH=callback_census.so [CENSUS_EXCLUDE=launch] [CENSUS_QUIET=1] ./bench
// At exit it prints the callbacks counted per (domain, id), most frequent first, on stderr.
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kMaxId = 1024;
std::atomic<long> g_counts[2][kMaxId];
CUpti_SubscriberHandle g_subscriber;

void CUPTIAPI callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* d) {
  const auto* data = static_cast<const CUpti_CallbackData*>(d);
  if (data->callbackSite != CUPTI_API_ENTER || cbid >= kMaxId) return;
  const int index = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? 0 : 1;
  g_counts[index][cbid].fetch_add(1, std::memory_order_relaxed);
}

// CUPTI's runtime names carry the version they appeared in (cudaLaunchKernel_v7000).
bool is_launch_family(const char* versioned) {
  char name[128];
  std::snprintf(name, sizeof name, "%s", versioned);
  if (char* v = std::strstr(name, "_v"); v != nullptr && v[2] >= '0' && v[2] <= '9') *v = '\0';
  static const char* const kNames[] = {"cudaLaunchKernel",
                                       "cudaLaunchKernel_ptsz",
                                       "cudaLaunchKernelExC",
                                       "cudaLaunchKernelExC_ptsz",
                                       "cudaLaunchCooperativeKernel",
                                       "cudaLaunchCooperativeKernel_ptsz",
                                       "__cudaPushCallConfiguration",
                                       "__cudaPopCallConfiguration",
                                       "cuLaunchKernel",
                                       "cuLaunchKernel_ptsz",
                                       "cuLaunchKernelEx",
                                       "cuLaunchKernelEx_ptsz",
                                       "cuLaunchCooperativeKernel",
                                       "cuLaunchCooperativeKernel_ptsz"};
  for (const char* k : kNames) {
    if (std::strcmp(name, k) == 0) return true;
  }
  return false;
}

void report() {
  struct Row {
    long count;
    int domain;
    int id;
  };
  std::vector<Row> rows;
  long total = 0;
  for (int d = 0; d < 2; ++d) {
    for (int id = 0; id < kMaxId; ++id) {
      const long c = g_counts[d][id].load();
      if (c == 0) continue;
      rows.push_back({c, d, id});
      total += c;
    }
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.count > b.count; });
  std::fprintf(stderr, "census: exclude=%s total ENTER callbacks %ld\n",
               std::getenv("CENSUS_EXCLUDE") ? std::getenv("CENSUS_EXCLUDE") : "none", total);
  for (size_t i = 0; i < rows.size() && i < 20; ++i) {
    const char* name = "?";
    cuptiGetCallbackName(
        rows[i].domain == 0 ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, rows[i].id,
        &name);
    std::fprintf(stderr, "census: %8ld %s %s\n", rows[i].count,
                 rows[i].domain == 0 ? "runtime" : "driver ", name);
  }
}

void exclude_launch_family(CUpti_CallbackDomain domain, int first, int last) {
  for (int id = first; id < last; ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, id, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (is_launch_family(name)) cuptiEnableCallback(0, g_subscriber, domain, id);
  }
}

}  // namespace

extern "C" int InitializeInjection(void) {
  if (cuptiSubscribe(&g_subscriber, &callback, nullptr) != CUPTI_SUCCESS) return 1;
  cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  const char* exclude = std::getenv("CENSUS_EXCLUDE");
  if (exclude != nullptr && std::strcmp(exclude, "launch") == 0) {
    exclude_launch_family(CUPTI_CB_DOMAIN_RUNTIME_API, 1, CUPTI_RUNTIME_TRACE_CBID_SIZE);
    exclude_launch_family(CUPTI_CB_DOMAIN_DRIVER_API, 1, CUPTI_DRIVER_TRACE_CBID_SIZE);
  }
  if (std::getenv("CENSUS_QUIET") == nullptr) std::atexit(report);
  return 1;
}
