#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("captured-event-query: cudaEventQuery on an event recorded in the capture") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(launch(kS));
  sim(record(kE, kS).stack(5));
  sim(event_query(kE).fails(907));
  sim(event_sync(kE).fails(1));  // measured: InvalidValue afterwards, a consequence
  sim(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"captured-event-query"});
  const Finding& f = r.findings[0];
  CHECK(f.result_name == "cudaErrorCapturedEvent");
  CHECK(f.message.find("event 0xe1") != std::string::npos);
  CHECK(f.capture == 1u);
  const Related* rec = related(f, "event-record");
  REQUIRE(rec);
  CHECK(rec->location.stack_id == 5u);
  CHECK(f.consequences == 2);
}

TEST_CASE("captured-event-query twin: querying the event after EndCapture, or an eager event") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  sim(record(kE2, kS2));  // eager
  sim(begin(kS))(launch(kS))(record(kE, kS))(event_query(kE2))(end(kS));
  sim(event_query(kE))(event_sync(kE));
  CHECK(sim.finish().findings.empty());
}
