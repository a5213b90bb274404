// Which CUPTI callbacks are enabled. Outside captures only the calls the record policy keeps
// anyway (api_table.h: the kinds recorded outside captures) are enabled, so the program's other
// calls (kernel launches, copies) do not reach the interposer at all. The first capture turns
// everything on (cuptiEnableDomain) from inside its BeginCapture ENTER callback. Once the last
// capture has ended and a linger has passed, an EXIT of the thread that ended it reduces again,
// all at once: both domains off, the reduced set back on.
//
// Only while that thread is the only one calling CUDA. Measured on CUDA 13.0, driver 580
// (docs/measured.md, the gate_race testcase): when callbacks are switched off while other threads
// keep calling, those threads can stop getting ENTER callbacks for good, even of calls that are
// switched on again (BeginCapture included), while their EXITs still come. A program in which
// other threads call CUDA after a capture therefore keeps every callback on.
//
// A reduction can swallow the EXIT of a call another thread is inside of. Each reduction is
// stamped with a generation (before and after the switch), from which the recorder tells a call
// whose EXIT will never come from one still in progress.
#pragma once

#include <cupti.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "trace/format.h"

namespace capguard::interposer {

struct CallbackInfo;

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
  // domains on at every BeginCapture and off again after it costs more than the callbacks.
  static constexpr uint64_t kDefaultLingerNs = 20'000'000;

  // always_full: never reduce (CAPGUARD_CALLBACKS=all, or no switches: the unit tests).
  // clock: monotonic nanoseconds (null: CLOCK_MONOTONIC); tests pass their own.
  void init(const CuptiSwitches& switches, bool always_full, uint64_t linger_ns = kDefaultLingerNs,
            uint64_t (*clock)() = nullptr);
  // Enables the reduced set. False if CUPTI refused; the caller then enables whole domains.
  // Both take the gate's lock: CUPTI wants its enable calls serialized.
  bool enable_reduced_set();
  bool enable_everything();

  bool full() const { return full_.load(std::memory_order_acquire); }
  void want_full();  // a capture begins: everything on before the call proceeds
  // A capture ended or failed to begin on thread `tid`: reduce after the linger, unless
  // still_needed then (checked under the gate's lock, so that it cannot miss a want_full of
  // another thread).
  void allow_reduced(bool (*still_needed)(const void*), const void* context, uint32_t tid);
  // An EXIT on thread `tid` while everything is on: reduces once the linger has passed, if no
  // other thread has called CUDA since the capture ended.
  void on_exit_while_full(uint32_t tid);

  // Grows by two with every reduction; a thread reads it at the ENTER of a top-level call.
  uint32_t reduction_generation() const { return generation_.load(std::memory_order_acquire); }
  // Whether a reduction happened after `generation` was read: a call outside the reduced set
  // whose ENTER was seen then may never get its EXIT.
  bool reduced_since(uint32_t generation) const { return reduction_generation() > generation; }

  // Graph lifetime: callbacks the reduced set also holds while `wanted` says so (the
  // recorder's graph watch: graph launches, syncs). Set once, before callbacks flow.
  void set_also_wanted(bool (*wanted)(const CallbackInfo&, const void*), const void* context) {
    also_wanted_ = wanted;
    also_wanted_context_ = context;
  }
  // The watch now wants callbacks the reduced set did not hold: outside full, enables the
  // reduced set again under the lock (switching on only, as a reduction does after its
  // switch-off; callbacks are switched off only all at once, by the next reduction).
  void reapply_reduced_set();

  // Callbacks another path delivers instead of CUPTI (launch_hooks.h): never switched on, and
  // switched off again right after a whole domain is; `delivering` follows full() while they
  // are. Should CUPTI refuse to switch one off, the gate switches them all back on, lowers
  // `delivering` for good and calls `given_back`: CUPTI delivers them again.
  struct HandOff {
    const uint32_t* runtime_ids = nullptr;
    size_t runtime_count = 0;
    const uint32_t* driver_ids = nullptr;
    size_t driver_count = 0;
    std::atomic<bool>* delivering = nullptr;
    void (*given_back)() = nullptr;
  };
  // Before the first enable (attach_cupti).
  void hand_off(const HandOff& hand_off) { hand_off_ = hand_off; }
  bool handed_off(trace::ApiDomain domain, uint32_t cbid) const;

  // CUPTI detached while idle (idle_detach.h): `finalize` (unsubscribe and finalize) runs under
  // the gate's lock, between two generation stamps as a reduction's switch does, since a call
  // whose ENTER was seen may never get its EXIT. Refused while full. True when it detached.
  bool detach(bool (*finalize)(CUpti_SubscriberHandle own));
  // Attached again with a new subscription: the reduced set on it.
  bool resubscribe(CUpti_SubscriberHandle subscriber);
  bool always_full() const { return always_full_; }

  uint64_t switched_on() const { return switched_on_.load(std::memory_order_relaxed); }
  uint64_t reductions() const { return reductions_.load(std::memory_order_relaxed); }

 private:
  bool reduce_if_unneeded();  // under mutex_
  bool enable_reduced_set_locked();
  bool enable_everything_locked();
  void switch_off_handed_locked();  // after a whole domain went on

  CuptiSwitches switches_;
  HandOff hand_off_;
  bool always_full_ = true;
  uint64_t linger_ns_ = kDefaultLingerNs;
  uint64_t (*clock_)() = nullptr;
  // Set by allow_reduced, cleared by want_full and by the reduction (under mutex_).
  std::atomic<uint64_t> idle_since_ns_{0};
  std::atomic<uint32_t> idle_thread_{0};         // the thread that ended the last capture
  std::atomic<bool> other_threads_busy_{false};  // another thread called CUDA since then
  bool (*still_needed_)(const void*) = nullptr;
  bool (*also_wanted_)(const CallbackInfo&, const void*) = nullptr;
  const void* also_wanted_context_ = nullptr;
  const void* still_needed_context_ = nullptr;
  std::atomic<bool> full_{true};
  std::atomic<uint32_t> generation_{0};
  std::atomic<uint64_t> switched_on_{0}, reductions_{0};
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;  // CUPTI's enable calls are not reentrant
};

}  // namespace capguard::interposer
