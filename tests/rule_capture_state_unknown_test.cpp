// Every way a capture ends besides an EndCapture on its origin, and a capture the
// model believed open that a later call showed over: said once (capture-state-unknown), and no
// later call of its thread is held against it.
#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;
using trace::CaptureStatus;

TEST_CASE("capture-state-unknown: CUDA says the origin no longer captures") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  sim(begin(kS, CaptureMode::Relaxed).capture_id(3))(launch(kS).capture_id(3));
  // Its end was never recorded; then CUDA says kS is not capturing.
  sim(record(kE, kS).status_before(CaptureStatus::None).status_after(CaptureStatus::None));
  // Later, unrelated work of this thread: no escape, no relaxed-mode call against capture #1.
  for (int i = 0; i < 7; ++i) sim(launch(kS2))(malloc_());
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"capture-state-unknown"});
  const Finding& f = r.findings[0];
  CHECK(f.severity == Severity::Note);
  CHECK(f.capture == 1u);
  CHECK(f.message.find("CUDA said at cudaEventRecord that stream 0x5501 was not capturing") !=
        std::string::npos);
  // The launch on its origin is its body, which the interposer does not record: the begin is
  // the last call of it the trace holds.
  CHECK(f.message.find("its state after its last known call (cudaStreamBeginCapture") !=
        std::string::npos);
}

TEST_CASE("capture-state-unknown: a synchronize CUDA refuses during a capture succeeded") {
  SUBCASE("of the origin stream") {
    Sim sim;
    // Recorded where the interposer knew the capture over (its own status query at a call the
    // model did not get); while it believes one open, a successful call on the origin is body.
    sim.every_event = true;
    sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
    sim(begin(kS, CaptureMode::Relaxed))(launch(kS))(stream_sync(kS));
    sim(launch(kS2))(malloc_());
    CHECK(rules_of(sim.finish()) == Rules{"capture-state-unknown"});
  }
  SUBCASE("of an event recorded in the capture") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
    sim(begin(kS, CaptureMode::Relaxed))(launch(kS))(record(kE, kS))(event_sync(kE));
    sim(launch(kS2))(malloc_());
    CHECK(rules_of(sim.finish()) == Rules{"capture-state-unknown"});
  }
  SUBCASE("another capture's id on its stream") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
    sim(begin(kS, CaptureMode::Relaxed).capture_id(3))(launch(kS).capture_id(3));
    sim(record(kE, kS).capture_id(9).status_after(CaptureStatus::Active));
    sim(launch(kS2));
    CHECK(rules_of(sim.finish()) == Rules{"capture-state-unknown"});
  }
}

TEST_CASE("capture-state-unknown: said once, however many calls follow") {
  Sim sim;
  sim.every_event = true;  // as above: the interposer knew, and recorded the syncs
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  sim(begin(kS, CaptureMode::Relaxed))(launch(kS))(stream_sync(kS))(stream_sync(kS));
  sim(launch(kS).status_after(CaptureStatus::None))(launch(kS2));
  CHECK(rules_of(sim.finish()) == Rules{"capture-state-unknown"});
}

TEST_CASE("capture-state-unknown twins: the capture is still open, or was ended as seen") {
  SUBCASE("CUDA says the origin is capturing: the escape stays an escape") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
    sim(begin(kS, CaptureMode::Relaxed).capture_id(3));
    sim(launch(kS).capture_id(3).status_after(CaptureStatus::Active))(launch(kS2))(end(kS));
    CHECK(rules_of(sim.finish()) == Rules{"escaped-side-stream-work"});
  }
  SUBCASE("an ended capture: a synchronize after it says nothing") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    sim(begin(kS))(launch(kS))(end(kS))(stream_sync(kS))(launch(kS2));
    CHECK(sim.finish().findings.empty());
  }
}

// The ends CUDA makes without an EndCapture that succeeded: the model ends the capture there,
// silently, and later work of its thread on other streams is no escape.
TEST_CASE("capture model: every way a capture ends") {
  auto later_work = [](Sim& sim) {
    for (int i = 0; i < 3; ++i) sim(launch(kS3))(malloc_());
  };
  SUBCASE("its origin stream destroyed") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(create_stream(kS3, kNonBlocking));
    sim(begin(kS, CaptureMode::Relaxed))(launch(kS))(destroy_stream(kS));
    CHECK(sim.replay.model().open_captures().empty());
    later_work(sim);
    const Report& r = sim.finish();
    CHECK(r.findings.empty());  // no capture-never-ended either: it did end
  }
  SUBCASE("a forked stream destroyed: the capture goes on") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
    sim(create_stream(kS3, kNonBlocking))(begin(kS, CaptureMode::Relaxed));
    sim(record(kE, kS))(wait(kS2, kE))(destroy_stream(kS2));
    CHECK(sim.replay.model().open_captures().size() == 1);
    sim(launch(kS3))(end(kS));
    CHECK(rules_of(sim.finish()) == Rules{"escaped-side-stream-work"});
  }
  SUBCASE("its EndCapture failed (a sticky error)") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(create_stream(kS3, kNonBlocking));
    sim(begin(kS, CaptureMode::Relaxed))(launch(kS))(end(kS).fails(700));
    CHECK(sim.replay.model().open_captures().empty());
    later_work(sim);
    for (const Finding& f : sim.finish().findings) {
      CHECK(f.rule != "escaped-side-stream-work");
      CHECK(f.rule != "relaxed-mode-unsafe-call");
    }
  }
  SUBCASE("its EndCapture said the stream was not capturing (401)") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(create_stream(kS3, kNonBlocking));
    sim(begin(kS, CaptureMode::Relaxed))(launch(kS))(end(kS).fails(401));
    CHECK(sim.replay.model().open_captures().empty());
    later_work(sim);
    CHECK(rules_of(sim.finish()) == Rules{"end-capture-misuse"});
  }
  SUBCASE("invalidated, then a new BeginCapture on the same stream") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(create_stream(kS3, kNonBlocking));
    sim(begin(kS))(stream_sync(kS).fails(900));
    sim(begin(kS, CaptureMode::Relaxed))(launch(kS))(end(kS));
    CHECK(sim.replay.model().open_captures().empty());
    later_work(sim);
    const Report& r = sim.finish();
    CHECK(rules_of(r) == Rules{"sync-during-capture"});
    REQUIRE(r.captures.size() == 2);
  }
  SUBCASE("a new BeginCapture on a stream forked into a capture whose end was not seen") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
    sim(create_stream(kS3, kNonBlocking))(begin(kS, CaptureMode::Relaxed));
    sim(record(kE, kS))(wait(kS2, kE))(begin(kS2))(end(kS2));
    CHECK(sim.replay.model().open_captures().empty());
    later_work(sim);
    CHECK(rules_of(sim.finish()) == Rules{"capture-state-unknown"});
  }
  SUBCASE("cuStreamBeginCaptureToGraph ends like any capture") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(create_stream(kS3, kNonBlocking));
    sim(call("cuStreamBeginCaptureToGraph").stream(kS).mode(CaptureMode::Relaxed));
    CHECK(sim.replay.model().open_captures().size() == 1);
    sim(launch(kS))(call("cuStreamEndCapture").stream(kS));
    CHECK(sim.replay.model().open_captures().empty());
    later_work(sim);
    CHECK(sim.finish().findings.empty());
  }
}

TEST_CASE("capture model: a context destroyed or reset ends its captures") {
  for (const char* api : {"cudaDeviceReset", "cuCtxDestroy_v2", "cuDevicePrimaryCtxReset_v2"}) {
    CAPTURE(api);
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
    sim(begin(kS, CaptureMode::Relaxed))(launch(kS))(call(api));
    CHECK(sim.replay.model().open_captures().empty());
    sim(create_stream(kS3, kNonBlocking))(launch(kS3))(malloc_());
    CHECK(sim.finish().findings.empty());
  }
}
