// Capture rehearsal: model/rehearsal.h through the replay, from synthetic events.
#include "model/rehearsal.h"

#include <doctest/doctest.h>

#include "engine/analyzer.h"
#include "engine/rehearsal_items.h"
#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

namespace {

// One execution of a region "step" on stream kS: a launch, then `extra` calls.
template <class... Extra>
void step(Sim& sim, Extra... extra) {
  sim.range_push("step");
  sim(launch(kS));
  (sim(extra), ...);
  sim.range_pop();
}

const RehearsalInfo& only_rehearsal(const Report& r) {
  REQUIRE(r.rehearsals.size() == 1);
  return r.rehearsals[0];
}

}  // namespace

TEST_SUITE("rehearsal_test") {
  TEST_CASE("a sync in every execution: sync-during-capture, rehearsed, not capturable") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    for (int i = 0; i < 3; ++i) step(sim, stream_sync(kS).stack(5));
    const Report& r = sim.finish();
    REQUIRE(rules_of(r) == Rules{"sync-during-capture"});  // one finding for the three
    const Finding& f = r.findings[0];
    CHECK(f.rehearsed);
    CHECK(f.region == "step");
    CHECK(f.result == 0);
    CHECK(f.location.stack_id == 5u);
    CHECK(f.message.find("rehearsed region \"step\"") != std::string::npos);
    CHECK(f.message.find("global mode") != std::string::npos);
    const RehearsalInfo& info = only_rehearsal(r);
    CHECK(info.executions == 3);
    CHECK(info.verdict == RehearsalVerdict::NotCapturable);
    REQUIRE(info.breaks.size() == 1);
    CHECK(info.breaks[0].what == "synchronize");
    CHECK(info.breaks[0].rule == "sync-during-capture");
    CHECK(info.breaks[0].executions == 3);
    CHECK(info.breaks[0].location.stack_id == 5u);
    CHECK(r.captures.empty());
  }

  TEST_CASE("an allocation in the first execution only: capturable after 1 warm-up") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    step(sim, malloc_().stack(7));
    step(sim);
    step(sim);
    const Report& r = sim.finish();
    CHECK(rules_of(r) == Rules{"unsafe-call-during-capture"});
    const RehearsalInfo& info = only_rehearsal(r);
    CHECK(info.verdict == RehearsalVerdict::AfterWarmup);
    CHECK(info.warmups == 1);
    REQUIRE(info.warmup.size() == 1);
    CHECK(info.warmup[0].what == "allocation");
    CHECK(info.warmup[0].api == "cudaMalloc");
    CHECK(info.warmup[0].executions == 1);
    CHECK(info.breaks.empty());
  }

  TEST_CASE("the last execution that broke decides the warm-ups, over any number of them") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    step(sim, malloc_().stack(7));
    step(sim);
    step(sim, device_sync().stack(8));
    for (int i = 0; i < 10000; ++i) step(sim);
    const Report& r = sim.finish();
    const RehearsalInfo& info = only_rehearsal(r);
    CHECK(info.executions == 10003);
    CHECK(info.verdict == RehearsalVerdict::AfterWarmup);
    CHECK(info.warmups == 3);
    REQUIRE(info.warmup.size() == 2);
    CHECK(info.warmup[0].what == "allocation");
    CHECK(info.warmup[1].what == "synchronize");
    CHECK(sim.replay.rehearsal().regions().size() == 1);
  }

  TEST_CASE("clean executions: capturable, no finding") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    step(sim, memcpy_async(kS));
    step(sim, memcpy_async(kS));
    const Report& r = sim.finish();
    CHECK(r.findings.empty());
    CHECK(only_rehearsal(r).verdict == RehearsalVerdict::Capturable);
    CHECK(only_rehearsal(r).executions == 2);
  }

  TEST_CASE("the mode decides: relaxed lets the allocation pass, with the note") {
    Sim sim;
    sim.replay.set_rehearse_mode(CaptureMode::Relaxed);
    sim(create_stream(kS, kNonBlocking));
    step(sim, malloc_());
    const Report& r = sim.finish();
    CHECK(rules_of(r) == Rules{"relaxed-mode-unsafe-call"});
    CHECK(only_rehearsal(r).mode == CaptureMode::Relaxed);
  }

  TEST_CASE("another thread's allocation breaks a global-mode region, not a thread_local one") {
    for (const auto mode : {CaptureMode::Global, CaptureMode::ThreadLocal}) {
      Sim sim;
      sim.replay.set_rehearse_mode(mode);
      sim(create_stream(kS, kNonBlocking));
      sim.range_push("step");
      sim(launch(kS));
      sim(malloc_().thread(2));
      sim.range_pop();
      const Report& r = sim.finish();
      if (mode == CaptureMode::Global) {
        REQUIRE(rules_of(r) == Rules{"unsafe-call-during-capture"});
        CHECK(r.findings[0].thread == 2u);
        CHECK_FALSE(r.findings[0].capturing_thread);
      } else {
        CHECK(r.findings.empty());
      }
    }
  }

  TEST_CASE("synchronous copies: escaped on a non-blocking stream, 906 on a blocking one") {
    Sim nb;
    nb(create_stream(kS, kNonBlocking));
    step(nb, memcpy_sync());
    CHECK(rules_of(nb.finish()) == Rules{"escaped-sync-copy"});
    Sim b;
    b(create_stream(kS, kBlocking));
    step(b, memcpy_sync());
    CHECK(rules_of(b.finish()) == Rules{"legacy-stream-during-capture"});
  }

  TEST_CASE("fork and join: a forked stream joined back is fine, one left unjoined is not") {
    Sim joined;
    joined(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
    joined.range_push("step");
    joined(launch(kS))(record(kE, kS))(wait(kS2, kE))(launch(kS2))(record(kE2, kS2))(wait(kS, kE2));
    joined.range_pop();
    CHECK(joined.finish().findings.empty());

    Sim unjoined;
    unjoined(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
    unjoined.range_push("step");
    unjoined(launch(kS))(record(kE, kS))(wait(kS2, kE))(launch(kS2).stack(9));
    unjoined.range_pop();
    const Report& r = unjoined.finish();
    REQUIRE(rules_of(r) == Rules{"unjoined-fork"});
    CHECK(r.findings[0].location.stack_id == 9u);
    CHECK(r.findings[0].rehearsed);
  }

  TEST_CASE("work on a stream never forked in escapes; a captured event's query is 907") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
    step(sim, launch(kS2), record(kE, kS), event_query(kE));
    CHECK(rules_of(sim.finish()) == Rules{"escaped-side-stream-work", "captured-event-query"});
  }

  TEST_CASE("a real capture inside a rehearsed region is judged by the real rules alone") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    sim.range_push("step");
    sim(begin(kS))(launch(kS));
    sim(stream_sync(kS).fails(900));
    sim(end(kS).fails(901));
    sim.range_pop();
    const Report& r = sim.finish();
    REQUIRE(rules_of(r) == Rules{"sync-during-capture"});
    CHECK_FALSE(r.findings[0].rehearsed);
    CHECK(only_rehearsal(r).verdict == RehearsalVerdict::Capturable);
  }

  TEST_CASE("calls outside rehearsed regions are not judged") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(malloc_())(launch(kS))(stream_sync(kS));
    const Report& r = sim.finish();
    CHECK(r.findings.empty());
    CHECK(r.rehearsals.empty());
  }

  TEST_CASE("a region still open when the trace ends counts as ended") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    sim.range_push("step");
    sim(launch(kS))(device_sync());
    const Report& r = sim.finish();
    CHECK(rules_of(r) == Rules{"sync-during-capture"});
    CHECK(only_rehearsal(r).verdict == RehearsalVerdict::NotCapturable);
  }

  TEST_CASE("the message numbers executions from 1") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    step(sim, malloc_());
    const Report& r = sim.finish();
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].message.find("(execution 1, global mode)") != std::string::npos);
  }

  TEST_CASE("an allocation right after a capture query takes the capture-aware path: not judged") {
    // PyTorch's caching allocator asks cudaStreamIsCapturing, then allocates in relaxed mode
    // when the stream captures (c10 cudaMallocMaybeCapturing), on any thread.
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    sim.range_push("step");
    sim(launch(kS))(call("cudaStreamIsCapturing").stream(kS))(malloc_());
    sim(call("cudaStreamIsCapturing").stream(kS).thread(2))(malloc_().thread(2));
    sim(malloc_().stack(9));  // not after a query: judged
    // Another thread asking about a stream that is not the region's: that stream would not
    // capture, so its allocation would still break a global-mode capture.
    sim(create_stream(kS2, kNonBlocking).thread(3));
    sim(call("cudaStreamIsCapturing").stream(kS2).thread(3))(malloc_().thread(3).stack(11));
    sim.range_pop();
    const Report& r = sim.finish();
    REQUIRE(rules_of(r) == Rules{"unsafe-call-during-capture", "unsafe-call-during-capture"});
    CHECK(r.findings[0].location.stack_id == 9u);
    CHECK(r.findings[1].location.stack_id == 11u);
  }

  TEST_CASE("the calling thread's exchanged capture mode decides an allocation") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    sim(exchange_mode(CaptureMode::Relaxed));  // the region's thread
    sim(exchange_mode(CaptureMode::ThreadLocal).thread(2));
    sim.range_push("step");
    sim(launch(kS))(malloc_());         // relaxed: allowed
    sim(malloc_().thread(2));           // thread_local on another thread: allowed
    sim(malloc_().thread(3).stack(4));  // global on another thread: prohibited
    sim.range_pop();
    const Report& r = sim.finish();
    REQUIRE(rules_of(r) == Rules{"unsafe-call-during-capture"});
    CHECK(r.findings[0].thread == 3u);
  }

  TEST_CASE("not capturable: the list also names what only the first executions did") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    step(sim, malloc_().stack(7), stream_sync(kS).stack(5));
    step(sim, stream_sync(kS).stack(5));
    const Report& r = sim.finish();
    const RehearsalInfo& info = only_rehearsal(r);
    CHECK(info.verdict == RehearsalVerdict::NotCapturable);
    REQUIRE(info.breaks.size() == 1);
    CHECK(info.breaks[0].what == "synchronize");
    REQUIRE(info.warmup.size() == 1);
    CHECK(info.warmup[0].what == "allocation");
    CHECK(info.warmup[0].executions == 1);
  }

  TEST_CASE("a --rehearse glob no region matched: never_executed, and the analysis incomplete") {
    Analysis analysis;
    analysis.rehearse_globs = {"st*", "decode"};
    analysis.report.rehearsals.push_back({});
    analysis.report.rehearsals.back().name = "step";
    name_regions_never_executed(analysis);
    REQUIRE(analysis.report.rehearsals.size() == 2);
    CHECK(analysis.report.rehearsals[1].name == "decode");
    CHECK(analysis.report.rehearsals[1].verdict == RehearsalVerdict::NeverExecuted);
    REQUIRE(analysis.incomplete.size() == 1);
    CHECK(analysis.incomplete[0].find("--rehearse decode") == 0);
  }

  TEST_CASE("items below one user line merge into one: APIs and categories joined, calls counted") {
    const auto item = [](std::string api, std::string what, int line, uint32_t executions) {
      RehearsalItem i;
      i.api = std::move(api);
      i.what = std::move(what);
      i.rule = "unsafe-call-during-capture";
      i.executions = executions;
      i.location.frames = {Frame{1, "cublasCreate_v2", "", 0, "libcublas.so", 1},
                           Frame{2, "main", "app.cu", line, "app", 2}};
      i.location.user_frame = 1;
      return i;
    };
    Report report;
    RehearsalInfo& info = report.rehearsals.emplace_back();
    info.warmup = {item("cudaMalloc", "allocation", 25, 1), item("cudaFree", "free", 25, 1),
                   item("cudaMalloc", "allocation", 25, 1),
                   item("cudaMalloc", "allocation", 30, 2)};
    merge_rehearsal_items(report);
    REQUIRE(info.warmup.size() == 2);
    CHECK(info.warmup[0].api == "cudaMalloc, cudaFree");
    CHECK(info.warmup[0].what == "allocation, free");
    CHECK(info.warmup[0].calls == 3);
    CHECK(info.warmup[1].calls == 1);
    CHECK(info.warmup[1].executions == 2);

    // Without a user frame (another thread): the same first use merges, nothing else does.
    RehearsalItem a = item("cudaMalloc", "allocation", 25, 1), b = a, c = a;
    for (RehearsalItem* i : {&a, &b, &c}) i->location.user_frame = -1;
    a.first_use = b.first_use = "cuBLAS handle creation (cublasCreate)";
    info.warmup = {a, b, c};
    merge_rehearsal_items(report);
    REQUIRE(info.warmup.size() == 2);
    CHECK(info.warmup[0].calls == 2);
  }

  TEST_CASE(
      "after symbolizing: a capture-aware allocator's allocation on the region's thread is no "
      "break") {
    const auto finding = [](uint64_t seq, bool region_thread) {
      Finding f;
      f.rule = "unsafe-call-during-capture";
      f.rehearsed = true;
      f.region = "step";
      f.pid = 7;
      f.capturing_thread = region_thread;
      f.location.seq = seq;
      f.location.frames = {Frame{1,
                                 "c10::cuda::CUDACachingAllocator::Native::(anonymous namespace)::"
                                 "cudaMallocMaybeCapturing(void**, unsigned long)",
                                 "", 0, "libc10_cuda.so", 1},
                           Frame{2, "<module>", "train.py", 9, "", 0}};
      f.location.user_frame = 1;
      return f;
    };
    const auto item = [](uint64_t seq, uint32_t last) {
      RehearsalItem i;
      i.rule = "unsafe-call-during-capture";
      i.what = "allocation";
      i.api = "cudaMalloc";
      i.executions = 1;
      i.last_execution = last;
      i.location.seq = seq;
      return i;
    };
    Report report;
    report.findings = {finding(10, true), finding(20, false)};
    RehearsalInfo& info = report.rehearsals.emplace_back();
    info.pid = 7;
    info.executions = 3;
    settle_verdict(info, {item(10, 1), item(20, 3)});
    CHECK(info.verdict == RehearsalVerdict::NotCapturable);
    settle_rehearsals(report);
    // The region's own thread: relaxed while capturing, dropped. Another thread's stays, and
    // still breaks the last execution.
    REQUIRE(report.findings.size() == 1);
    CHECK(report.findings[0].location.seq == 20u);
    CHECK(info.verdict == RehearsalVerdict::NotCapturable);
    CHECK(info.warmup.empty());
    REQUIRE(info.breaks.size() == 1);

    report.findings.clear();  // e.g. suppressed: nothing is left to break the region
    settle_rehearsals(report);
    CHECK(info.verdict == RehearsalVerdict::Capturable);
    CHECK(info.breaks.empty());
  }

  TEST_CASE("settle_verdict: the last execution that broke decides") {
    RehearsalInfo info;
    info.executions = 4;
    RehearsalItem early, late;
    early.last_execution = 1;
    late.last_execution = 2;
    settle_verdict(info, {early, late});
    CHECK(info.verdict == RehearsalVerdict::AfterWarmup);
    CHECK(info.warmups == 2);
    CHECK(info.warmup.size() == 2);
    settle_verdict(info, {});
    CHECK(info.verdict == RehearsalVerdict::Capturable);
    CHECK(info.warmups == 0);
  }
}
