#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("cascade: one culprit followed by N failing calls is one error with N consequences") {
  for (int n : {0, 1, 5, 50}) {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(begin(kS))(launch(kS));
    sim(record(kE, kS))(wait(kS2, kE));  // a forked stream shares the capture's fate
    sim(stream_sync(kS).fails(900));
    int failing = 0;
    for (int i = 0; i + 1 < n; ++i, ++failing) {
      switch (i % 4) {
        case 0:
          sim(launch(kS).fails(901));
          break;
        case 1:
          sim(memcpy_async(kS2).fails(901));
          break;
        case 2:
          sim(record(kE, kS).fails(901));
          break;
        default:
          sim(wait(kS2, kE).fails(901));
          break;
      }
    }
    if (n > 0) {
      sim(end(kS).fails(901));
      ++failing;
    }
    const Report& r = sim.finish();
    CAPTURE(n);
    REQUIRE(rules_of(r).size() == (n == 0 ? 1u : 1u));
    CHECK(r.findings[0].rule == "sync-during-capture");
    CHECK(r.findings[0].consequences == static_cast<uint32_t>(failing));
    CHECK(r.count(Severity::Error) == 1);
  }
}

TEST_CASE("capture model: a capture's identity, mode, thread and flags") {
  Sim sim;
  sim.on_thread(7)(create_stream(kS, kNonBlocking));
  sim(begin(kS, CaptureMode::ThreadLocal).capture_id(0x99).stack(4));
  const CaptureModel& model = sim.replay.model();
  REQUIRE(model.open_captures().size() == 1);
  const Capture& c = *model.open_captures()[0];
  CHECK(c.id == 1u);
  CHECK(c.cuda_id == 0x99u);
  CHECK(c.mode == CaptureMode::ThreadLocal);
  CHECK(c.tid == 7u);
  CHECK(c.origin == StreamKey{kS, 0});
  CHECK(c.non_blocking == true);
  CHECK(c.begin.stack == 4u);
  sim(end(kS).nodes(0));
  CHECK(model.open_captures().empty());
  const Report& r = sim.finish();
  REQUIRE(r.captures.size() == 1);
  CHECK(r.captures[0].mode == CaptureMode::ThreadLocal);
  CHECK(r.captures[0].thread == 7u);
  CHECK(r.captures[0].stream == kS);
  CHECK(r.captures[0].pid == 4242u);
  CHECK(r.captures[0].end.has_value());
}

TEST_CASE("capture model: stream flags come from the begin event when creation was not seen") {
  Sim sim;
  sim(begin(kS).stream_flags(1));
  CHECK(sim.replay.model().open_captures()[0]->non_blocking == true);
  Sim blocking;
  blocking(begin(kS).stream_flags(0));
  CHECK(blocking.replay.model().open_captures()[0]->non_blocking == false);
}

TEST_CASE("capture model: forks, captured events and membership") {
  Sim sim;
  sim(begin(kS))(launch(kS))(record(kE, kS))(wait(kS2, kE));
  const Capture& c = *sim.replay.model().open_captures()[0];
  REQUIRE(c.members.size() == 2);
  CHECK(c.members[1].stream == StreamKey{kS2, 0});
  CHECK(c.members[1].fork_event == kE);
  CHECK(c.members[1].fork_record.known);
  // No work on the forked stream yet: nothing to join.
  CHECK(sim.replay.model().unjoined_members(c).empty());
  sim(launch(kS2));
  CHECK(sim.replay.model().unjoined_members(c).size() == 1);
  // Joining before more work restores the balance; work after the join unbalances it again.
  sim(record(kE2, kS2))(wait(kS, kE2));
  CHECK(sim.replay.model().unjoined_members(c).empty());
  sim(launch(kS2));
  CHECK(sim.replay.model().unjoined_members(c).size() == 1);
  // Destroying the stream takes it out of the capture's bookkeeping.
  sim(destroy_stream(kS2));
  CHECK(sim.replay.model().unjoined_members(c).empty());
}

TEST_CASE("capture model: stream 0 and the per-thread stream are resolved per thread") {
  Sim sim{Sim::EveryEvent{}};  // counts the origin's work, which real traces leave out
  sim.on_thread(1)(begin(trace::kStreamPerThread))(launch(trace::kStreamPerThread));
  // Thread 2's per-thread stream is a different stream; thread 1's _ptsz stream 0 is its own.
  sim.on_thread(2)(launch(trace::kStreamPerThread));
  sim.on_thread(1)(call("cudaLaunchKernel_ptsz").stream(0));
  const Capture& c = *sim.replay.model().open_captures()[0];
  CHECK(c.members[0].stream == StreamKey{trace::kStreamPerThread, 1});
  CHECK(c.members[0].work == 2u);
}

TEST_CASE("capture model: CUDA's capture id pulls a stream the model missed into the capture") {
  Sim sim;
  sim(begin(kS).capture_id(5))(launch(kS));
  sim(launch(kS2).capture_id(5).status_before(trace::CaptureStatus::Active));
  const Capture& c = *sim.replay.model().open_captures()[0];
  REQUIRE(c.members.size() == 2);
  CHECK(c.members[1].stream == StreamKey{kS2, 0});
  CHECK(c.members[1].work == 1u);
}

TEST_CASE("capture model: prohibition follows cudaStreamCaptureMode semantics") {
  Sim sim;
  sim.on_thread(1)(begin(kS));  // global
  const CaptureModel& model = sim.replay.model();
  CHECK(model.prohibiting(1).size() == 1);  // own capture
  CHECK(model.prohibiting(2).size() == 1);  // another thread's global capture
  sim.on_thread(2)(exchange_mode(CaptureMode::ThreadLocal));
  CHECK(model.prohibiting(2).empty());
  sim.on_thread(3)(begin(kS2, CaptureMode::Relaxed));
  CHECK(model.prohibiting(3).size() == 1);  // only thread 1's global capture
  sim.on_thread(1)(exchange_mode(CaptureMode::Relaxed));
  CHECK(model.prohibiting(1).empty());
}

TEST_CASE("capture model: thread exit leaves the capture open for others") {
  Sim sim;
  sim.on_thread(2)(begin(kS)).exit_thread(2);
  CHECK(sim.replay.model().open_captures().size() == 1);
  sim.on_thread(3)(malloc_().fails(900));  // global capture still prohibits thread 3
  const Report& r = sim.finish();
  CHECK(rules_of(r) == Rules{"capture-never-ended", "unsafe-call-during-capture"});
}

TEST_CASE("capture model: vector clocks stay within a budget; past it the capture is partial") {
  // A chain of forks, each stream forked from the one before: member k's clock has k + 1
  // entries, so 6,000 forks would hold 18M entries, past kClockBudget (16M).
  auto chain = [](Sim& sim, uint64_t first_stream, int n) {
    sim(begin(first_stream))(launch(first_stream));
    for (int k = 1; k <= n; ++k) {
      const uint64_t event = 0x900000 + first_stream + static_cast<uint64_t>(k);
      sim(record(event, first_stream + static_cast<uint64_t>(k) - 1))(
          wait(first_stream + static_cast<uint64_t>(k), event))(
          launch(first_stream + static_cast<uint64_t>(k)));
    }
  };
  Sim small;
  chain(small, 0x10000, 100);
  const Capture& s = *small.replay.model().open_captures()[0];
  CHECK_FALSE(s.clocks_dropped);
  CHECK(small.replay.model().unjoined_members(s).size() == 100);  // judged: nothing joined
  CHECK(small.replay.partial_capture_count() == 0);

  Sim sim;
  chain(sim, 0x10000, 6000);
  const Capture& c = *sim.replay.model().open_captures()[0];
  CHECK(c.clocks_dropped);
  CHECK(c.members.size() == 6001);  // still members (lanes, findings), only clocks dropped
  size_t entries = 0;
  for (const Member& m : c.members) entries += m.clock.size();
  CHECK(entries == 0);
  CHECK(sim.replay.model().unjoined_members(c).empty());  // not judged
  sim(end(0x10000));
  sim.finish();
  CHECK(sim.replay.partial_capture_count() == 1);
  REQUIRE(sim.replay.partial_captures().size() == 1);
  CHECK(sim.replay.partial_captures()[0] == 1u);
}
