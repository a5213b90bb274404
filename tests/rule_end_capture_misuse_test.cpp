#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("end-capture-misuse: EndCapture on a forked stream (903)") {
  Sim sim;
  sim(begin(kS))(launch(kS))(record(kE, kS))(wait(kS2, kE))(launch(kS2));
  sim(end(kS2).fails(903));
  sim(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"end-capture-misuse"});
  CHECK(r.findings[0].message.find("not its origin") != std::string::npos);
  CHECK(r.findings[0].capture == 1u);
  CHECK(r.findings[0].consequences == 1);
  CHECK(r.captures[0].status == CaptureState::Invalidated);
}

TEST_CASE("end-capture-misuse: EndCapture from another thread (908), then the origin's 401") {
  Sim sim;
  sim(begin(kS))(launch(kS));
  sim(end(kS).thread(2).fails(908));
  sim(end(kS).fails(401));  // the origin thread finds the capture terminated
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"end-capture-misuse"});
  const Finding& f = r.findings[0];
  CHECK(f.result_name == "cudaErrorStreamCaptureWrongThread");
  CHECK_FALSE(f.capturing_thread);
  CHECK(f.consequences == 1);
  CHECK(r.captures[0].status == CaptureState::Invalidated);
}

TEST_CASE("end-capture-misuse: EndCapture on a stream that is not capturing (401)") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(end(kS).fails(401));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"end-capture-misuse"});
  CHECK(r.findings[0].result_name == "cudaErrorIllegalState");
  CHECK(r.findings[0].message.find("not capturing") != std::string::npos);
}

TEST_CASE("end-capture-misuse: BeginCapture twice; the first capture continues") {
  Sim sim;
  sim(begin(kS))(launch(kS))(begin(kS).fails(401))(launch(kS))(end(kS).nodes(2));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"end-capture-misuse"});
  CHECK(r.findings[0].message.find("already capturing") != std::string::npos);
  REQUIRE(r.captures.size() == 1);
  CHECK(r.captures[0].status == CaptureState::Ok);
}

TEST_CASE("end-capture-misuse twin: a relaxed capture may be ended from another thread") {
  Sim sim;
  sim(begin(kS, CaptureMode::Relaxed))(launch(kS))(end(kS).thread(2));
  const Report& r = sim.finish();
  CHECK(r.findings.empty());
  CHECK(r.captures[0].status == CaptureState::Ok);
}
