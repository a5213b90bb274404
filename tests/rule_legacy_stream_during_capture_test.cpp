#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("legacy-stream-during-capture: a kernel on stream 0 while a blocking stream captures") {
  Sim sim;
  sim(create_stream(kS, kBlocking))(begin(kS))(launch(kS));
  sim(launch(0).fails(906));
  sim(launch(kS).fails(901))(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"legacy-stream-during-capture"});
  CHECK(r.findings[0].result_name == "cudaErrorStreamCaptureImplicit");
  CHECK(r.findings[0].capture == 1u);
  CHECK(r.findings[0].consequences == 2);
}

TEST_CASE("legacy-stream-during-capture: synchronous cudaMemcpy with a blocking capture stream") {
  Sim sim;
  sim(create_stream(kS, kBlocking))(begin(kS))(memcpy_sync().fails(906))(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"legacy-stream-during-capture"});
  CHECK(r.findings[0].message.find("synchronous") != std::string::npos);
}

TEST_CASE("legacy-stream-during-capture: cudaStreamQuery(0) and cuMemcpyHtoD_v2 are 906 too") {
  Sim sim;
  sim(create_stream(kS, kBlocking))(begin(kS))(stream_sync(0).fails(906));
  CHECK(rules_of(sim.finish()) == Rules{"legacy-stream-during-capture"});
  Sim driver;
  driver(create_stream(kS, kBlocking))(begin(kS))(call("cuMemcpyHtoD_v2").fails(906));
  CHECK(rules_of(driver.finish()) == Rules{"legacy-stream-during-capture"});
}

TEST_CASE("legacy-stream-during-capture: BeginCapture on the legacy stream") {
  Sim sim;
  sim(begin(0).fails(900));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"legacy-stream-during-capture"});
  CHECK_FALSE(r.findings[0].capture.has_value());
  CHECK(r.captures.empty());
}

TEST_CASE("legacy-stream-during-capture twin: capturing the per-thread stream is fine") {
  Sim sim;
  sim(begin(trace::kStreamPerThread))(launch(trace::kStreamPerThread))(
      end(trace::kStreamPerThread));
  const Report& r = sim.finish();
  CHECK(r.findings.empty());
  REQUIRE(r.captures.size() == 1);
  CHECK(r.captures[0].status == CaptureState::Ok);
}
