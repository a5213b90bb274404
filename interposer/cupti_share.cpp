#include "interposer/cupti_share.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "interposer/cupti_loader.h"

namespace capguard::interposer {
namespace {

using trace::CuptiClientEvent;

// Which callbacks one subscriber has on: a bit per (domain, cbid). Domains and ids past these
// bounds (a newer CUPTI) are handed to the client whenever it enabled anything there.
constexpr uint32_t kDomains = 8;
constexpr uint32_t kCbids = 1024;
constexpr uint32_t kWords = kCbids / 64;

uint32_t domain_size(uint32_t domain) {
  switch (domain) {
    case CUPTI_CB_DOMAIN_DRIVER_API:
      return CUPTI_DRIVER_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RUNTIME_API:
      return CUPTI_RUNTIME_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RESOURCE:
      return CUPTI_CBID_RESOURCE_SIZE;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE:
      return CUPTI_CBID_SYNCHRONIZE_SIZE;
    case CUPTI_CB_DOMAIN_NVTX:
      return CUPTI_CBID_NVTX_SIZE;
    case CUPTI_CB_DOMAIN_STATE:
      return CUPTI_CBID_STATE_SIZE;
    default:
      return kCbids;
  }
}

class CallbackBits {
 public:
  bool test(uint32_t domain, uint32_t cbid) const {
    if (domain >= kDomains) return beyond_.load(std::memory_order_relaxed);
    if (cbid >= kCbids) return any(domain);
    return (words_[domain][cbid / 64].load(std::memory_order_relaxed) >> (cbid % 64)) & 1u;
  }
  bool any(uint32_t domain) const {
    if (domain >= kDomains) return beyond_.load(std::memory_order_relaxed);
    for (const auto& word : words_[domain])
      if (word.load(std::memory_order_relaxed) != 0) return true;
    return false;
  }
  void set(uint32_t domain, uint32_t cbid, bool on) {
    if (domain >= kDomains) return beyond_.store(on || beyond_.load(), std::memory_order_relaxed);
    if (cbid >= kCbids) return;
    const uint64_t bit = uint64_t{1} << (cbid % 64);
    if (on) {
      words_[domain][cbid / 64].fetch_or(bit, std::memory_order_relaxed);
    } else {
      words_[domain][cbid / 64].fetch_and(~bit, std::memory_order_relaxed);
    }
  }
  void set_domain(uint32_t domain, bool on) {
    if (domain >= kDomains) return beyond_.store(on, std::memory_order_relaxed);
    for (auto& word : words_[domain]) word.store(on ? ~uint64_t{0} : 0, std::memory_order_relaxed);
  }
  void clear() {
    for (uint32_t d = 0; d < kDomains; ++d) set_domain(d, false);
    beyond_.store(false, std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> words_[kDomains][kWords] = {};
  std::atomic<bool> beyond_{false};
};

struct Client {
  std::atomic<bool> active{false};
  std::atomic<CUpti_CallbackFunc> callback{nullptr};
  std::atomic<void*> userdata{nullptr};
  CallbackBits wants;
  char name[128] = {};
};

ShareHooks g_hooks;
CuptiCalls g_cupti;  // from share_attached, or found for calls that go straight through
std::atomic<ShareMode> g_mode{ShareMode::Off};
CUpti_SubscriberHandle g_own = nullptr;
CUpti_CallbackFunc g_inner = nullptr;
CallbackBits g_own_wants;
Client g_client;
std::atomic<bool> g_program_used{false};  // the program called CUPTI itself (idle_detach.h)
std::atomic<bool> g_beside_seen{false};   // a client subscribed beside capguard
// Client changes and CUPTI's enable calls, which CUPTI wants serialized. Taken after the
// gate's lock (capguard's own switches), never the other way round; never held while a
// callback runs.
pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
bool g_disabled = false;  // CAPGUARD_CUPTI_SHARE=0

CUpti_SubscriberHandle client_handle() {
  return reinterpret_cast<CUpti_SubscriberHandle>(&g_client);
}
bool is_client(CUpti_SubscriberHandle handle) {
  return handle != nullptr && handle == client_handle();
}

class Lock {
 public:
  Lock() { pthread_mutex_lock(&g_mutex); }
  ~Lock() { pthread_mutex_unlock(&g_mutex); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
};

// Set while this thread is inside CUPTI on capguard's behalf or the program's: a CUPTI that
// calls its own exported functions (through its PLT, so they bind to libcapguard.so's) must
// reach itself, not come back here (the fake CUPTI of the tests does; an endless recursion
// otherwise).
thread_local bool t_in_cupti = false;

class InCupti {
 public:
  InCupti() : outer_(t_in_cupti) { t_in_cupti = true; }
  ~InCupti() { t_in_cupti = outer_; }
  InCupti(const InCupti&) = delete;
  InCupti& operator=(const InCupti&) = delete;

 private:
  bool outer_;
};

// CUPTI's entry points for a call that goes straight through.
const CuptiCalls& cupti() {
  if (g_cupti.subscribe == nullptr) {
    CuptiCalls found;
    if ((g_hooks.find_cupti != nullptr ? g_hooks.find_cupti : &find_cupti_calls)(found)) {
      Lock lock;
      if (g_cupti.subscribe == nullptr) g_cupti = found;
    }
  }
  return g_cupti;
}

// A call that goes straight to CUPTI, as if capguard were not there.
template <class Fn, class... Args>
CUptiResult straight(Fn CuptiCalls::*which, Args... args) {
  const Fn call = cupti().*which;
  if (call == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  InCupti inside;
  return call(args...);
}

void note(CuptiClientEvent what, const char* name) {
  if (g_hooks.note != nullptr) g_hooks.note(what, name);
}

// The client's name: what it called itself, else the file of the code that subscribed.
void name_client(char* out, size_t size, const CUpti_SubscriberParams* params, const void* caller) {
  out[0] = '\0';
  if (params != nullptr && params->structSize > offsetof(CUpti_SubscriberParams, subscriberName) &&
      params->subscriberName != nullptr && params->subscriberName[0] != '\0') {
    snprintf(out, size, "%s", params->subscriberName);
    return;
  }
  Dl_info info;
  if (caller != nullptr && dladdr(caller, &info) != 0 && info.dli_fname != nullptr) {
    snprintf(out, size, "%s", info.dli_fname);
  }
}

// Under g_mutex: a callback the client no longer wants goes off in CUPTI unless capguard wants
// it; one it wants goes on.
CUptiResult apply_client(uint32_t enable, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (g_cupti.enable_callback == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  InCupti inside;
  if (enable == 0 && g_own_wants.test(domain, cbid)) return CUPTI_SUCCESS;
  return g_cupti.enable_callback(enable != 0, g_own, domain, cbid);
}

// Under g_mutex: switches off in CUPTI what the client had on in `domain` and capguard does not
// want.
void drop_client_domain(uint32_t domain) {
  if (!g_client.wants.any(domain)) return;
  InCupti inside;
  const uint32_t size = domain_size(domain);
  for (uint32_t cbid = 0; cbid < size; ++cbid) {
    if (g_client.wants.test(domain, cbid) && !g_own_wants.test(domain, cbid)) {
      g_cupti.enable_callback(0, g_own, static_cast<CUpti_CallbackDomain>(domain), cbid);
    }
  }
  if (!g_own_wants.any(domain) && g_cupti.enable_domain != nullptr) {
    g_cupti.enable_domain(0, g_own, static_cast<CUpti_CallbackDomain>(domain));
  }
  g_client.wants.set_domain(domain, false);
}

// Under g_mutex: the client is gone; its callbacks are switched off where only it wanted them.
void end_client() {
  g_client.active.store(false, std::memory_order_release);
  for (uint32_t domain = 1; domain < kDomains; ++domain) drop_client_domain(domain);
  g_client.wants.clear();
  g_client.callback.store(nullptr, std::memory_order_release);
}

}  // namespace

void share_set_hooks(const ShareHooks& hooks) {
  g_hooks = hooks;
  const char* setting = getenv("CAPGUARD_CUPTI_SHARE");
  g_disabled = setting != nullptr && strcmp(setting, "0") == 0;
}

void share_attached(const CuptiCalls& calls, CUpti_SubscriberHandle own, ShareMode mode,
                    CUpti_CallbackFunc inner) {
  Lock lock;
  g_cupti = calls;
  g_own = own;
  g_inner = inner;
  g_mode.store(g_disabled ? ShareMode::Off : mode, std::memory_order_release);
}

ShareMode share_mode() { return g_mode.load(std::memory_order_acquire); }

void CUPTIAPI share_switchboard(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void* data) {
  if (g_client.active.load(std::memory_order_acquire)) [[unlikely]] {
    if (g_client.wants.test(domain, cbid)) {
      if (CUpti_CallbackFunc callback = g_client.callback.load(std::memory_order_acquire))
        callback(g_client.userdata.load(std::memory_order_relaxed), domain, cbid, data);
    }
    if (!g_own_wants.test(domain, cbid)) return;
  }
  if (g_inner != nullptr) g_inner(userdata, domain, cbid, data);
}

CUptiResult share_own_enable_domain(uint32_t enable, CUpti_SubscriberHandle own,
                                    CUpti_CallbackDomain domain) {
  InCupti inside;
  Lock lock;
  g_own_wants.set_domain(domain, enable != 0);
  if (enable == 0 && g_client.active.load(std::memory_order_relaxed) &&
      g_client.wants.any(domain)) {
    // Off one by one, leaving the client's on: no moment in which it misses a callback.
    const uint32_t size = domain_size(domain);
    for (uint32_t cbid = 0; cbid < size; ++cbid) {
      if (!g_client.wants.test(domain, cbid)) g_cupti.enable_callback(0, own, domain, cbid);
    }
    return CUPTI_SUCCESS;
  }
  return g_cupti.enable_domain(enable, own, domain);
}

CUptiResult share_own_enable_callback(uint32_t enable, CUpti_SubscriberHandle own,
                                      CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  InCupti inside;
  Lock lock;
  g_own_wants.set(domain, cbid, enable != 0);
  if (enable == 0 && g_client.active.load(std::memory_order_relaxed) &&
      g_client.wants.test(domain, cbid)) {
    return CUPTI_SUCCESS;
  }
  return g_cupti.enable_callback(enable, own, domain, cbid);
}

void share_check_alive() {
  if (share_mode() == ShareMode::Off || g_cupti.get_callback_state == nullptr) return;
  // capguard always has cudaStreamBeginCapture on (the gate's reduced set holds it).
  constexpr CUpti_CallbackId kProbe = CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000;
  if (!g_own_wants.test(CUPTI_CB_DOMAIN_RUNTIME_API, kProbe)) return;
  uint32_t enabled = 0;
  InCupti inside;
  const CUptiResult result =
      g_cupti.get_callback_state(&enabled, g_own, CUPTI_CB_DOMAIN_RUNTIME_API, kProbe);
  if (result != CUPTI_SUCCESS || enabled == 0) note(CuptiClientEvent::Lost, g_client.name);
}

void share_note_program_use() {
  g_program_used.store(true, std::memory_order_release);
  if (g_hooks.attach_if_detached != nullptr) g_hooks.attach_if_detached();
}

bool share_program_uses_cupti() { return g_program_used.load(std::memory_order_acquire); }

CUptiResult share_subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                            void* userdata, CUpti_SubscriberParams* params, bool v2,
                            const void* caller) {
  const auto to_cupti = [&] {  // the program's call as CUPTI would have had it
    return v2 ? straight(&CuptiCalls::subscribe_v2, subscriber, callback, userdata, params)
              : straight(&CuptiCalls::subscribe, subscriber, callback, userdata);
  };
  if (t_in_cupti) return to_cupti();
  share_note_program_use();
  if (g_hooks.attach_now != nullptr) g_hooks.attach_now();
  const ShareMode mode = share_mode();
  char name[sizeof(g_client.name)];
  if (mode != ShareMode::Off) name_client(name, sizeof(name), params, caller);
  if (mode != ShareMode::Forward) {
    const CUptiResult result = to_cupti();
    if (mode == ShareMode::Beside && result == CUPTI_SUCCESS) {
      g_beside_seen.store(true, std::memory_order_relaxed);
      note(CuptiClientEvent::Beside, name);
    }
    // CUPTI refused the program's first client though capguard allowed others (it may want
    // every subscriber to allow them): capguard forwards to it. A refusal after a client
    // subscribed beside capguard is that client's doing, and the program's to see.
    if (mode == ShareMode::Off || result != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ||
        g_beside_seen.load(std::memory_order_relaxed)) {
      return result;
    }
  }
  if (subscriber == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  {
    Lock lock;
    if (!g_client.active.load(std::memory_order_relaxed)) {
      snprintf(g_client.name, sizeof(g_client.name), "%s", name);
      g_client.wants.clear();
      g_client.userdata.store(userdata, std::memory_order_relaxed);
      g_client.callback.store(callback, std::memory_order_release);
      g_client.active.store(true, std::memory_order_release);
      *subscriber = client_handle();
      name[0] = '\0';  // taken
    } else if (params != nullptr && params->oldSubscriberName != nullptr &&
               params->oldSubscriberSize > 0) {
      snprintf(params->oldSubscriberName, params->oldSubscriberSize, "CUPTI for %s", g_client.name);
    }
  }
  if (name[0] == '\0') {
    note(CuptiClientEvent::Forwarding, g_client.name);
    return CUPTI_SUCCESS;
  }
  note(CuptiClientEvent::Refused, name);  // CUPTI takes one subscriber: as without capguard
  return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
}

CUptiResult share_unsubscribe(CUpti_SubscriberHandle subscriber) {
  if (!is_client(subscriber)) return straight(&CuptiCalls::unsubscribe, subscriber);
  char name[sizeof(g_client.name)];
  {
    Lock lock;
    if (!g_client.active.load(std::memory_order_relaxed)) return CUPTI_ERROR_INVALID_PARAMETER;
    snprintf(name, sizeof(name), "%s", g_client.name);
    end_client();
  }
  note(CuptiClientEvent::Left, name);
  return CUPTI_SUCCESS;
}

CUptiResult share_enable_callback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                  CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (!is_client(subscriber))
    return straight(&CuptiCalls::enable_callback, enable, subscriber, domain, cbid);
  Lock lock;
  if (!g_client.active.load(std::memory_order_relaxed)) return CUPTI_ERROR_INVALID_PARAMETER;
  const CUptiResult result = apply_client(enable, domain, cbid);
  if (result == CUPTI_SUCCESS) g_client.wants.set(domain, cbid, enable != 0);
  return result;
}

CUptiResult share_enable_domain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                CUpti_CallbackDomain domain) {
  if (!is_client(subscriber))
    return straight(&CuptiCalls::enable_domain, enable, subscriber, domain);
  Lock lock;
  if (!g_client.active.load(std::memory_order_relaxed)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (enable == 0) {
    drop_client_domain(domain);
    return CUPTI_SUCCESS;
  }
  InCupti inside;
  const CUptiResult result = g_cupti.enable_domain(1, g_own, domain);
  if (result == CUPTI_SUCCESS) g_client.wants.set_domain(domain, true);
  return result;
}

CUptiResult share_enable_all_domains(uint32_t enable, CUpti_SubscriberHandle subscriber) {
  if (!is_client(subscriber)) return straight(&CuptiCalls::enable_all_domains, enable, subscriber);
  for (uint32_t domain = 1; domain < CUPTI_CB_DOMAIN_SIZE; ++domain) {
    const CUptiResult result =
        share_enable_domain(enable, subscriber, static_cast<CUpti_CallbackDomain>(domain));
    if (result != CUPTI_SUCCESS) return result;
  }
  return CUPTI_SUCCESS;
}

CUptiResult share_get_callback_state(uint32_t* enable, CUpti_SubscriberHandle subscriber,
                                     CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (!is_client(subscriber))
    return straight(&CuptiCalls::get_callback_state, enable, subscriber, domain, cbid);
  if (enable == nullptr || !g_client.active.load(std::memory_order_acquire))
    return CUPTI_ERROR_INVALID_PARAMETER;
  *enable = g_client.wants.test(domain, cbid) ? 1 : 0;
  return CUPTI_SUCCESS;
}

CUptiResult share_finalize() {
  if (share_mode() == ShareMode::Off || t_in_cupti) return straight(&CuptiCalls::finalize);
  // Finalizing would end capguard's subscription too: the client's subscription ends instead,
  // as it would have.
  char name[sizeof(g_client.name)] = {};
  {
    Lock lock;
    if (g_client.active.load(std::memory_order_relaxed)) {
      snprintf(name, sizeof(name), "%s", g_client.name);
      end_client();
    }
  }
  note(CuptiClientEvent::Finalize, name);
  return CUPTI_SUCCESS;
}

void share_reset_for_tests() {
  Lock lock;
  g_client.active.store(false);
  g_program_used.store(false);
  g_client.wants.clear();
  g_client.callback.store(nullptr);
  g_client.name[0] = '\0';
  g_own_wants.clear();
  g_cupti = CuptiCalls{};
  g_own = nullptr;
  g_inner = nullptr;
  g_mode.store(ShareMode::Off);
  g_beside_seen.store(false);
  g_hooks = ShareHooks{};
  g_disabled = false;
}

}  // namespace capguard::interposer
