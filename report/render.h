// Renderers: each turns a Report into one output format. The JSON form is the stable machine
// interface (docs/output-formats.md, "JSON"); the others are views of the same Report.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "model/report.h"
#include "model/rule_info.h"
#include "report/json_writer.h"

namespace capguard {

struct RenderOptions {
  bool color = false;               // text only: ANSI colors (when writing to a terminal)
  std::string source_root;          // sarif: make paths relative to this directory when under it;
                                    // text, html: where else to look for source files
  bool source = true;               // text, html: show the source lines around each user frame
  bool native_frames = false;       // text: Python stacks with every native frame (not folded)
  std::span<const RuleInfo> rules;  // the rule table, as data: SARIF's rules, each finding's fix
};

// Shared by the text and HTML views. The frames of a stack worth showing: the library frames
// between CUDA and the user frame, then the user frame outward, without the C runtime's frames
// below main; [first, last) into location.frames, `anchor` the user frame (or first).
struct ShownFrames {
  size_t first = 0, anchor = 0, last = 0;
  size_t hidden_inner() const { return first; }
  size_t hidden_outer(const Location& location) const { return location.frames.size() - last; }
};
ShownFrames frames_to_show(const Location& location);
std::string related_heading(const Related& related);  // "stream forked into the capture here"
std::string summary_line(const Report& report);       // "SUMMARY: capguard: ...\n"

std::string render_text(const Report& report, const RenderOptions& options);
// The same, reading source lines through `sources` (with options.source), so that a caller
// rendering many small reports (JUnit: one per finding) reads each file's lines once.
class SourceReader;
std::string render_text(const Report& report, const RenderOptions& options, SourceReader& sources);
std::string render_json(const Report& report);
// One location as the JSON report writes it (frames, inner frames, user frame).
void write_json_location(JsonWriter& json, const Location& location);
std::string render_sarif(const Report& report, const RenderOptions& options);
// The same, handed to `sink` piece by piece as it is written (large reports are never whole in
// memory).
void render_json(const Report& report, const JsonSink& sink);
void render_sarif(const Report& report, const RenderOptions& options, const JsonSink& sink);
std::string render_junit(const Report& report);
// The same, with the source lines of each finding's text under options.source_root (or none,
// without options.source), as the text report shows them.
std::string render_junit(const Report& report, const RenderOptions& options);
// The same, a suite at a time to `sink`.
void render_junit(const Report& report, const RenderOptions& options, const JsonSink& sink);
// One self-contained HTML page (no scripts, nothing fetched): summary, findings with stacks and
// source lines, and a picture of every capture.
std::string render_html(const Report& report, const RenderOptions& options);
// Graphviz: one digraph per finding that concerns a capture, the capture drawn as lanes.
std::string render_dot(const Report& report);

}  // namespace capguard
