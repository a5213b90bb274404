#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("cross-capture-event-wait: both captures die, both point at one finding") {
  Sim sim;
  sim(begin(kS))(launch(kS))(record(kE, kS).stack(21));
  sim(begin(kS2))(launch(kS2));
  sim(wait(kS2, kE).fails(902));
  sim(end(kS).fails(901))(end(kS2).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"cross-capture-event-wait"});
  const Finding& f = r.findings[0];
  CHECK(f.result_name == "cudaErrorStreamCaptureMerge");
  CHECK(f.capture == 2u);
  CHECK(f.message.find("capture #1") != std::string::npos);
  CHECK(f.message.find("capture #2") != std::string::npos);
  CHECK(related(f, "event-record")->location.stack_id == 21u);
  CHECK(has_role(f, "other-capture-begin"));
  CHECK(f.consequences == 2);
  REQUIRE(r.captures.size() == 2);
  for (const CaptureInfo& c : r.captures) {
    CHECK(c.status == CaptureState::Invalidated);
    CHECK(c.root_cause == size_t{0});
  }
}

TEST_CASE("cross-capture-event-wait twin: waiting on an event of the same capture is a fork") {
  Sim sim;
  sim(begin(kS))(launch(kS))(record(kE, kS))(wait(kS2, kE))(launch(kS2));
  sim(record(kE2, kS2))(wait(kS, kE2))(end(kS));
  CHECK(sim.finish().findings.empty());
}
