// The text report's capture rehearsal section: a short verdict per rehearsed region; the
// findings above carry the full stacks.
#include <fmt/format.h>

#include <iterator>

#include "report/lifecycle_table.h"
#include "report/rehearsal_section.h"
#include "report/utf8.h"
#include "util/base_name.h"

namespace capguard {

std::string verdict_words(const RehearsalInfo& r) {
  switch (r.verdict) {
    case RehearsalVerdict::AfterWarmup:
      return fmt::format("capturable after {} warm-up {}", r.warmups,
                         r.warmups == 1 ? "execution" : "executions");
    case RehearsalVerdict::NotCapturable:
      return "not capturable";
    case RehearsalVerdict::NeverExecuted:
      return "never executed: no NVTX range with a matching message ran, nothing was rehearsed";
    case RehearsalVerdict::Capturable:
      break;
  }
  return to_string(RehearsalVerdict::Capturable);
}

std::string item_line(const RehearsalItem& item, uint32_t executions) {
  std::string thread;
  if (!item.thread_name.empty())  // a framework's thread
    thread = fmt::format("on the {} {} ", terminal_safe(item.thread_name), item.thread);
  else if (item.other_thread)
    thread = fmt::format("on thread {} ", item.thread);
  // Without a user frame, the user line that likely started its thread's work.
  const std::string where =
      item.started_by
          ? fmt::format("for work started at {}:{}",
                        terminal_safe(base_name(item.started_by->file)), item.started_by->line)
          : "at " + site_cell(item.location);
  return fmt::format("{}: {}{} {}{}{} [{}], in {} of {} executions", item.what, item.api,
                     item.calls > 1 ? fmt::format(" ({} calls)", item.calls) : "", thread, where,
                     item.first_use.empty() ? "" : " (" + item.first_use + ")", item.rule,
                     item.executions, executions);
}

std::string rehearsal_text(const Report& report) {
  if (report.rehearsals.empty()) return {};
  std::string out = "capture rehearsal:\n";
  auto it = std::back_inserter(out);
  for (const RehearsalInfo& r : report.rehearsals) {
    if (r.verdict == RehearsalVerdict::NeverExecuted) {
      fmt::format_to(it, "  \"{}\" (--rehearse): {}\n", terminal_safe(r.name), verdict_words(r));
      continue;
    }
    fmt::format_to(it, "  \"{}\"{} (process {}, {} mode, {} {}): {}\n", terminal_safe(r.name),
                   r.domain.empty() ? "" : " in domain " + terminal_safe(r.domain), r.pid,
                   mode_name(r.mode), r.executions, r.executions == 1 ? "execution" : "executions",
                   verdict_words(r));
    for (const auto* items : {&r.warmup, &r.breaks}) {
      if (items->empty()) continue;
      fmt::format_to(it, "    {}\n", items == &r.warmup ? kWarmupHeading : kBreaksHeading);
      for (size_t i = 0; i < items->size() && i < kRehearsalItemsShown; ++i)
        fmt::format_to(it, "      {}\n", terminal_safe(item_line((*items)[i], r.executions)));
      if (items->size() > kRehearsalItemsShown)
        fmt::format_to(it, "      ... and {} more (the JSON report lists every one)\n",
                       items->size() - kRehearsalItemsShown);
    }
  }
  return out;
}

}  // namespace capguard
