#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("escaped-legacy-work: a kernel on stream 0 while a non-blocking stream captures") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(launch(kS));
  sim(launch(0).stack(6))(memcpy_async(trace::kStreamLegacy));
  sim(end(kS).nodes(1));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"escaped-legacy-work", "escaped-legacy-work"});
  CHECK(r.findings[0].message.find("legacy NULL stream") != std::string::npos);
  CHECK(r.findings[0].location.stack_id == 6u);
  CHECK(r.findings[1].api == "cudaMemcpyAsync");
}

TEST_CASE("escaped-legacy-work twin: in a per-thread build stream 0 is the per-thread stream") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(call("cudaLaunchKernel_ptsz").stream(0));
  sim(end(kS));
  // Not the legacy stream, but still not in the capture: a side-stream escape.
  CHECK(rules_of(sim.finish()) == Rules{"escaped-side-stream-work"});
}

TEST_CASE("escaped-legacy-work twin: another thread's legacy work during a thread-local capture") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS, CaptureMode::ThreadLocal))(launch(kS));
  sim(launch(0).thread(2))(end(kS));
  CHECK(sim.finish().findings.empty());
}
