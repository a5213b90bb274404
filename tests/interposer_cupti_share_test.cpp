// cupti_share against a fake CUPTI that, like CUPTI 13.0 (measured on the H100), takes one
// subscriber, or, like CUPTI 13.2's multi-subscriber mode, several: the program's own client
// gets exactly the callbacks it enabled, capguard exactly its own, and what happened is noted.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "interposer/cupti_share.h"

namespace capguard::interposer {
namespace {

using trace::CuptiClientEvent;

constexpr auto kRuntime = CUPTI_CB_DOMAIN_RUNTIME_API;
constexpr auto kDriver = CUPTI_CB_DOMAIN_DRIVER_API;
constexpr CUpti_CallbackId kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
constexpr CUpti_CallbackId kSync = CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020;
constexpr CUpti_CallbackId kBegin = CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000;

// The fake: which callbacks CUPTI has on for each real subscriber, and how many it allows.
struct FakeCupti {
  bool multi = false;
  bool finalized = false;
  std::vector<std::pair<CUpti_CallbackFunc, void*>> subscribers;
  std::vector<std::vector<bool>> on;  // per subscriber: domain * 1024 + cbid
  uint32_t enable_calls = 0;

  size_t index(CUpti_SubscriberHandle h) const { return reinterpret_cast<size_t>(h) - 1; }
  // CUPTI calls every subscriber that has the callback on.
  void fire(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    for (size_t i = 0; i < subscribers.size(); ++i)
      if (!finalized && on[i][domain * 1024 + cbid])
        subscribers[i].first(subscribers[i].second, domain, cbid, nullptr);
  }
};
FakeCupti* g_fake = nullptr;

CUptiResult fake_subscribe(CUpti_SubscriberHandle* h, CUpti_CallbackFunc f, void* u) {
  if (!g_fake->subscribers.empty() && !g_fake->multi)
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  g_fake->subscribers.emplace_back(f, u);
  g_fake->on.emplace_back(8 * 1024, false);
  *h = reinterpret_cast<CUpti_SubscriberHandle>(g_fake->subscribers.size());
  return CUPTI_SUCCESS;
}
CUptiResult fake_subscribe_v2(CUpti_SubscriberHandle* h, CUpti_CallbackFunc f, void* u,
                              CUpti_SubscriberParams*) {
  return fake_subscribe(h, f, u);
}
CUptiResult fake_enable_callback(uint32_t e, CUpti_SubscriberHandle h, CUpti_CallbackDomain d,
                                 CUpti_CallbackId cbid) {
  ++g_fake->enable_calls;
  g_fake->on.at(g_fake->index(h))[d * 1024 + cbid] = e != 0;
  return CUPTI_SUCCESS;
}
CUptiResult fake_enable_domain(uint32_t e, CUpti_SubscriberHandle h, CUpti_CallbackDomain d) {
  ++g_fake->enable_calls;
  for (uint32_t cbid = 0; cbid < 1024; ++cbid) g_fake->on.at(g_fake->index(h))[d * 1024 + cbid] = e;
  return CUPTI_SUCCESS;
}
CUptiResult fake_get_state(uint32_t* e, CUpti_SubscriberHandle h, CUpti_CallbackDomain d,
                           CUpti_CallbackId cbid) {
  if (g_fake->finalized) return CUPTI_ERROR_INVALID_PARAMETER;
  *e = g_fake->on.at(g_fake->index(h))[d * 1024 + cbid];
  return CUPTI_SUCCESS;
}
CUptiResult fake_finalize() {
  g_fake->finalized = true;
  return CUPTI_SUCCESS;
}

CuptiCalls fake_calls() {
  CuptiCalls calls;
  calls.subscribe = &fake_subscribe;
  calls.subscribe_v2 = &fake_subscribe_v2;
  calls.enable_callback = &fake_enable_callback;
  calls.enable_domain = &fake_enable_domain;
  calls.get_callback_state = &fake_get_state;
  calls.finalize = &fake_finalize;
  return calls;
}

std::vector<std::pair<CuptiClientEvent, std::string>> g_notes;
void record_note(CuptiClientEvent what, const char* name) { g_notes.emplace_back(what, name); }
bool find_fake(CuptiCalls& calls) {
  calls = fake_calls();
  return true;
}

struct Counter {
  int launches = 0, syncs = 0, begins = 0;
  static void CUPTIAPI count(void* self, CUpti_CallbackDomain, CUpti_CallbackId cbid, const void*) {
    auto* c = static_cast<Counter*>(self);
    c->launches += cbid == kLaunch;
    c->syncs += cbid == kSync;
    c->begins += cbid == kBegin;
  }
};

// capguard subscribed (as attach_cupti does) with Counter `tool` behind the switchboard, and
// its gate's reduced set on: cudaStreamBeginCapture only.
struct Fixture {
  FakeCupti fake;
  Counter tool;
  CUpti_SubscriberHandle own = nullptr;

  explicit Fixture(bool multi = false) {
    fake.multi = multi;
    g_fake = &fake;
    g_notes.clear();
    share_reset_for_tests();
    ShareHooks hooks;
    hooks.note = &record_note;
    hooks.find_cupti = &find_fake;
    share_set_hooks(hooks);
    REQUIRE(fake_subscribe(&own, &share_switchboard, &tool) == CUPTI_SUCCESS);
    share_attached(fake_calls(), own, multi ? ShareMode::Beside : ShareMode::Forward,
                   &Counter::count);
    share_own_enable_callback(1, own, kRuntime, kBegin);
  }
  ~Fixture() { share_reset_for_tests(); }
};

TEST_CASE("a second client shares capguard's subscription and gets exactly what it enabled") {
  Fixture f;
  Counter client;
  CUpti_SubscriberHandle handle = nullptr;
  REQUIRE(share_subscribe(&handle, &Counter::count, &client, nullptr, false, nullptr) ==
          CUPTI_SUCCESS);
  CHECK(handle != f.own);
  CHECK(share_enable_callback(1, handle, kRuntime, kLaunch) == CUPTI_SUCCESS);
  uint32_t state = 9;
  CHECK(share_get_callback_state(&state, handle, kRuntime, kLaunch) == CUPTI_SUCCESS);
  CHECK(state == 1);
  f.fake.fire(kRuntime, kLaunch);
  f.fake.fire(kRuntime, kBegin);
  f.fake.fire(kRuntime, kSync);  // nobody enabled it
  CHECK(client.launches == 1);
  CHECK(client.begins == 0);    // capguard's, not the client's
  CHECK(f.tool.launches == 0);  // the client's, not capguard's
  CHECK(f.tool.begins == 1);
  REQUIRE(g_notes.size() == 1);
  CHECK(g_notes[0].first == CuptiClientEvent::Forwarding);
}

TEST_CASE("capguard's gate switching its callbacks off leaves the client's on") {
  Fixture f;
  Counter client;
  CUpti_SubscriberHandle handle = nullptr;
  REQUIRE(share_subscribe(&handle, &Counter::count, &client, nullptr, false, nullptr) ==
          CUPTI_SUCCESS);
  share_enable_callback(1, handle, kRuntime, kLaunch);
  share_own_enable_domain(1, f.own, kRuntime);  // a capture begins: everything on
  f.fake.fire(kRuntime, kLaunch);
  CHECK(f.tool.launches == 1);
  CHECK(client.launches == 1);
  share_own_enable_domain(0, f.own, kRuntime);  // the gate reduces: domain off
  share_own_enable_callback(0, f.own, kRuntime, kLaunch);
  f.fake.fire(kRuntime, kLaunch);
  CHECK(f.tool.launches == 1);
  CHECK(client.launches == 2);
  // The client switches it off: now CUPTI has it off too.
  share_enable_callback(0, handle, kRuntime, kLaunch);
  f.fake.fire(kRuntime, kLaunch);
  CHECK(client.launches == 2);
  CHECK_FALSE(f.fake.on[0][kRuntime * 1024 + kLaunch]);
}

TEST_CASE("a client's domain off does not switch off what capguard has on") {
  Fixture f;
  Counter client;
  CUpti_SubscriberHandle handle = nullptr;
  REQUIRE(share_subscribe(&handle, &Counter::count, &client, nullptr, false, nullptr) ==
          CUPTI_SUCCESS);
  share_enable_domain(1, handle, kRuntime);
  f.fake.fire(kRuntime, kSync);
  f.fake.fire(kRuntime, kBegin);  // both want it: each gets it once
  CHECK(client.syncs == 1);
  CHECK(client.begins == 1);
  CHECK(f.tool.syncs == 0);
  CHECK(f.tool.begins == 1);
  share_enable_domain(0, handle, kRuntime);
  f.fake.fire(kRuntime, kSync);
  f.fake.fire(kRuntime, kBegin);
  CHECK(client.syncs == 1);
  CHECK(client.begins == 1);
  CHECK(f.tool.begins == 2);
  CHECK(f.fake.on[0][kRuntime * 1024 + kBegin]);
  CHECK_FALSE(f.fake.on[0][kRuntime * 1024 + kSync]);
}

TEST_CASE("CUPTI takes one client beside capguard: a second is refused as without capguard") {
  Fixture f;
  Counter first, second;
  CUpti_SubscriberHandle a = nullptr, b = nullptr;
  REQUIRE(share_subscribe(&a, &Counter::count, &first, nullptr, false, nullptr) == CUPTI_SUCCESS);
  char holder[64] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "second";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof(holder);
  CHECK(share_subscribe(&b, &Counter::count, &second, &params, true, nullptr) ==
        CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CHECK(std::string(holder).starts_with("CUPTI for "));
  REQUIRE(g_notes.size() == 2);
  CHECK(g_notes[1] == std::pair{CuptiClientEvent::Refused, std::string("second")});
  // Once the first left, the second may come.
  CHECK(share_unsubscribe(a) == CUPTI_SUCCESS);
  CHECK(share_subscribe(&b, &Counter::count, &second, &params, true, nullptr) == CUPTI_SUCCESS);
  CHECK(g_notes.back() == std::pair{CuptiClientEvent::Forwarding, std::string("second")});
}

TEST_CASE("a client's cuptiFinalize ends its subscription, not capguard's") {
  Fixture f;
  Counter client;
  CUpti_SubscriberHandle handle = nullptr;
  REQUIRE(share_subscribe(&handle, &Counter::count, &client, nullptr, false, nullptr) ==
          CUPTI_SUCCESS);
  share_enable_domain(1, handle, kDriver);
  CHECK(share_finalize() == CUPTI_SUCCESS);
  CHECK_FALSE(f.fake.finalized);
  f.fake.fire(kDriver, 17);
  f.fake.fire(kRuntime, kBegin);
  CHECK(client.begins == 0);
  CHECK(f.tool.begins == 1);
  CHECK(g_notes.back().first == CuptiClientEvent::Finalize);
  uint32_t state = 0;
  CHECK(share_get_callback_state(&state, handle, kDriver, 17) == CUPTI_ERROR_INVALID_PARAMETER);
  // A subscription that ended is not alive-checked as lost.
  share_check_alive();
  CHECK(g_notes.back().first == CuptiClientEvent::Finalize);
}

TEST_CASE("CUPTI finalized behind capguard's back is noted as lost at exit") {
  Fixture f;
  fake_finalize();  // a call that did not come through libcapguard.so's definitions
  share_check_alive();
  REQUIRE_FALSE(g_notes.empty());
  CHECK(g_notes.back().first == CuptiClientEvent::Lost);
}

TEST_CASE("with CUPTI's multi-subscriber mode the client subscribes to CUPTI itself") {
  Fixture f(/*multi=*/true);
  Counter client;
  CUpti_SubscriberHandle handle = nullptr;
  REQUIRE(share_subscribe(&handle, &Counter::count, &client, nullptr, false, nullptr) ==
          CUPTI_SUCCESS);
  CHECK(f.fake.subscribers.size() == 2);
  CHECK(share_enable_callback(1, handle, kRuntime, kLaunch) == CUPTI_SUCCESS);
  f.fake.fire(kRuntime, kLaunch);
  CHECK(client.launches == 1);
  CHECK(f.tool.launches == 0);
  CHECK(g_notes.back().first == CuptiClientEvent::Beside);
}

TEST_CASE("when capguard is not attached, every call goes to CUPTI unchanged") {
  FakeCupti fake;
  g_fake = &fake;
  share_reset_for_tests();
  ShareHooks hooks;
  hooks.find_cupti = &find_fake;
  share_set_hooks(hooks);
  Counter first, second;
  CUpti_SubscriberHandle a = nullptr, b = nullptr;
  CHECK(share_subscribe(&a, &Counter::count, &first, nullptr, false, nullptr) == CUPTI_SUCCESS);
  CHECK(share_subscribe(&b, &Counter::count, &second, nullptr, false, nullptr) ==
        CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CHECK(share_finalize() == CUPTI_SUCCESS);
  CHECK(fake.finalized);
  share_reset_for_tests();
}

}  // namespace
}  // namespace capguard::interposer
