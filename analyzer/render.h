// Renderers: each turns a Report into one output format. The JSON form is the stable machine
// interface (design.md); the others are views of the same Report.
#pragma once

#include <string>

#include "analyzer/json_writer.h"
#include "analyzer/report.h"

namespace capguard {

struct RenderOptions {
  bool color = false;       // text only: ANSI colors (when writing to a terminal)
  std::string source_root;  // sarif: make paths relative to this directory when under it
};

std::string render_text(const Report& report, const RenderOptions& options);
std::string render_json(const Report& report);
std::string render_sarif(const Report& report, const RenderOptions& options);
// The same, handed to `sink` piece by piece as it is written (large reports are never whole in
// memory).
void render_json(const Report& report, const JsonSink& sink);
void render_sarif(const Report& report, const RenderOptions& options, const JsonSink& sink);
std::string render_junit(const Report& report);

}  // namespace capguard
