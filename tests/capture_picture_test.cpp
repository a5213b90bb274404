// The structure of a capture carried through the Report for its pictures (CaptureInfo::lanes)
// and the picture built from it (capture_picture.h), from simulated calls.
#include "report/capture_picture.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

namespace {

size_t count_points(const CapturePicture& picture, PointKind kind) {
  return static_cast<size_t>(std::count_if(picture.points.begin(), picture.points.end(),
                                           [&](const PicturePoint& p) { return p.kind == kind; }));
}

}  // namespace

TEST_CASE(
    "capture_picture: an unjoined fork is a second lane, forked from the origin, not joined") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  sim(begin(kS).stack(10))(launch(kS));
  sim(record(kE, kS).stack(11))(wait(kS2, kE).stack(12));  // fork
  sim(launch(kS2).stack(13));
  sim(end(kS).fails(904).stack(14));
  const Report& r = sim.finish();
  REQUIRE(r.captures.size() == 1);
  const CaptureInfo& capture = r.captures[0];
  REQUIRE(capture.lanes.size() == 2);
  CHECK(capture.lanes[0].stream == kS);
  CHECK(capture.lanes[0].joined);
  CHECK_FALSE(capture.lanes[0].forked_from);
  const CaptureLane& side = capture.lanes[1];
  CHECK(side.stream == kS2);
  CHECK_FALSE(side.joined);
  CHECK(side.forked_from == 0u);
  REQUIRE(side.fork);
  CHECK(side.fork->stack_id == 12u);
  REQUIRE(side.last_work);
  CHECK(side.last_work->stack_id == 13u);
  CHECK(side.last_work_api == "cudaLaunchKernel");
  CHECK_FALSE(side.join);

  const CapturePicture picture = picture_of(r, capture);
  REQUIRE(picture.edges.size() == 1);
  CHECK(picture.edges[0].fork);
  CHECK(picture.edges[0].from == 0u);
  CHECK(picture.edges[0].to == 1u);
  // The failing EndCapture is the culprit, on the origin lane, in place of the end mark.
  CHECK(count_points(picture, PointKind::Culprit) == 1);
  CHECK(count_points(picture, PointKind::End) == 0);
  CHECK(picture.points.front().kind == PointKind::Begin);
  CHECK(picture.points.back().kind == PointKind::Culprit);
  CHECK(picture.points.back().lane == size_t{0});
}

TEST_CASE("capture_picture: a joined side stream has a join edge back into the origin") {
  Sim sim;
  sim(begin(kS))(launch(kS))(record(kE, kS))(wait(kS2, kE))(launch(kS2));
  sim(record(kE2, kS2))(wait(kS, kE2).stack(21));  // join
  sim(end(kS).nodes(3));
  const Report& r = sim.finish();
  REQUIRE(r.captures.size() == 1);
  const CaptureInfo& capture = r.captures[0];
  REQUIRE(capture.lanes.size() == 2);
  CHECK(capture.lanes[1].joined);
  CHECK(capture.lanes[1].joined_into == 0u);
  REQUIRE(capture.lanes[1].join);
  CHECK(capture.lanes[1].join->stack_id == 21u);
  const CapturePicture picture = picture_of(r, capture);
  REQUIRE(picture.edges.size() == 2);
  CHECK_FALSE(picture.edges[1].fork);
  CHECK(picture.edges[1].from == 1u);
  CHECK(count_points(picture, PointKind::End) == 1);
  CHECK(picture.lane_last[1] >= picture.edges[1].column);
}

TEST_CASE("capture_picture: a synchronous copy by the capturing thread is drawn outside") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(launch(kS));
  sim(memcpy_sync().stack(30));
  sim(end(kS).nodes(1));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"escaped-sync-copy"});
  const CapturePicture picture = picture_of(r, r.captures[0]);
  CHECK(count_points(picture, PointKind::Outside) == 1);
  CHECK(count_points(picture, PointKind::Culprit) == 0);
}

TEST_CASE("capture_picture: no lane of an invalidated capture is called unjoined") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS))(launch(kS))(record(kE, kS))(wait(kS2, kE));
  sim(launch(kS2))(stream_sync(kS).fails(900));  // the capture dies here; its joins are unknown
  sim(end(kS).fails(901));
  const Report& r = sim.finish();
  REQUIRE(r.captures.size() == 1);
  CHECK(r.captures[0].status == CaptureState::Invalidated);
  REQUIRE(r.captures[0].lanes.size() == 2);
  CHECK(r.captures[0].lanes[1].joined);
}
