#include "interposer/callback_gate.h"

#include <ctime>
#include <initializer_list>

#include "interposer/api_table.h"
#include "interposer/startup_times.h"

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
  pthread_mutex_lock(&mutex_);
  const bool ok = enable_reduced_set_locked();
  pthread_mutex_unlock(&mutex_);
  return ok;
}

bool CallbackGate::enable_reduced_set_locked() {
  const startup::Timed timed(startup::Sum::cupti_enable);
  bool ok = true;
  for (trace::ApiDomain domain : {trace::ApiDomain::Runtime, trace::ApiDomain::Driver}) {
    for (uint32_t cbid = 1; cbid < api_table_size(domain); ++cbid) {
      const CallbackInfo& info = api_info(domain, cbid);
      if ((!callback_needed_outside_capture(info) &&
           (also_wanted_ == nullptr || !also_wanted_(info, also_wanted_context_))) ||
          handed_off(domain, cbid))
        continue;
      // An id this CUPTI does not know (a 12.4 CUPTI under 12.9's table) is one its runtime
      // cannot make either: CUPTI answers INVALID_PARAMETER, and nothing is missed.
      const CUptiResult result =
          switches_.enable_callback(1, switches_.subscriber, cupti_domain(domain), cbid);
      ok = ok && (result == CUPTI_SUCCESS || result == CUPTI_ERROR_INVALID_PARAMETER);
    }
  }
  if (ok) {
    full_.store(false, std::memory_order_release);
    if (hand_off_.delivering != nullptr) hand_off_.delivering->store(false);
  }
  return ok;
}

namespace {
const uint32_t* handed_ids(const CallbackGate::HandOff& hand_off, trace::ApiDomain domain,
                           size_t& count) {
  const bool runtime = domain == trace::ApiDomain::Runtime;
  count = runtime ? hand_off.runtime_count : hand_off.driver_count;
  return runtime ? hand_off.runtime_ids : hand_off.driver_ids;
}
}  // namespace

bool CallbackGate::handed_off(trace::ApiDomain domain, uint32_t cbid) const {
  size_t count = 0;
  const uint32_t* ids = handed_ids(hand_off_, domain, count);
  for (size_t i = 0; i < count; ++i) {
    if (ids[i] == cbid) return true;
  }
  return false;
}

void CallbackGate::switch_off_handed_locked() {
  if (hand_off_.delivering == nullptr) return;
  bool ok = switches_.enable_callback != nullptr;
  for (trace::ApiDomain domain : {trace::ApiDomain::Runtime, trace::ApiDomain::Driver}) {
    size_t count = 0;
    const uint32_t* ids = handed_ids(hand_off_, domain, count);
    for (size_t i = 0; ok && i < count; ++i) {
      // An id this CUPTI does not know is one its runtime cannot make either.
      const CUptiResult result =
          switches_.enable_callback(0, switches_.subscriber, cupti_domain(domain), ids[i]);
      ok = ok && (result == CUPTI_SUCCESS || result == CUPTI_ERROR_INVALID_PARAMETER);
    }
  }
  if (ok) {
    hand_off_.delivering->store(true);
    return;
  }
  // Never blind, never twice: CUPTI delivers them all again, the hooks stop.
  hand_off_.delivering->store(false);
  if (hand_off_.given_back != nullptr) hand_off_.given_back();
  const HandOff taken = hand_off_;
  hand_off_ = HandOff{};
  for (trace::ApiDomain domain : {trace::ApiDomain::Runtime, trace::ApiDomain::Driver}) {
    size_t count = 0;
    const uint32_t* ids = handed_ids(taken, domain, count);
    for (size_t i = 0; switches_.enable_callback != nullptr && i < count; ++i) {
      switches_.enable_callback(1, switches_.subscriber, cupti_domain(domain), ids[i]);
    }
  }
}

void CallbackGate::reapply_reduced_set() {
  if (always_full_) return;
  pthread_mutex_lock(&mutex_);
  if (!full() && !enable_reduced_set_locked()) enable_everything_locked();  // never blind
  pthread_mutex_unlock(&mutex_);
}

bool CallbackGate::enable_everything() {
  pthread_mutex_lock(&mutex_);
  const bool ok = enable_everything_locked();
  pthread_mutex_unlock(&mutex_);
  return ok;
}

bool CallbackGate::enable_everything_locked() {
  const startup::Timed timed(startup::Sum::cupti_enable);
  for (trace::ApiDomain domain : {trace::ApiDomain::Runtime, trace::ApiDomain::Driver}) {
    if (switches_.enable_domain == nullptr ||
        switches_.enable_domain(1, switches_.subscriber, cupti_domain(domain)) != CUPTI_SUCCESS) {
      return false;
    }
  }
  switch_off_handed_locked();
  full_.store(true, std::memory_order_release);
  return true;
}

void CallbackGate::want_full() {
  if (always_full_) return;
  pthread_mutex_lock(&mutex_);  // a BeginCapture is rare: the lock is cheap here
  idle_since_ns_.store(0, std::memory_order_relaxed);  // a capture again: no reduction pending
  if (!full()) {
    enable_everything_locked();
    switched_on_.fetch_add(1, std::memory_order_relaxed);
  }
  pthread_mutex_unlock(&mutex_);
}

void CallbackGate::allow_reduced(bool (*still_needed)(const void*), const void* context,
                                 uint32_t tid) {
  if (always_full_ || !full()) return;
  pthread_mutex_lock(&mutex_);
  still_needed_ = still_needed;
  still_needed_context_ = context;
  idle_thread_.store(tid, std::memory_order_relaxed);
  other_threads_busy_.store(false, std::memory_order_relaxed);
  idle_since_ns_.store(clock_(), std::memory_order_relaxed);
  if (linger_ns_ == 0) reduce_if_unneeded();
  pthread_mutex_unlock(&mutex_);
}

bool CallbackGate::reduce_if_unneeded() {
  if (!full() || idle_since_ns_.load(std::memory_order_relaxed) == 0 ||
      other_threads_busy_.load(std::memory_order_relaxed) || still_needed_(still_needed_context_)) {
    return false;
  }
  idle_since_ns_.store(0, std::memory_order_relaxed);
  // Stamped before and after the switch: a thread whose ENTER read the generation before the
  // second stamp knows that its call's EXIT may never come.
  generation_.fetch_add(1, std::memory_order_acq_rel);
  {
    const startup::Timed timed(startup::Sum::cupti_enable);
    for (trace::ApiDomain domain : {trace::ApiDomain::Runtime, trace::ApiDomain::Driver}) {
      switches_.enable_domain(0, switches_.subscriber, cupti_domain(domain));
    }
  }
  const bool reduced = enable_reduced_set_locked();
  generation_.fetch_add(1, std::memory_order_acq_rel);
  if (!reduced) {  // CUPTI refused part of the reduced set: everything back on, never blind
    enable_everything_locked();
    return false;
  }
  reductions_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool CallbackGate::detach(bool (*finalize)(CUpti_SubscriberHandle own)) {
  if (always_full_) return false;
  pthread_mutex_lock(&mutex_);
  bool detached = false;
  if (!full()) {
    generation_.fetch_add(1, std::memory_order_acq_rel);
    detached = finalize(switches_.subscriber);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  pthread_mutex_unlock(&mutex_);
  return detached;
}

bool CallbackGate::resubscribe(CUpti_SubscriberHandle subscriber) {
  pthread_mutex_lock(&mutex_);
  switches_.subscriber = subscriber;
  generation_.fetch_add(1, std::memory_order_acq_rel);
  const bool ok = enable_reduced_set_locked() || enable_everything_locked();  // never blind
  generation_.fetch_add(1, std::memory_order_acq_rel);
  pthread_mutex_unlock(&mutex_);
  return ok;
}

void CallbackGate::on_exit_while_full(uint32_t tid) {
  const uint64_t idle_since = idle_since_ns_.load(std::memory_order_relaxed);
  if (always_full_ || idle_since == 0) return;
  if (tid != idle_thread_.load(std::memory_order_relaxed)) {
    other_threads_busy_.store(true, std::memory_order_relaxed);
    return;
  }
  if (other_threads_busy_.load(std::memory_order_relaxed) || clock_() - idle_since < linger_ns_)
    return;
  // Another thread is switching: a later EXIT tries again.
  if (pthread_mutex_trylock(&mutex_) != 0) return;
  reduce_if_unneeded();
  pthread_mutex_unlock(&mutex_);
}

}  // namespace capguard::interposer
