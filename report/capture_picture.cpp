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

std::string CapturePicture::omitted_note() const {
  if (omitted_lanes == 0 && omitted_points == 0) return {};
  std::string note;
  if (omitted_lanes != 0) note = fmt::format("{} more stream(s)", omitted_lanes);
  if (omitted_points != 0)
    note += fmt::format("{}{} more call(s)", note.empty() ? "" : " and ", omitted_points);
  return note + " of this capture not drawn";
}

CaptureFindings::CaptureFindings(const Report& report) {
  for (const Finding& finding : report.findings)
    if (finding.capture) by_capture_[*finding.capture].push_back(&finding);
}

const std::vector<const Finding*>& CaptureFindings::of(uint32_t capture) const {
  static const std::vector<const Finding*> kNone;
  const auto it = by_capture_.find(capture);
  return it == by_capture_.end() ? kNone : it->second;
}

namespace {

// The capture lanes drawn: all when they fit, else the origin, the focus's lane, lanes never
// joined back, lanes with culprits, then the first ones, in their order.
std::vector<size_t> lanes_to_draw(const CaptureInfo& capture,
                                  const std::vector<const Finding*>& findings,
                                  const Finding* focus) {
  const size_t count = capture.lanes.empty() ? 1 : capture.lanes.size();
  std::vector<size_t> chosen;
  if (count <= kMaxPictureLanes) {
    for (size_t i = 0; i < count; ++i) chosen.push_back(i);
    return chosen;
  }
  std::vector<bool> taken(count, false);
  auto take = [&](std::optional<size_t> lane) {
    if (lane && *lane < count && !taken[*lane] && chosen.size() < kMaxPictureLanes) {
      taken[*lane] = true;
      chosen.push_back(*lane);
    }
  };
  take(0);
  if (focus != nullptr) take(lane_of_finding(capture, *focus));
  for (size_t i = 0; i < count && chosen.size() < kMaxPictureLanes; ++i)
    if (!capture.lanes[i].joined) take(i);
  for (const Finding* finding : findings) {
    if (chosen.size() >= kMaxPictureLanes) break;
    take(lane_of_finding(capture, *finding));
  }
  for (size_t i = 0; i < count && chosen.size() < kMaxPictureLanes; ++i) take(i);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

// Which points stay when there are too many: lower first.
int keep_rank(const PicturePoint& point, const Finding* focus) {
  if (point.kind == PointKind::Begin || point.kind == PointKind::End) return 0;
  if (focus != nullptr && point.finding == focus) return 0;
  switch (point.kind) {
    case PointKind::Culprit:
      return 1;
    case PointKind::Fork:
    case PointKind::Join:
      return 2;
    case PointKind::LastWork:
      return 3;
    default:
      return 4;
  }
}

}  // namespace

CapturePicture picture_of(const Report& report, const CaptureInfo& capture) {
  return picture_of(report, capture, CaptureFindings(report));
}

CapturePicture picture_of(const Report&, const CaptureInfo& capture,
                          const CaptureFindings& capture_findings, const Finding* focus) {
  CapturePicture picture;
  picture.capture = &capture;
  const std::vector<const Finding*>& findings = capture_findings.of(capture.id);
  picture.lanes = lanes_to_draw(capture, findings, focus);
  const size_t origin_lanes = capture.lanes.empty() ? 1 : capture.lanes.size();
  picture.omitted_lanes = origin_lanes - picture.lanes.size();
  // Capture lane -> picture lane, for the lanes drawn.
  std::unordered_map<size_t, size_t> drawn;
  for (size_t k = 0; k < picture.lanes.size(); ++k) drawn[picture.lanes[k]] = k;
  auto drawn_lane = [&](std::optional<size_t> lane) -> std::optional<size_t> {
    if (!lane) return std::nullopt;
    const auto it = drawn.find(*lane);
    return it == drawn.end() ? std::nullopt : std::optional<size_t>(it->second);
  };
  auto& points = picture.points;
  auto add = [&](PointKind kind, std::optional<size_t> lane, const Location& location,
                 std::string label, const Finding* finding = nullptr) {
    points.push_back({kind, lane, location.seq, 0, std::move(label), &location, finding});
  };
  add(PointKind::Begin, 0, capture.begin, "BeginCapture");
  for (size_t i = 0; i < capture.lanes.size(); ++i) {
    const CaptureLane& lane = capture.lanes[i];
    const std::optional<size_t> here = drawn_lane(i);
    if (lane.fork && here) add(PointKind::Fork, here, *lane.fork, "fork (waits on event)");
    if (lane.join && lane.joined_into && here) {
      if (const auto into = drawn_lane(*lane.joined_into))
        add(PointKind::Join, into, *lane.join, "join (waits on event)");
    }
    if (lane.last_work && here)
      add(PointKind::LastWork, here, *lane.last_work, "last work: " + lane.last_work_api);
  }
  for (const Finding* finding : findings) {
    const std::optional<size_t> lane = lane_of_finding(capture, *finding);
    if (lane && !drawn_lane(lane)) {
      ++picture.omitted_points;
      continue;
    }
    add(lane ? PointKind::Culprit : PointKind::Outside, drawn_lane(lane), finding->location,
        finding->api.empty() ? finding->rule : finding->api, finding);
  }
  if (capture.end) add(PointKind::End, 0, *capture.end, "EndCapture");
  if (points.size() > kMaxPicturePoints) {
    std::stable_sort(points.begin(), points.end(), [&](const auto& a, const auto& b) {
      return keep_rank(a, focus) < keep_rank(b, focus);
    });
    picture.omitted_points += points.size() - kMaxPicturePoints;
    points.resize(kMaxPicturePoints);
  }
  std::stable_sort(points.begin(), points.end(),
                   [](const PicturePoint& a, const PicturePoint& b) { return a.seq < b.seq; });
  // A culprit that is the BeginCapture or EndCapture call itself takes that mark's place.
  std::unordered_map<uint64_t, bool> culprit_at;
  for (const PicturePoint& p : points)
    if (p.kind == PointKind::Culprit) culprit_at[p.seq] = true;
  std::erase_if(points, [&](const PicturePoint& p) {
    return (p.kind == PointKind::Begin || p.kind == PointKind::End) && culprit_at.contains(p.seq);
  });

  // One column per distinct call; the begin is always the first and the end the last.
  for (size_t i = 0; i < points.size(); ++i)
    points[i].column = i == 0 ? 0 : points[i - 1].column + (points[i].seq != points[i - 1].seq);
  picture.columns = points.empty() ? 0 : points.back().column + 1;

  const size_t lanes = picture.lanes.size();
  picture.lane_first.assign(lanes, picture.columns);
  picture.lane_last.assign(lanes, 0);
  std::unordered_map<const Location*, size_t> column_at;
  for (const PicturePoint& p : points) {
    column_at.emplace(p.location, p.column);
    if (!p.lane) continue;
    picture.lane_first[*p.lane] = std::min(picture.lane_first[*p.lane], p.column);
    picture.lane_last[*p.lane] = std::max(picture.lane_last[*p.lane], p.column);
  }
  auto column_of = [&](const Location& l) {
    const auto it = column_at.find(&l);
    return it == column_at.end() ? std::optional<size_t>() : std::optional<size_t>(it->second);
  };
  for (size_t k = 0; k < lanes; ++k) {
    const CaptureLane* lane = picture.lane_info(k);
    if (lane == nullptr) continue;
    if (lane->fork && lane->forked_from)
      if (const auto from = drawn_lane(*lane->forked_from))
        if (const auto column = column_of(*lane->fork))
          picture.edges.push_back({*from, k, *column, true});
    if (lane->join && lane->joined_into)
      if (const auto into = drawn_lane(*lane->joined_into))
        if (const auto column = column_of(*lane->join)) {
          picture.edges.push_back({k, *into, *column, false});
          picture.lane_last[k] = std::max(picture.lane_last[k], *column);
        }
  }
  return picture;
}

}  // namespace capguard
