// The text report's capture rehearsal section: a short verdict per rehearsed region; the
// findings above carry the full stacks.
#include <fmt/format.h>

#include <iterator>

#include "report/lifecycle_table.h"
#include "report/rehearsal_section.h"
#include "report/utf8.h"

namespace capguard {

std::string verdict_words(const RehearsalInfo& r) {
  if (r.verdict == "capturable_after_warmup")
    return fmt::format("capturable after {} warm-up {}", r.warmups,
                       r.warmups == 1 ? "execution" : "executions");
  if (r.verdict == "not_capturable") return "not capturable";
  return "capturable";
}

std::string item_line(const RehearsalItem& item) {
  return fmt::format("{}: {} at {} [{}], {} of the executions", item.what, item.api,
                     site_cell(item.location), item.rule, item.executions);
}

std::string rehearsal_text(const Report& report) {
  if (report.rehearsals.empty()) return {};
  std::string out = "capture rehearsal:\n";
  auto it = std::back_inserter(out);
  for (const RehearsalInfo& r : report.rehearsals) {
    fmt::format_to(it, "  \"{}\"{} (process {}, {} mode, {} {}): {}\n", terminal_safe(r.name),
                   r.domain.empty() ? "" : " in domain " + terminal_safe(r.domain), r.pid, r.mode,
                   r.executions, r.executions == 1 ? "execution" : "executions", verdict_words(r));
    if (!r.warmup.empty()) out += "    only the warm-up executions did:\n";
    for (const RehearsalItem& item : r.warmup)
      fmt::format_to(it, "      {}\n", terminal_safe(item_line(item)));
    if (!r.breaks.empty()) out += "    what breaks it still in the last execution:\n";
    for (const RehearsalItem& item : r.breaks)
      fmt::format_to(it, "      {}\n", terminal_safe(item_line(item)));
  }
  return out;
}

}  // namespace capguard
