// One report from several: each trace analysed on its own worker, or each node's JSON
// report, appended in order. Processes, captures and findings keep what they point at: process
// indexes, capture ids and finding indexes of the appended report move past the ones before.
#pragma once

#include "model/report.h"

namespace capguard {

// Appends `from` to `into`; `from` is left empty. Its findings' words for captures ("capture
// #2") move on with the ids; its rule options join those of `into`, each once.
// `last_capture` (optional): the caller's running last_capture_id(into), so that appending many
// reports stays linear; updated.
void append_report(Report& into, Report&& from, uint32_t* last_capture = nullptr);

// The largest capture id (CaptureInfo::id or last_id) of a report, 0 when it has none.
uint32_t last_capture_id(const Report& report);

}  // namespace capguard
