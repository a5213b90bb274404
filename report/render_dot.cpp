// Graphviz view: one digraph per finding that concerns a capture. Each stream of the capture is
// a cluster whose calls are chained left to right; fork edges (blue) and join edges (green) go
// between streams; the culprit is a filled diamond; a stream never joined back is red; calls
// that escaped the capture sit outside its cluster.
#include <fmt/format.h>

#include <iterator>

#include "report/capture_picture.h"
#include "report/render.h"
#include "report/utf8.h"

namespace capguard {
namespace {

// A DOT string: the one escaping routine of this format. Graphviz refuses invalid UTF-8 and
// chokes on NUL; control bytes (ESC, CR, DEL, C1) and the invisible controls of utf8.h would
// reach whoever reads the file or the picture: all shown as \xNN or \u{NNNN} text instead
// (the backslash doubled, so that Graphviz shows it). A newline is a line break of the label.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    const char c = s[i];
    if (n == 1 && c == '\n') {
      out += "\\n";
    } else if (n == 1 && (c == '"' || c == '\\')) {
      out += '\\';
      out += c;
    } else {
      const std::string safe = terminal_safe(s.substr(i, n == 0 ? 1 : n));
      for (char k : safe) {
        if (k == '\\') out += '\\';
        out += k;
      }
    }
    i += n == 0 ? 1 : n;
  }
  return out + '"';
}

// The latest point on `lane` at or before `column`, else its first point; -1 when it has none.
int point_on_lane_before(const CapturePicture& picture, size_t lane, size_t column) {
  int found = -1;
  for (size_t i = 0; i < picture.points.size(); ++i) {
    const PicturePoint& p = picture.points[i];
    if (p.lane != lane) continue;
    if (p.column <= column || found < 0) found = static_cast<int>(i);
    if (p.column > column) break;
  }
  return found;
}

void write_graph(std::string& out, size_t index, const Finding& finding,
                 const CapturePicture& picture) {
  auto it = std::back_inserter(out);
  const CaptureInfo& capture = *picture.capture;
  fmt::format_to(it, "digraph {} {{\n",
                 quoted(fmt::format("finding {}: {}", index + 1, finding.rule)));
  fmt::format_to(it, "  label={}; labelloc=t; rankdir=LR;\n",
                 quoted(fmt::format("{} ({}): {}", finding.rule, to_string(finding.severity),
                                    capture_title(capture))));
  out += "  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=10];\n";
  fmt::format_to(it, "  subgraph cluster_capture {{\n    label={}; style=dashed;\n",
                 quoted(capture_title(capture)));
  const size_t lanes = picture.lane_first.size();
  for (size_t lane = 0; lane < lanes; ++lane) {
    const bool unjoined = picture.unjoined(lane);
    const uint64_t stream = picture.lane_stream(lane);
    fmt::format_to(it, "    subgraph cluster_lane{} {{\n      label={}; color={};\n", lane,
                   quoted((lane == 0 ? "origin " : "") + stream_label(stream) +
                          (unjoined ? " (never joined back)" : "")),
                   unjoined ? "red" : "gray");
    int previous = -1;
    for (size_t i = 0; i < picture.points.size(); ++i) {
      const PicturePoint& p = picture.points[i];
      if (p.lane != lane) continue;
      const std::string site = p.location ? site_label(*p.location) : std::string();
      const bool culprit = p.kind == PointKind::Culprit;
      const bool red = culprit || (unjoined && p.kind == PointKind::LastWork);
      fmt::format_to(it, "      p{} [label={}{}{}];\n", i,
                     quoted(p.label + (site.empty() ? "" : "\n" + site)),
                     culprit ? ", shape=diamond, style=filled, fillcolor=\"#ffcdd2\"" : "",
                     red ? ", color=red" : "");
      if (previous >= 0)
        fmt::format_to(it, "      p{} -> p{} [color={}];\n", previous, i,
                       unjoined ? "red" : "gray40");
      previous = static_cast<int>(i);
    }
    out += "    }\n";
  }
  out += "  }\n";
  for (size_t i = 0; i < picture.points.size(); ++i) {
    const PicturePoint& p = picture.points[i];
    if (p.lane) continue;
    const std::string site = p.location ? site_label(*p.location) : std::string();
    fmt::format_to(it,
                   "  p{} [label={}, shape=diamond, style=filled, fillcolor=\"#fff3c4\"];\n"
                   "  p{} -> p{} [style=dotted, label=\"escaped the capture\"];\n",
                   i, quoted(p.label + (site.empty() ? "" : "\n" + site)),
                   point_on_lane_before(picture, 0, p.column), i);
  }
  if (const std::string omitted = picture.omitted_note(); !omitted.empty())
    fmt::format_to(it, "  omitted [shape=plaintext, label={}];\n", quoted(omitted));
  for (const PictureEdge& edge : picture.edges) {
    const int from = point_on_lane_before(picture, edge.from, edge.column);
    int to = -1;
    for (size_t i = 0; i < picture.points.size(); ++i)
      if (picture.points[i].lane == edge.to && picture.points[i].column == edge.column)
        to = static_cast<int>(i);
    if (from < 0 || to < 0 || from == to) continue;
    fmt::format_to(it, "  p{} -> p{} [color={}, label={}];\n", from, to,
                   edge.fork ? "blue" : "darkgreen", edge.fork ? "\"fork\"" : "\"join\"");
  }
  out += "}\n";
}

}  // namespace

std::string render_dot(const Report& report) {
  std::string out;
  const CaptureFindings findings(report);
  size_t drawn = 0, left = 0;
  for (size_t i = 0; i < report.findings.size(); ++i) {
    const Finding& finding = report.findings[i];
    const CaptureInfo* capture = report.find_capture(finding.capture);
    if (capture == nullptr) continue;
    if (drawn == kMaxPictures) {
      ++left;
      continue;
    }
    write_graph(out, i, finding, picture_of(report, *capture, findings, &finding));
    ++drawn;
  }
  if (left != 0)
    out += fmt::format(
        "// capguard: {} more finding(s) concern a capture; at most {} graphs are drawn\n", left,
        kMaxPictures);
  if (out.empty()) out = "// capguard: no finding concerns a capture\n";
  return out;
}

}  // namespace capguard
