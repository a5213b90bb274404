#include "interposer/api_table.h"

#include <atomic>

namespace capguard::interposer {
namespace {

constinit const CallbackInfo kUnknown{};
// Set once at attach, before any callback is enabled; read on every callback.
std::atomic<const ApiTable*> g_first{nullptr};

const CallbackInfo& entry(const ApiTable& table, trace::ApiDomain domain, uint32_t cbid) {
  if (domain == trace::ApiDomain::Runtime)
    return cbid < table.runtime_size ? table.runtime[cbid] : kUnknown;
  return cbid < table.driver_size ? table.driver[cbid] : kUnknown;
}

const ApiTable& first_table() {
  const ApiTable* first = g_first.load(std::memory_order_relaxed);
  return first != nullptr ? *first : api_table_cuda13();
}

}  // namespace

void select_api_major(int major) {
  g_first.store(major == 12 ? &api_table_cuda12() : &api_table_cuda13(), std::memory_order_relaxed);
}

int selected_api_major() { return first_table().major; }

const CallbackInfo& api_info(trace::ApiDomain domain, uint32_t cbid) {
  const ApiTable& first = first_table();
  const CallbackInfo& info = entry(first, domain, cbid);
  if (info.has_params) [[likely]]
    return info;
  const ApiTable& other = first.major == 12 ? api_table_cuda13() : api_table_cuda12();
  const CallbackInfo& fallback = entry(other, domain, cbid);
  return fallback.has_params ? fallback : info;
}

uint32_t api_table_size(trace::ApiDomain domain) {
  const ApiTable& first = first_table();
  return domain == trace::ApiDomain::Runtime ? first.runtime_size : first.driver_size;
}

}  // namespace capguard::interposer
