// Capture rehearsal (issue 19): the verdicts' words, shared by the text section and the HTML
// report (JSON writes the fields).
#pragma once

#include <string>

#include "model/report.h"

namespace capguard {

// "capturable", "capturable after 1 warm-up execution", "not capturable"
std::string verdict_words(const RehearsalInfo& rehearsal);
// One line per item: "allocation: cudaMalloc at app.cu:42 (main) [unsafe-call-during-capture],
// executions: 1". Text as the trace has it (escape it for the format).
std::string item_line(const RehearsalItem& item);
// The text report's section: a heading, then per region its verdict and items.
std::string rehearsal_text(const Report& report);

}  // namespace capguard
