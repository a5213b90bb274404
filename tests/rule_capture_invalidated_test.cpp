#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("capture-invalidated: a 901 that no earlier call explains becomes the root") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(launch(kS));
  sim(launch(kS).fails(901).stack(4));  // the culprit is invisible to the trace
  sim(memcpy_async(kS).fails(901))(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"capture-invalidated"});
  const Finding& f = r.findings[0];
  CHECK(f.severity == Severity::Error);
  CHECK(f.capture == 1u);
  CHECK(f.location.stack_id == 4u);
  CHECK(f.consequences == 2);
  CHECK(r.captures[0].status == CaptureState::Invalidated);
  CHECK(r.captures[0].root_cause == size_t{0});
}

TEST_CASE("capture-invalidated: a call CUDA accepted but that left the capture invalidated") {
  Sim sim;
  sim(begin(kS))(
      call("cudaSomethingNew").stream(kS).status_after(trace::CaptureStatus::Invalidated));
  sim(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"capture-invalidated"});
  CHECK(r.findings[0].api == "cudaSomethingNew");
  CHECK(r.findings[0].consequences == 1);
}

TEST_CASE("capture-invalidated: 901s with no capture in sight fold under the first one") {
  Sim sim;
  sim(launch(kS).fails(901))(launch(kS).fails(901))(launch(kS2).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"capture-invalidated"});
  CHECK_FALSE(r.findings[0].capture.has_value());
  CHECK(r.findings[0].consequences == 2);
}

TEST_CASE("capture-invalidated twin: not reported when a rule names the culprit") {
  Sim sim;
  sim(begin(kS))(stream_sync(kS).fails(900))(launch(kS).fails(901))(end(kS).fails(901));
  CHECK(rules_of(sim.finish()) == Rules{"sync-during-capture"});
}
