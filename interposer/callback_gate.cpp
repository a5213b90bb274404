#include "interposer/callback_gate.h"

#include <ctime>
#include <initializer_list>

#include "interposer/api_table.h"

namespace capguard::interposer {
namespace {

CUpti_CallbackDomain cupti_domain(trace::ApiDomain domain) {
  return domain == trace::ApiDomain::Runtime ? CUPTI_CB_DOMAIN_RUNTIME_API
                                             : CUPTI_CB_DOMAIN_DRIVER_API;
}

uint64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

}  // namespace

void CallbackGate::init(const CuptiSwitches& switches, bool always_full, uint64_t linger_ns,
                        uint64_t (*clock)()) {
  linger_ns_ = linger_ns;
  clock_ = clock != nullptr ? clock : &monotonic_ns;
  switches_ = switches;
  always_full_ =
      always_full || switches.enable_domain == nullptr || switches.enable_callback == nullptr;
  full_.store(always_full_, std::memory_order_release);
}

bool CallbackGate::enable_reduced_set() {
  if (always_full_) return enable_everything();
  for (trace::ApiDomain domain : {trace::ApiDomain::Runtime, trace::ApiDomain::Driver}) {
    for (uint32_t cbid = 1; cbid < api_table_size(domain); ++cbid) {
      if (!callback_needed_outside_capture(api_info(domain, cbid))) continue;
      if (switches_.enable_callback(1, switches_.subscriber, cupti_domain(domain), cbid) !=
          CUPTI_SUCCESS) {
        return false;
      }
    }
  }
  full_.store(false, std::memory_order_release);
  return true;
}

bool CallbackGate::enable_everything() {
  for (trace::ApiDomain domain : {trace::ApiDomain::Runtime, trace::ApiDomain::Driver}) {
    if (switches_.enable_domain == nullptr ||
        switches_.enable_domain(1, switches_.subscriber, cupti_domain(domain)) != CUPTI_SUCCESS) {
      return false;
    }
  }
  full_.store(true, std::memory_order_release);
  return true;
}

void CallbackGate::want_full() {
  if (always_full_) return;
  pthread_mutex_lock(&mutex_);  // a BeginCapture is rare: the lock is cheap here
  idle_since_ns_.store(0, std::memory_order_relaxed);  // a capture again: no reduction pending
  if (!full()) {
    enable_everything();
    switched_on_.fetch_add(1, std::memory_order_relaxed);
  }
  pthread_mutex_unlock(&mutex_);
}

void CallbackGate::allow_reduced(bool (*still_needed)(const void*), const void* context) {
  if (always_full_ || !full()) return;
  pthread_mutex_lock(&mutex_);
  still_needed_ = still_needed;
  still_needed_context_ = context;
  idle_since_ns_.store(clock_(), std::memory_order_relaxed);
  if (linger_ns_ == 0) reduce_if_unneeded();
  pthread_mutex_unlock(&mutex_);
}

bool CallbackGate::reduce_if_unneeded() {
  if (idle_since_ns_.load(std::memory_order_relaxed) == 0 || still_needed_(still_needed_context_))
    return false;
  idle_since_ns_.store(0, std::memory_order_relaxed);
  full_.store(false, std::memory_order_release);
  return true;
}

void CallbackGate::on_unneeded_exit(trace::ApiDomain domain, uint32_t cbid) {
  if (full()) {
    const uint64_t idle_since = idle_since_ns_.load(std::memory_order_relaxed);
    if (always_full_ || idle_since == 0 || clock_() - idle_since < linger_ns_) return;
    if (pthread_mutex_trylock(&mutex_) != 0) return;
    const bool reduced = reduce_if_unneeded();
    pthread_mutex_unlock(&mutex_);
    if (!reduced) return;
  }
  // Another thread is switching: skip, this call's callback goes off at a later EXIT.
  if (pthread_mutex_trylock(&mutex_) != 0) return;
  if (!full() && switches_.enable_callback(0, switches_.subscriber, cupti_domain(domain), cbid) ==
                     CUPTI_SUCCESS) {
    switched_off_.fetch_add(1, std::memory_order_relaxed);
  }
  pthread_mutex_unlock(&mutex_);
}

}  // namespace capguard::interposer
