// Removing findings from a Report while keeping it consistent: captures refer to their root
// cause by index into Report::findings, so every removal must remap those indexes.
#pragma once

#include <vector>

#include "model/report.h"

namespace capguard {

// Removes findings[i] for every i with drop[i] set (drop.size() == findings.size()), keeping
// the order of the rest. A capture whose root cause was removed loses its root_cause.
void erase_findings(Report& report, const std::vector<bool>& drop);

}  // namespace capguard
