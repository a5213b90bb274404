#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("sync-during-capture: cudaStreamSynchronize on the capturing stream") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(launch(kS));
  sim(stream_sync(kS).fails(900).stack(3));
  sim(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"sync-during-capture"});
  const Finding& f = r.findings[0];
  CHECK(f.severity == Severity::Error);
  CHECK(f.api == "cudaStreamSynchronize");
  CHECK(f.result == 900);
  CHECK(f.result_name == "cudaErrorStreamCaptureUnsupported");
  CHECK(f.message.find("stream 0x5501") != std::string::npos);
  CHECK(f.message.find("capture #1") != std::string::npos);
  CHECK(f.message.find("global mode") != std::string::npos);
  CHECK(f.capture == 1u);
  CHECK(f.capturing_thread);
  CHECK(f.pid == 4242u);
  CHECK(f.location.stack_id == 3u);
  CHECK(has_role(f, "capture-begin"));
  CHECK(f.consequences == 1);  // the EndCapture's 901
  REQUIRE(r.captures.size() == 1);
  CHECK(r.captures[0].status == CaptureState::Invalidated);
  CHECK(r.captures[0].root_cause == size_t{0});
}

TEST_CASE("sync-during-capture: device synchronize from another thread during a global capture") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(launch(kS));
  sim(device_sync().thread(2).fails(900));
  sim(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"sync-during-capture"});
  CHECK_FALSE(r.findings[0].capturing_thread);
  CHECK(r.findings[0].thread == 2u);
  CHECK(r.findings[0].message.find("thread 2") != std::string::npos);
}

TEST_CASE("sync-during-capture: driver cuCtxSynchronize is named with its CUresult") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(call("cuCtxSynchronize").fails(900));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"sync-during-capture"});
  CHECK(r.findings[0].result_name == "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED");
}

TEST_CASE("sync-during-capture twin: synchronize after EndCapture is fine") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(launch(kS))(end(kS).nodes(1));
  sim(stream_sync(kS))(device_sync());
  const Report& r = sim.finish();
  CHECK(r.findings.empty());
  REQUIRE(r.captures.size() == 1);
  CHECK(r.captures[0].status == CaptureState::Ok);
  CHECK(r.captures[0].nodes == uint64_t{1});
}

TEST_CASE("sync-during-capture: cudaGetLastError repeating the 900 is neither a finding nor folded") {
  // What PyTorch does after a failed synchronize: it asks for the error, which CUDA repeats.
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(launch(kS));
  sim(stream_sync(kS).fails(900).stack(3));
  sim(call("cudaGetLastError").fails(900));
  sim(call("cudaPeekAtLastError").fails(900));
  sim(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"sync-during-capture"});
  CHECK(r.findings[0].consequences == 1);  // the EndCapture's 901 only
}
