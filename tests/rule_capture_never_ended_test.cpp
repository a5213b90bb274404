#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("capture-never-ended: the process ends with the capture open") {
  Sim sim;
  sim(begin(kS).stack(1))(launch(kS));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"capture-never-ended"});
  const Finding& f = r.findings[0];
  CHECK(f.severity == Severity::Warning);
  CHECK(f.api == "cudaStreamBeginCapture");
  CHECK(f.location.stack_id == 1u);
  CHECK(f.location.seq == 1u);
  CHECK(f.message.find("process ended") != std::string::npos);
  CHECK(r.captures[0].status == CaptureState::Open);
  CHECK_FALSE(r.captures[0].end.has_value());
}

TEST_CASE("capture-never-ended: a thread exits with its capture open, reported once") {
  Sim sim;
  sim.on_thread(2)(begin(kS))(launch(kS)).exit_thread(2);
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"capture-never-ended"});
  CHECK(r.findings[0].thread == 2u);
  CHECK(r.findings[0].message.find("thread exited") != std::string::npos);
}

TEST_CASE("capture-never-ended twin: ended, or already dead with its own finding") {
  Sim ended;
  ended(begin(kS))(launch(kS))(end(kS));
  CHECK(ended.finish().findings.empty());
  Sim dead;
  dead(begin(kS))(stream_sync(kS).fails(900));
  CHECK(rules_of(dead.finish()) == Rules{"sync-during-capture"});
}
