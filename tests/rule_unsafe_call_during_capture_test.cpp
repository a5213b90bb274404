#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("unsafe-call-during-capture: cudaMalloc on the capturing thread") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(malloc_().fails(900))(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"unsafe-call-during-capture"});
  CHECK(r.findings[0].capturing_thread);
  CHECK(r.findings[0].api == "cudaMalloc");
  CHECK(r.findings[0].consequences == 1);
}

TEST_CASE("unsafe-call-during-capture: another thread allocates during a global capture") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(launch(kS));
  sim(malloc_().thread(2).fails(900));
  sim(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"unsafe-call-during-capture"});
  const Finding& f = r.findings[0];
  CHECK_FALSE(f.capturing_thread);
  CHECK(f.thread == 2u);
  CHECK(f.capture == 1u);
  CHECK(f.message.find("thread 2") != std::string::npos);
  CHECK(f.consequences == 1);
}

TEST_CASE("unsafe-call-during-capture: driver cuMemAlloc_v2 in a thread-local capture") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS, CaptureMode::ThreadLocal));
  sim(call("cuMemAlloc_v2").fails(900));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"unsafe-call-during-capture"});
  CHECK(r.findings[0].result_name == "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED");
  CHECK(r.findings[0].message.find("thread_local") != std::string::npos);
}

TEST_CASE(
    "unsafe-call-during-capture twin: other threads may allocate during thread-local "
    "and relaxed captures") {
  for (CaptureMode mode : {CaptureMode::ThreadLocal, CaptureMode::Relaxed}) {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(begin(kS, mode))(launch(kS));
    sim(malloc_().thread(2))(call("cudaFree").thread(2));
    sim(end(kS));
    CHECK(sim.finish().findings.empty());
  }
}
