// Replay keeps memory bounded by live state: a training loop that re-captures its step every
// iteration must not make the model or the report grow with the number of steps.
#include <doctest/doctest.h>

#include <algorithm>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

namespace {

// One step: a capture with a fork and a join, then its graph launched.
void training_step(Sim& sim) {
  sim(begin(kS).stack(1))(record(kE, kS).stack(2))(wait(kS2, kE).stack(3));
  sim(launch(kS2).stack(4))(record(kE2, kS2).stack(5))(wait(kS, kE2).stack(6));
  sim(end(kS).nodes(4).stack(7))(call("cudaGraphLaunch").stream(kS).stack(8));
}

}  // namespace

TEST_CASE("replay: clean captures of a long loop are retired as they end and counted together") {
  Sim sim;
  for (uint32_t id = 1; id <= 8; ++id)
    sim.replay.define_stack(id, std::vector<uint64_t>{0x400000u + id});
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  constexpr int kSteps = 20'000;
  size_t most_held = 0;
  for (int i = 0; i < kSteps; ++i) {
    training_step(sim);
    most_held = std::max(most_held, sim.replay.model().captures().size());
  }
  CHECK(most_held < 4096);  // held until retired, never all of them
  const Report& r = sim.finish();
  CHECK(r.capture_count() == kSteps);
  // The first ones in detail, then one entry for all the others of the same site.
  REQUIRE(r.captures.size() == kCapturesInDetail + 1);
  const CaptureInfo& group = r.captures.back();
  CHECK(group.id == kCapturesInDetail + 1);
  CHECK(group.count == kSteps - kCapturesInDetail);
  CHECK(group.last_id == kSteps);
  CHECK(group.nodes == uint64_t{4});
  CHECK(group.begin.stack_id == 1u);
  for (size_t i = 0; i + 1 < r.captures.size(); ++i) CHECK(r.captures[i].id == i + 1);
}

TEST_CASE("replay: clean captures from ever new sites share one entry past the sites' bound") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking));
  constexpr uint32_t kCaptures = kCapturesInDetail + kCleanSitesInDetail + 500;
  for (uint32_t id = 1; id <= kCaptures; ++id) {
    sim.replay.define_stack(id, std::vector<uint64_t>{0x400000u + 16 * id});
    sim(begin(kS).stack(id))(end(kS).nodes(1).stack(id));
  }
  const Report& r = sim.finish();
  CHECK(r.capture_count() == kCaptures);
  REQUIRE(r.captures.size() == kCapturesInDetail + kCleanSitesInDetail + 1);
  CHECK_FALSE(r.captures[r.captures.size() - 2].other_sites);
  const CaptureInfo& rest = r.captures.back();
  CHECK(rest.other_sites);
  CHECK(rest.count == 500);
  CHECK(rest.last_id == kCaptures);
}

TEST_CASE("replay: a capture that a finding names keeps its own entry, past the detail limit") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  for (size_t i = 0; i < kCapturesInDetail + 10; ++i) training_step(sim);
  sim(begin(kS).stack(1))(launch(kS))(memcpy_sync().stack(9))(end(kS).nodes(1));  // escapes
  for (int i = 0; i < 10; ++i) training_step(sim);
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"escaped-sync-copy"});
  const uint32_t id = *r.findings[0].capture;
  CHECK(id == kCapturesInDetail + 11);
  const auto named = std::find_if(r.captures.begin(), r.captures.end(),
                                  [&](const CaptureInfo& c) { return c.id == id; });
  REQUIRE(named != r.captures.end());
  CHECK(named->count == 1);
  CHECK(r.capture_count() == kCapturesInDetail + 21);
}

TEST_CASE("replay: an event recorded in an ended capture keeps that capture for later rules") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  sim(begin(kS))(record(kE, kS))(launch(kS))(end(kS));
  for (size_t i = 0; i < 3000; ++i)  // many captures retired meanwhile, not the one kE names
    sim(begin(kS2))(launch(kS2))(end(kS2));
  sim(event_query(kE).fails(907));
  const Report& r = sim.finish();
  CHECK(rules_of(r) == Rules{"captured-event-query"});
  CHECK(r.findings[0].capture == 1u);
}
