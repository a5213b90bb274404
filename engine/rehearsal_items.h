// Capture rehearsal (issue 19): a verdict's list reads one line per line of the user's code.
// A library's first call (cublasCreate: three cudaMallocs and a cudaFree) makes several breaks
// with different stacks below the same user line; once symbolized they merge into one item.
#pragma once

#include "model/report.h"

namespace capguard {

// Merges the items of each verdict list that share the user frame (file, line, function) and
// rule and thread (without a user frame: the same framework first use): their APIs and categories
// joined, calls counted, executions the most of them.
void merge_rehearsal_items(Report& report);

}  // namespace capguard
