#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("escaped-sync-copy: cudaMemcpy accepted while a non-blocking stream captures") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(launch(kS));
  sim(memcpy_sync().stack(9));
  sim(launch(kS))(end(kS).nodes(2));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"escaped-sync-copy"});
  const Finding& f = r.findings[0];
  CHECK(f.severity == Severity::Warning);
  CHECK(f.api == "cudaMemcpy");
  CHECK(f.result_name == "cudaSuccess");
  CHECK(f.capture == 1u);
  CHECK(f.capturing_thread);
  CHECK(f.location.stack_id == 9u);
  CHECK(r.captures[0].status == CaptureState::Ok);
}

TEST_CASE("escaped-sync-copy: memset, driver and per-thread (_ptds) variants") {
  for (const char* api :
       {"cudaMemset", "cuMemsetD32_v2", "cudaMemcpyToSymbol_ptds", "cuMemcpyHtoD_v2"}) {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(begin(kS))(call(api))(end(kS));
    CAPTURE(api);
    CHECK(rules_of(sim.finish()) == Rules{"escaped-sync-copy"});
  }
}

TEST_CASE("escaped-sync-copy twin: with a blocking stream CUDA refuses it (906)") {
  Sim sim;
  sim(create_stream(kS, kBlocking))(begin(kS))(memcpy_sync().fails(906))(end(kS).fails(901));
  CHECK(rules_of(sim.finish()) == Rules{"legacy-stream-during-capture"});
}

TEST_CASE(
    "escaped-sync-copy twin: another thread's copy during a thread-local capture is eager "
    "by design") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS, CaptureMode::ThreadLocal))(launch(kS));
  sim(memcpy_sync().thread(2))(memset_sync().thread(2));
  sim(end(kS));
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("escaped-sync-copy twin: copies before and after the capture") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(memcpy_sync())(begin(kS))(launch(kS))(end(kS));
  sim(memcpy_sync());
  CHECK(sim.finish().findings.empty());
}
