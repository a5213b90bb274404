// Which CUPTI callbacks are enabled. Outside captures only the calls the record policy keeps
// anyway (api_table.h: the kinds recorded outside captures) are enabled, so the program's other
// calls (kernel launches, copies) do not reach the interposer at all. The first capture turns
// everything on (cuptiEnableDomain) from inside its BeginCapture ENTER callback; when the last
// capture ends the gate only notes it, and each call outside the reduced set switches its own
// callback off at its next EXIT. Switching off lazily, at an EXIT, leaves no window in which a
// BeginCapture of another thread could be missed. It cannot keep every ENTER/EXIT pair whole:
// another thread may be inside the same call when its callback goes off, and that thread never gets
// its EXIT. The gate therefore stamps each switch-off with a generation (switched_off_since), from
// which the recorder tells a call whose EXIT was lost from one still in progress.
#pragma once

#include <cupti.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>

#include "trace/format.h"

namespace capguard::interposer {

struct CuptiSwitches {
  CUptiResult (*enable_domain)(uint32_t enable, CUpti_SubscriberHandle,
                               CUpti_CallbackDomain) = nullptr;
  CUptiResult (*enable_callback)(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                 CUpti_CallbackId) = nullptr;
  CUpti_SubscriberHandle subscriber = nullptr;
};

class CallbackGate {
 public:
  // Once the last capture ends, everything stays on for this long before the gate reduces:
  // programs capture back to back (a capture per step, per batch size), and switching whole
  // domains on at every BeginCapture and each call off again after it cost more than the
  // callbacks themselves.
  static constexpr uint64_t kDefaultLingerNs = 20'000'000;

  // always_full: never reduce (CAPGUARD_CALLBACKS=all, or no switches: the unit tests).
  // clock: monotonic nanoseconds (null: CLOCK_MONOTONIC); tests pass their own.
  void init(const CuptiSwitches& switches, bool always_full, uint64_t linger_ns = kDefaultLingerNs,
            uint64_t (*clock)() = nullptr);
  // Enables the reduced set. False if CUPTI refused; the caller then enables whole domains.
  // Both take the gate's lock: CUPTI wants its enable calls serialized.
  bool enable_reduced_set();
  bool enable_everything();

  // A generation that grows with every callback switched off; 0 before the first. A thread
  // reads it at the ENTER of a top-level call.
  uint32_t switch_off_generation() const { return off_generation_.load(std::memory_order_acquire); }
  // Whether the callback of (domain, cbid) was switched off after `generation` was read: a call
  // whose ENTER was seen then may never get its EXIT.
  bool switched_off_since(trace::ApiDomain domain, uint32_t cbid, uint32_t generation) const;

  bool full() const { return full_.load(std::memory_order_acquire); }
  void want_full();  // a capture begins: everything on before the call proceeds
  // A capture ended or failed to begin: reduce after the linger, unless still_needed then
  // (checked under the gate's lock, so that it cannot miss a want_full of another thread).
  void allow_reduced(bool (*still_needed)(const void*), const void* context);
  // An EXIT of a call outside the reduced set, seen while no capture is active: reduces once
  // the linger has passed, then switches this call's callback off.
  void on_unneeded_exit(trace::ApiDomain domain, uint32_t cbid);

  uint64_t switched_on() const { return switched_on_.load(std::memory_order_relaxed); }
  uint64_t switched_off() const { return switched_off_.load(std::memory_order_relaxed); }

 private:
  bool reduce_if_unneeded();  // under mutex_
  bool enable_everything_locked();
  void stamp_switch_off(trace::ApiDomain domain, uint32_t cbid);  // under mutex_
  std::atomic<uint32_t>* off_slot(trace::ApiDomain domain, uint32_t cbid) const {
    if (domain == trace::ApiDomain::Runtime)
      return cbid < kRuntimeIds ? &runtime_off_at_[cbid] : nullptr;
    return cbid < kDriverIds ? &driver_off_at_[cbid] : nullptr;
  }
  static constexpr uint32_t kRuntimeIds = CUPTI_RUNTIME_TRACE_CBID_SIZE;
  static constexpr uint32_t kDriverIds = CUPTI_DRIVER_TRACE_CBID_SIZE;
  CuptiSwitches switches_;
  bool always_full_ = true;
  uint64_t linger_ns_ = kDefaultLingerNs;
  uint64_t (*clock_)() = nullptr;
  // Set by allow_reduced, cleared by want_full and by the reduction (under mutex_).
  std::atomic<uint64_t> idle_since_ns_{0};
  bool (*still_needed_)(const void*) = nullptr;
  const void* still_needed_context_ = nullptr;
  std::atomic<bool> full_{true};
  std::atomic<uint64_t> switched_on_{0}, switched_off_{0};
  std::atomic<uint32_t> off_generation_{0};
  // Per callback id: the generation at which it was last switched off (0: never).
  mutable std::atomic<uint32_t> runtime_off_at_[kRuntimeIds] = {};
  mutable std::atomic<uint32_t> driver_off_at_[kDriverIds] = {};
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;  // CUPTI's enable calls are not reentrant
};

}  // namespace capguard::interposer
