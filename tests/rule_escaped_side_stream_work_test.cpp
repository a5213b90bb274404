#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("escaped-side-stream-work: the capturing thread launches on a stream never forked in") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  sim(begin(kS))(launch(kS))(launch(kS2).stack(2))(end(kS));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"escaped-side-stream-work"});
  CHECK(r.findings[0].message.find("stream 0x5502") != std::string::npos);
  CHECK(r.findings[0].message.find("capture #1") != std::string::npos);
}

TEST_CASE("escaped-side-stream-work twin: the side stream was forked into the capture") {
  Sim sim;
  sim(begin(kS))(launch(kS))(record(kE, kS))(wait(kS2, kE))(launch(kS2));
  sim(record(kE2, kS2))(wait(kS, kE2))(end(kS));
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("escaped-side-stream-work twin: other threads' streams are theirs") {
  Sim sim;
  sim(begin(kS))(launch(kS))(launch(kS2).thread(2))(end(kS));
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("escaped-side-stream-work twin: CUDA says the stream is capturing") {
  Sim sim;
  sim(begin(kS).capture_id(77))(launch(kS));
  sim(launch(kS2)
          .capture_id(77)
          .status_before(trace::CaptureStatus::Active)
          .status_after(trace::CaptureStatus::Active));
  CHECK(sim.finish().findings.size() == 1);  // only capture-never-ended
}
