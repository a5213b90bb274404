#include "interposer/callback_gate.h"

#include <initializer_list>

#include "interposer/api_table.h"

namespace capguard::interposer {
namespace {

CUpti_CallbackDomain cupti_domain(trace::ApiDomain domain) {
  return domain == trace::ApiDomain::Runtime ? CUPTI_CB_DOMAIN_RUNTIME_API
                                             : CUPTI_CB_DOMAIN_DRIVER_API;
}

}  // namespace

void CallbackGate::init(const CuptiSwitches& switches, bool always_full) {
  switches_ = switches;
  always_full_ = always_full || switches.enable_domain == nullptr ||
                 switches.enable_callback == nullptr;
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
  if (!full()) {
    enable_everything();
    switched_on_.fetch_add(1, std::memory_order_relaxed);
  }
  pthread_mutex_unlock(&mutex_);
}

void CallbackGate::allow_reduced(bool (*still_needed)(const void*), const void* context) {
  if (always_full_ || !full()) return;
  pthread_mutex_lock(&mutex_);
  if (!still_needed(context)) full_.store(false, std::memory_order_release);
  pthread_mutex_unlock(&mutex_);
}

void CallbackGate::on_unneeded_exit(trace::ApiDomain domain, uint32_t cbid) {
  if (full()) return;
  // Another thread is switching: skip, this call's callback goes off at a later EXIT.
  if (pthread_mutex_trylock(&mutex_) != 0) return;
  if (!full() && switches_.enable_callback(0, switches_.subscriber, cupti_domain(domain), cbid) ==
                     CUPTI_SUCCESS) {
    switched_off_.fetch_add(1, std::memory_order_relaxed);
  }
  pthread_mutex_unlock(&mutex_);
}

}  // namespace capguard::interposer
