// Draws a CapturePicture as SVG: one horizontal lane per stream (the origin on top), columns in
// call order, blue fork arrows into a lane, green join arrows out of it, the culprit as a
// diamond in its severity's color, a lane never joined back drawn red up to its last work, and
// the calls that escaped the capture in a dashed box below it. Hovering a mark shows its site.
#include <fmt/format.h>

#include <iterator>

#include "report/capture_picture.h"
#include "report/xml_escape.h"

namespace capguard {
namespace {

constexpr int kLabelWidth = 190;  // lane names on the left
constexpr int kColumnWidth = 150;
constexpr int kLaneHeight = 76;
constexpr int kTop = 34;
constexpr int kOutsideHeight = 96;

// Indexed by Severity (Note, Warning, Error), the colors of the HTML page's severities.
constexpr const char* kSeverityColors[] = {"#00838f", "#b8860b", "#c62828"};
const char* severity_color(Severity s) { return kSeverityColors[static_cast<int>(s)]; }

int x_of(size_t column) {
  return kLabelWidth + kColumnWidth / 2 + static_cast<int>(column) * kColumnWidth;
}
int y_of(size_t lane) { return kTop + kLaneHeight / 2 + static_cast<int>(lane) * kLaneHeight; }

class SvgWriter {
 public:
  explicit SvgWriter(const CapturePicture& picture) : p_(picture), c_(*picture.capture) {}

  std::string write() {
    const size_t lanes = p_.lane_first.size();
    const bool outside = has_outside();
    const int width = x_of(p_.columns) - kColumnWidth / 2 + 20;
    const int lanes_bottom = kTop + static_cast<int>(lanes) * kLaneHeight;
    const std::string omitted = p_.omitted_note();
    const int height =
        lanes_bottom + (outside ? kOutsideHeight + 10 : 10) + (omitted.empty() ? 0 : 20);
    put("<svg class=\"capture-graph\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" "
        "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n",
        width, height, width, height, xml_escape(capture_title(c_)));
    out_ +=
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
        "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" "
        "fill=\"context-stroke\"/></marker></defs>\n";
    put("<rect class=\"capture-box\" x=\"4\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"8\" "
        "fill=\"#f7f9fc\" stroke=\"#90a4ae\" stroke-dasharray=\"6 4\"/>\n",
        kTop - 24, width - 8, lanes_bottom - kTop + 30);
    put("<text x=\"12\" y=\"{}\" class=\"box-title\">{}</text>\n", kTop - 8,
        xml_escape(capture_title(c_) + ", thread " + std::to_string(c_.thread)));
    for (size_t lane = 0; lane < lanes; ++lane) draw_lane(lane);
    for (const PictureEdge& edge : p_.edges) draw_edge(edge);
    if (outside) draw_outside_box(lanes_bottom, width);
    for (const PicturePoint& point : p_.points) draw_point(point, lanes_bottom);
    if (!omitted.empty())
      put("<text x=\"12\" y=\"{}\" class=\"omitted\">{}</text>\n", height - 8, xml_escape(omitted));
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  template <class... Args>
  void put(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(out_), format, std::forward<Args>(args)...);
  }

  bool has_outside() const {
    for (const PicturePoint& point : p_.points)
      if (!point.lane) return true;
    return false;
  }

  bool unjoined(size_t lane) const { return p_.unjoined(lane); }

  void draw_lane(size_t lane) {
    const int y = y_of(lane);
    const uint64_t stream = p_.lane_stream(lane);
    const std::string name = (lane == 0 ? "origin " : "") + stream_label(stream);
    put("<text x=\"12\" y=\"{}\" class=\"lane-name{}\">{}</text>\n", y + 4,
        unjoined(lane) ? " unjoined" : "", xml_escape(name));
    if (p_.lane_first[lane] > p_.lane_last[lane]) return;  // nothing known happened on it
    put("<line class=\"lane{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
        "stroke-width=\"{}\"/>\n",
        unjoined(lane) ? " unjoined" : "", x_of(p_.lane_first[lane]), y, x_of(p_.lane_last[lane]),
        y, unjoined(lane) ? "#d32f2f" : "#607d8b", unjoined(lane) ? 4 : 3);
  }

  void draw_edge(const PictureEdge& edge) {
    const int x = x_of(edge.column), y1 = y_of(edge.from), y2 = y_of(edge.to);
    const int x1 = x - kColumnWidth / 3;
    put("<path class=\"edge {}\" d=\"M{},{} C{},{} {},{} {},{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"2\" marker-end=\"url(#arrow)\"><title>{}</title></path>\n",
        edge.fork ? "fork" : "join", x1, y1, x1, (y1 + y2) / 2, x, (y1 + y2) / 2, x, y2,
        edge.fork ? "#1565c0" : "#2e7d32",
        edge.fork ? "fork: the stream joins the capture" : "join: waits for the other lane's work");
  }

  void draw_outside_box(int lanes_bottom, int width) {
    put("<rect class=\"outside-box\" x=\"4\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"8\" "
        "fill=\"#fff8e1\" stroke=\"#b8860b\" stroke-dasharray=\"3 3\"/>\n",
        lanes_bottom + 8, width - 8, kOutsideHeight - 8);
    put("<text x=\"12\" y=\"{}\" class=\"box-title\">outside the capture (not part of its "
        "graph)</text>\n",
        lanes_bottom + 24);
  }

  void label(int x, int y, const std::string& text, const char* cls) {
    put("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" class=\"{}\">{}</text>\n", x, y, cls,
        xml_escape(text));
  }

  void draw_point(const PicturePoint& point, int lanes_bottom) {
    const int x = x_of(point.column);
    const int y = point.lane ? y_of(*point.lane) : lanes_bottom + 48;
    const std::string site = point.location ? site_label(*point.location) : std::string();
    const std::string tip = xml_escape(point.label + (site.empty() ? "" : " at " + site));
    const char* kind = "";
    switch (point.kind) {
      case PointKind::Begin:
      case PointKind::End:
        kind = point.kind == PointKind::Begin ? "begin" : "end";
        put("<rect class=\"point {}\" x=\"{}\" y=\"{}\" width=\"8\" height=\"24\" "
            "fill=\"#263238\"><title>{}</title></rect>\n",
            kind, x - 4, y - 12, tip);
        break;
      case PointKind::Fork:
      case PointKind::Join:
      case PointKind::LastWork: {
        kind = point.kind == PointKind::Fork   ? "fork"
               : point.kind == PointKind::Join ? "join"
                                               : "last-work";
        const bool red = point.kind == PointKind::LastWork && unjoined(*point.lane);
        put("<circle class=\"point {}{}\" cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" "
            "stroke=\"#263238\"><title>{}</title></circle>\n",
            kind, red ? " unjoined" : "", x, y, red ? 8 : 6, red ? "#d32f2f" : "#ffffff", tip);
        if (red)
          put("<text x=\"{}\" y=\"{}\" class=\"culprit-label\">never joined back</text>\n", x + 12,
              y + 4);
        break;
      }
      case PointKind::Culprit:
      case PointKind::Outside: {
        kind = point.kind == PointKind::Culprit ? "culprit" : "outside";
        const char* color = point.finding ? severity_color(point.finding->severity) : "#c62828";
        put("<path class=\"point {}\" d=\"M{},{} l11,11 l-11,11 l-11,-11 z\" fill=\"{}\" "
            "stroke=\"#000\"><title>{}</title></path>\n",
            kind, x, y - 11, color, tip);
        if (point.kind == PointKind::Outside)  // a dotted line up to the capture it escaped
          put("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
              "stroke-dasharray=\"2 3\"/>\n",
              x, y - 12, x, y_of(0), color);
        break;
      }
    }
    // Labels of neighbouring columns alternate between two rows so that they do not overlap.
    label(x, y - 15 - static_cast<int>(point.column % 2) * 12, point.label,
          point.kind == PointKind::Culprit || point.kind == PointKind::Outside
              ? "label culprit-label"
              : "label");
    // Only file:line under the mark (the function is in the tooltip); every other column a row
    // lower, so that long names of neighbours do not overlap.
    const size_t space = site.rfind(' ');
    if (!site.empty())
      label(x, y + 26 + static_cast<int>(point.column % 2) * 12,
            space == std::string::npos ? site : site.substr(space + 1), "site");
  }

  const CapturePicture& p_;
  const CaptureInfo& c_;
  std::string out_;
};

}  // namespace

std::string capture_svg(const CapturePicture& picture) { return SvgWriter(picture).write(); }

}  // namespace capguard
