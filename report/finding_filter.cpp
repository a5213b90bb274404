#include "report/finding_filter.h"

#include <optional>

namespace capguard {

void erase_findings(Report& report, const std::vector<bool>& drop) {
  std::vector<std::optional<size_t>> new_index(report.findings.size());
  std::vector<Finding> kept;
  kept.reserve(report.findings.size());
  for (size_t i = 0; i < report.findings.size(); ++i) {
    if (i < drop.size() && drop[i]) continue;
    new_index[i] = kept.size();
    kept.push_back(std::move(report.findings[i]));
  }
  report.findings = std::move(kept);
  for (CaptureInfo& c : report.captures) {
    if (!c.root_cause) continue;
    c.root_cause = *c.root_cause < new_index.size() ? new_index[*c.root_cause] : std::nullopt;
  }
  for (GraphSiteInfo& site : report.graph_sites) {
    std::vector<size_t> kept_findings;
    for (size_t f : site.findings)
      if (f < new_index.size() && new_index[f]) kept_findings.push_back(*new_index[f]);
    site.findings = std::move(kept_findings);
  }
}

}  // namespace capguard
