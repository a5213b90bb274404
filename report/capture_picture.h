// The structure of one capture as the pictures draw it (the SVG in the HTML report, the DOT
// graphs): its streams as lanes (the origin first), the notable calls on them in call order
// (begin, forks, joins, last work, the findings' culprits, end), the fork and join edges
// between lanes, and the findings' calls that ran outside the capture.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/report.h"

namespace capguard {

enum class PointKind { Begin, End, Fork, Join, LastWork, Culprit, Outside };

struct PicturePoint {
  PointKind kind = PointKind::Begin;
  std::optional<size_t> lane;  // index into CaptureInfo::lanes; none: outside the capture
  uint64_t seq = 0;            // call order in the trace
  size_t column = 0;           // rank of seq among the picture's points (x position)
  std::string label;           // short: an API name or what happened
  const Location* location = nullptr;
  const Finding* finding = nullptr;  // Culprit / Outside: the finding it belongs to
};

// A fork (a stream waited on an event recorded on another lane and joined the capture) or a
// join (a lane waited on an event recorded on another): drawn from lane `from` to lane `to`.
struct PictureEdge {
  size_t from = 0, to = 0;
  size_t column = 0;
  bool fork = true;
};

// Budgets: a capture of 1,500 forked streams and 1,500 escaped calls drawn once per
// finding made an HTML report of 4.4 GB. A picture draws at most kMaxPictureLanes lanes and
// kMaxPicturePoints points (the finding it is drawn for, the begin and end first; then the
// culprits, forks and joins, last work, escaped calls) and says how many it left out; a
// report draws at most kMaxPictures pictures of findings (HTML, DOT) and kMaxCapturePictures in
// HTML's list of captures (a real program's report holds a few hundred captures).
inline constexpr size_t kMaxPictureLanes = 24;
inline constexpr size_t kMaxPicturePoints = 64;
inline constexpr size_t kMaxPictures = 100;
inline constexpr size_t kMaxCapturePictures = 1000;

struct CapturePicture {
  const CaptureInfo* capture = nullptr;
  // The lanes drawn: indexes into CaptureInfo::lanes, in order (a capture without lanes: {0},
  // its origin stream). PicturePoint::lane and the edges index this list.
  std::vector<size_t> lanes;
  std::vector<PicturePoint> points;  // in call order
  std::vector<PictureEdge> edges;
  size_t columns = 0;
  // Columns where each lane starts and ends (its fork, its last point).
  std::vector<size_t> lane_first, lane_last;
  size_t omitted_lanes = 0, omitted_points = 0;  // past the budgets: said under the picture

  // The capture's lane drawn as lane `k`; null for the origin of a capture without lanes.
  const CaptureLane* lane_info(size_t k) const {
    return k < lanes.size() && lanes[k] < capture->lanes.size() ? &capture->lanes[lanes[k]]
                                                                : nullptr;
  }
  uint64_t lane_stream(size_t k) const {
    const CaptureLane* lane = lane_info(k);
    return lane != nullptr ? lane->stream : capture->stream;
  }
  bool unjoined(size_t k) const {
    const CaptureLane* lane = lane_info(k);
    return lane != nullptr && !lane->joined;
  }
  // "1,468 more streams and 2,936 more calls of this capture are not drawn"; empty when none.
  std::string omitted_note() const;
};

// The findings of each capture, found once per report: a picture needs only its own.
class CaptureFindings {
 public:
  explicit CaptureFindings(const Report& report);
  const std::vector<const Finding*>& of(uint32_t capture) const;

 private:
  std::unordered_map<uint32_t, std::vector<const Finding*>> by_capture_;
};

// `focus`: the finding the picture is drawn for, always drawn when its capture is too big.
CapturePicture picture_of(const Report& report, const CaptureInfo& capture,
                          const CaptureFindings& findings, const Finding* focus = nullptr);
CapturePicture picture_of(const Report& report, const CaptureInfo& capture);

// Short names for pictures and headings: "stream 0x55..20" and "capture #1 (global, failed)".
std::string stream_label(uint64_t stream);
std::string capture_title(const CaptureInfo& capture);

// "main app.cu:42" for a location's user frame (or its first frame); empty when unknown.
std::string site_label(const Location& location);

// The picture as an inline SVG element (render_capture_svg.cpp): lanes left to right in call
// order, fork and join arrows, culprits marked, an unjoined lane red, escaped calls below.
std::string capture_svg(const CapturePicture& picture);

}  // namespace capguard
