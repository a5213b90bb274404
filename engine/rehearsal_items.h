// Capture rehearsal, after symbolizing and the suppressions: a verdict stands on the
// breaks whose findings are left (a built-in suppression knows PyTorch's allocators allocate in
// relaxed mode when capturing), and its lists read one line per line of the user's code (a
// library's first call, cublasCreate: three cudaMallocs and a cudaFree below one user line).
#pragma once

#include "model/report.h"

namespace capguard {

// Merges the items of each verdict list that share the user frame (file, line, function) and
// rule and thread (without a user frame: the same framework first use): their APIs and categories
// joined, calls counted, executions the most of them.
void merge_rehearsal_items(Report& report);

// Drops the items whose finding (same process, rule and call) was suppressed, settles each
// region's verdict again on what is left (settle_verdict), then merges the items.
void settle_rehearsals(Report& report);

}  // namespace capguard
