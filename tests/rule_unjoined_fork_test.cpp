#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("unjoined-fork: a forked stream's last kernel never joins the origin") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  sim(begin(kS))(launch(kS));
  sim(record(kE, kS).stack(11))(wait(kS2, kE).stack(12));  // fork
  sim(launch(kS2).stack(13));
  sim(end(kS).fails(904).stack(14));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"unjoined-fork"});
  const Finding& f = r.findings[0];
  CHECK(f.result_name == "cudaErrorStreamCaptureUnjoined");
  CHECK(f.message.find("stream 0x5502") != std::string::npos);
  REQUIRE(related(f, "fork"));
  CHECK(related(f, "fork")->location.stack_id == 12u);
  REQUIRE(related(f, "event-record"));
  CHECK(related(f, "event-record")->location.stack_id == 11u);
  REQUIRE(related(f, "last-work"));
  CHECK(related(f, "last-work")->location.stack_id == 13u);
  CHECK(has_role(f, "capture-begin"));
  REQUIRE(r.captures.size() == 1);
  CHECK(r.captures[0].status == CaptureState::Failed);
  CHECK(r.captures[0].root_cause == size_t{0});
}

TEST_CASE("unjoined-fork: names only the stream that was not joined, through nested forks") {
  Sim sim;
  sim(begin(kS))(launch(kS))(record(kE, kS))(wait(kS2, kE))(wait(kS3, kE));
  sim(launch(kS2))(launch(kS3).stack(33));
  // S2 joins back; S3 forgot to.
  sim(record(kE2, kS2))(wait(kS, kE2));
  sim(end(kS).fails(904));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"unjoined-fork"});
  const Finding& f = r.findings[0];
  CHECK(f.message.find("stream 0x5503") != std::string::npos);
  CHECK(f.message.find("0x5502") == std::string::npos);
  CHECK(related(f, "last-work")->location.stack_id == 33u);
  CHECK(related(f, "last-work", 1) == nullptr);
}

TEST_CASE("unjoined-fork twin: the side stream joins back (also transitively)") {
  Sim sim;
  sim(begin(kS))(launch(kS))(record(kE, kS))(wait(kS2, kE))(launch(kS2));
  sim(record(kE2, kS2))(wait(kS3, kE2))(launch(kS3));  // S3 forks from S2
  sim(record(kE2, kS3))(wait(kS2, kE2));               // S3 joins S2
  sim(record(kE2, kS2))(wait(kS, kE2));                // S2 joins S
  const Capture& capture = *sim.replay.model().captures().front();
  CHECK(sim.replay.model().unjoined_members(capture).empty());
  sim(end(kS).nodes(3));
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("unjoined-fork: a join whose event record failed (an event of another device)") {
  Sim sim;
  sim(begin(kS))(launch(kS))(record(kE, kS))(wait(kS2, kE))(launch(kS2).stack(21));
  sim(record(kE2, kS2).fails(400).stack(22));  // the join's record: event and stream differ in device
  sim(wait(kS, kE2));                          // succeeds, and joins nothing
  sim(end(kS).fails(904));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"unjoined-fork"});
  const Finding& f = r.findings[0];
  CHECK(f.message.find("the event record meant to join stream 0x5502 failed with "
                       "cudaErrorInvalidResourceHandle (the event belongs to another device") !=
        std::string::npos);
  REQUIRE(related(f, "join-record-failed"));
  CHECK(related(f, "join-record-failed")->location.stack_id == 22u);
  CHECK(related(f, "last-work")->location.stack_id == 21u);
}

TEST_CASE("unjoined-fork: a failed record retried successfully is not blamed") {
  Sim sim;
  sim(begin(kS))(launch(kS))(record(kE, kS))(wait(kS2, kE))(launch(kS2));
  sim(record(kE2, kS2).fails(400))(record(kE3, kS2));  // retried with a good event, never waited on
  sim(end(kS).fails(904));
  const Finding& f = sim.finish().findings.at(0);
  CHECK(f.rule == "unjoined-fork");
  CHECK(related(f, "join-record-failed") == nullptr);
  CHECK(f.message.find("failed with") == std::string::npos);
}
