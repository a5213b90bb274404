// Capture rehearsal: the verdicts' words, shared by the text section and the HTML
// report (JSON writes the fields).
#pragma once

#include <string>

#include "model/report.h"

namespace capguard {

// A rehearsed finding's heading words, by severity: an error would break a capture, a warning
// would make the graph differ from the eager run (an escape), a note holds in one mode only.
inline const char* rehearsed_heading(Severity severity) {
  if (severity == Severity::Error) return " (rehearsed: would break a capture)";
  if (severity == Severity::Warning) return " (rehearsed: the captured graph would differ)";
  return " (rehearsed)";
}
// "capturable", "capturable after 1 warm-up execution", "not capturable"
std::string verdict_words(const RehearsalInfo& rehearsal);
// The verdict lists' headings: what only the first executions did (the warm-up a capture needs),
// and what the last execution still did (what must change in the code).
inline constexpr const char* kWarmupHeading =
    "only the first executions did (run the region that many times before capturing):";
inline constexpr const char* kBreaksHeading = "what breaks it still in the last execution:";
// Items a list shows in text (HTML: kRehearsalItemsShown * 8); JSON has them all.
inline constexpr size_t kRehearsalItemsShown = 16;
// One line per item: "allocation: cudaMalloc at app.cu:42 (main) [unsafe-call-during-capture],
// in 1 of 3 executions". Text as the trace has it (escape it for the format).
std::string item_line(const RehearsalItem& item, uint32_t executions);
// The text report's section: a heading, then per region its verdict and items.
std::string rehearsal_text(const Report& report);

}  // namespace capguard
