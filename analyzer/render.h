// Renderers: each turns a Report into one output format. The JSON form is the stable machine
// interface (README.md, "Output formats"); the others are views of the same Report.
#pragma once

#include <string>

#include "analyzer/report.h"

namespace capguard {

struct RenderOptions {
  bool color = false;       // text only: ANSI colors (when writing to a terminal)
  std::string source_root;  // sarif: make paths relative to this directory when under it
};

std::string render_text(const Report& report, const RenderOptions& options);
std::string render_json(const Report& report);
std::string render_sarif(const Report& report, const RenderOptions& options);
std::string render_junit(const Report& report);

}  // namespace capguard
