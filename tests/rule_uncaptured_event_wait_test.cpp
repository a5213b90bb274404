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
  // The record outside any capture is not in real traces (the interposer does not write it).
  CHECK(related(f, "event-record") == nullptr);
  CHECK(f.consequences == 1);
}

TEST_CASE("uncaptured-event-wait: an event recorded in a capture that has ended shows its record") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  sim(begin(kS2))(record(kE, kS2).stack(8))(end(kS2).nodes(1));
  sim(begin(kS))(wait(kS, kE).fails(905))(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"uncaptured-event-wait"});
  REQUIRE(related(r.findings[0], "event-record") != nullptr);
  CHECK(related(r.findings[0], "event-record")->location.stack_id == 8u);
}

TEST_CASE("uncaptured-event-wait twin: cudaEventWaitExternal captures an event-wait node") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  sim(launch(kS2))(record(kE, kS2));
  sim(begin(kS))(wait(kS, kE, kWaitExternal))(launch(kS))(end(kS).nodes(2));
  CHECK(sim.finish().findings.empty());
}
