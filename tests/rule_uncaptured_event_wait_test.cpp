#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("uncaptured-event-wait: waiting on an eagerly recorded event without the external flag") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  sim(launch(kS2))(record(kE, kS2).stack(8));
  sim(begin(kS))(wait(kS, kE).fails(905))(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"uncaptured-event-wait"});
  const Finding& f = r.findings[0];
  CHECK(f.result_name == "cudaErrorStreamCaptureIsolation");
  CHECK(f.message.find("cudaEventWaitExternal") != std::string::npos);
  CHECK(related(f, "event-record")->location.stack_id == 8u);
  CHECK(f.consequences == 1);
}

TEST_CASE("uncaptured-event-wait twin: cudaEventWaitExternal captures an event-wait node") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  sim(launch(kS2))(record(kE, kS2));
  sim(begin(kS))(wait(kS, kE, kWaitExternal))(launch(kS))(end(kS).nodes(2));
  CHECK(sim.finish().findings.empty());
}
