#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("relaxed-mode-unsafe-call: cudaMalloc inside a relaxed capture") {
  Sim sim;
  sim(begin(kS, CaptureMode::Relaxed))(malloc_())(launch(kS))(end(kS));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"relaxed-mode-unsafe-call"});
  CHECK(r.findings[0].severity == Severity::Note);
  CHECK(r.findings[0].message.find("relaxed mode") != std::string::npos);
}

TEST_CASE("relaxed-mode-unsafe-call: a thread exchanged its mode to slip past a global capture") {
  Sim sim;
  sim(begin(kS))(launch(kS));
  sim.on_thread(2)(exchange_mode(CaptureMode::Relaxed))(malloc_());
  sim.on_thread(1)(end(kS));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"relaxed-mode-unsafe-call"});
  CHECK(r.findings[0].thread == 2u);
  CHECK_FALSE(r.findings[0].capturing_thread);
  CHECK(r.findings[0].message.find("set its capture interaction mode") != std::string::npos);
}

TEST_CASE(
    "relaxed-mode-unsafe-call twin: allocation outside capture, or beside a thread-local "
    "capture") {
  Sim sim;
  sim(malloc_())(begin(kS, CaptureMode::ThreadLocal))(launch(kS));
  sim(malloc_().thread(2))(end(kS))(malloc_());
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("relaxed-mode-unsafe-call twin: no reason visible in the trace, no note") {
  // CUDA accepted an allocation the model would have forbidden: the model missed something
  // (an untraced mode exchange), so it claims nothing.
  Sim sim;
  sim(begin(kS))(malloc_())(end(kS));
  CHECK(sim.finish().findings.empty());
}
