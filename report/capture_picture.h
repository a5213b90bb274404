// The structure of one capture as the pictures draw it (the SVG in the HTML report, the DOT
// graphs): its streams as lanes (the origin first), the notable calls on them in call order
// (begin, forks, joins, last work, the findings' culprits, end), the fork and join edges
// between lanes, and the findings' calls that ran outside the capture.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
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

struct CapturePicture {
  const CaptureInfo* capture = nullptr;
  std::vector<PicturePoint> points;  // in call order
  std::vector<PictureEdge> edges;
  size_t columns = 0;
  // Columns where each lane starts and ends (its fork, its last point).
  std::vector<size_t> lane_first, lane_last;
};

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
