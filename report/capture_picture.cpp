#include "report/capture_picture.h"

#include <fmt/format.h>

#include <algorithm>

#include "trace/format.h"
#include "util/base_name.h"

namespace capguard {
namespace {

std::optional<size_t> lane_of_stream(const CaptureInfo& capture, std::optional<uint64_t> stream) {
  if (!stream) return std::nullopt;
  for (size_t i = 0; i < capture.lanes.size(); ++i)
    if (capture.lanes[i].stream == *stream) return i;
  return std::nullopt;
}

// Where a finding's call goes: on the lane of its stream; a finding about the capture itself
// (e.g. capture-never-ended, located at the begin) on the origin; otherwise outside.
std::optional<size_t> lane_of_finding(const CaptureInfo& capture, const Finding& finding) {
  if (auto lane = lane_of_stream(capture, finding.stream)) return lane;
  if (!finding.stream && finding.location.seq == capture.begin.seq && !capture.lanes.empty())
    return 0;
  if (capture.lanes.empty() && finding.stream == capture.stream) return 0;
  return std::nullopt;
}

}  // namespace

std::string stream_label(uint64_t stream) {
  if (stream == trace::kStreamLegacy) return "legacy NULL stream";
  if (stream == trace::kStreamPerThread) return "per-thread stream";
  return fmt::format("stream {:#x}", stream);
}

std::string capture_title(const CaptureInfo& capture) {
  return fmt::format("capture #{} ({} mode, {})", capture.id, mode_name(capture.mode),
                     to_string(capture.status));
}

std::string site_label(const Location& location) {
  if (location.frames.empty()) return {};
  const size_t index = location.user_frame >= 0 ? static_cast<size_t>(location.user_frame) : 0;
  const Frame& frame = location.frames[std::min(index, location.frames.size() - 1)];
  std::string label = frame.function.empty() ? fmt::format("{:#x}", frame.address) : frame.function;
  if (!frame.file.empty()) label += fmt::format(" {}:{}", base_name(frame.file), frame.line);
  return label;
}

CapturePicture picture_of(const Report& report, const CaptureInfo& capture) {
  CapturePicture picture;
  picture.capture = &capture;
  auto& points = picture.points;
  auto add = [&](PointKind kind, std::optional<size_t> lane, const Location& location,
                 std::string label, const Finding* finding = nullptr) {
    points.push_back({kind, lane, location.seq, 0, std::move(label), &location, finding});
  };
  const size_t origin_lanes = capture.lanes.empty() ? 1 : capture.lanes.size();
  add(PointKind::Begin, 0, capture.begin, "BeginCapture");
  for (size_t i = 0; i < capture.lanes.size(); ++i) {
    const CaptureLane& lane = capture.lanes[i];
    if (lane.fork) add(PointKind::Fork, i, *lane.fork, "fork (waits on event)");
    if (lane.join && lane.joined_into)
      add(PointKind::Join, *lane.joined_into, *lane.join, "join (waits on event)");
    if (lane.last_work)
      add(PointKind::LastWork, i, *lane.last_work, "last work: " + lane.last_work_api);
  }
  for (const Finding& finding : report.findings) {
    if (finding.capture != capture.id) continue;
    const std::optional<size_t> lane = lane_of_finding(capture, finding);
    add(lane ? PointKind::Culprit : PointKind::Outside, lane, finding.location,
        finding.api.empty() ? finding.rule : finding.api, &finding);
  }
  if (capture.end) add(PointKind::End, 0, *capture.end, "EndCapture");
  std::stable_sort(points.begin(), points.end(),
                   [](const PicturePoint& a, const PicturePoint& b) { return a.seq < b.seq; });
  // A culprit that is the BeginCapture or EndCapture call itself takes that mark's place.
  std::erase_if(points, [&](const PicturePoint& p) {
    if (p.kind != PointKind::Begin && p.kind != PointKind::End) return false;
    return std::any_of(points.begin(), points.end(), [&](const PicturePoint& q) {
      return q.kind == PointKind::Culprit && q.seq == p.seq;
    });
  });

  // One column per distinct call; the begin is always the first and the end the last.
  for (size_t i = 0; i < points.size(); ++i)
    points[i].column = i == 0 ? 0 : points[i - 1].column + (points[i].seq != points[i - 1].seq);
  picture.columns = points.empty() ? 0 : points.back().column + 1;

  picture.lane_first.assign(origin_lanes, picture.columns);
  picture.lane_last.assign(origin_lanes, 0);
  for (const PicturePoint& p : points) {
    if (!p.lane) continue;
    picture.lane_first[*p.lane] = std::min(picture.lane_first[*p.lane], p.column);
    picture.lane_last[*p.lane] = std::max(picture.lane_last[*p.lane], p.column);
  }
  for (size_t i = 0; i < capture.lanes.size(); ++i) {
    const CaptureLane& lane = capture.lanes[i];
    auto column_of = [&](const Location& l) {
      for (const PicturePoint& p : points)
        if (p.location == &l) return p.column;
      return size_t{0};
    };
    if (lane.fork && lane.forked_from && *lane.forked_from < origin_lanes)
      picture.edges.push_back({*lane.forked_from, i, column_of(*lane.fork), true});
    if (lane.join && lane.joined_into && *lane.joined_into < origin_lanes) {
      const size_t column = column_of(*lane.join);
      picture.edges.push_back({i, *lane.joined_into, column, false});
      picture.lane_last[i] = std::max(picture.lane_last[i], column);
    }
  }
  return picture;
}

}  // namespace capguard
