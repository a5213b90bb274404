#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("unsupported-during-capture: cudaStreamAttachMemAsync on the capturing stream") {
  Sim sim;
  sim(begin(kS))(call("cudaStreamAttachMemAsync").stream(kS).fails(900))(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"unsupported-during-capture"});
  CHECK(r.findings[0].capture == 1u);
  CHECK(r.findings[0].consequences == 1);
}

TEST_CASE("unsupported-during-capture: legacy cudaStreamAddCallback, with the hint") {
  Sim sim;
  sim(begin(kS))(call("cudaStreamAddCallback_ptsz").stream(kS).fails(900));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"unsupported-during-capture"});
  CHECK(r.findings[0].message.find("cudaLaunchHostFunc") != std::string::npos);
}

TEST_CASE("unsupported-during-capture twin: cudaLaunchHostFunc is captured") {
  Sim sim;
  sim(begin(kS))(call("cudaLaunchHostFunc").stream(kS))(end(kS).nodes(1));
  CHECK(sim.finish().findings.empty());
}
