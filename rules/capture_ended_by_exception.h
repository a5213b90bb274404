// capture-ended-by-exception: judged after symbolization, the only time a capture's
// end stack shows the Python exception its thread was handling (the interposer's pseudo frame,
// trace::kPythonExceptionFile): `with torch.cuda.graph(g):` whose body raised ends the capture
// in __exit__, CUDA makes a graph of what was captured so far, and the report used to say "ok".
#pragma once

#include "model/report.h"

namespace capguard::rules {

// Appends a finding for each ok capture of the report that ended while Python handled an
// exception (the captures' indexes and findings' indexes stay as they are).
void find_captures_ended_by_exception(Report& report);

}  // namespace capguard::rules
