#include "model/report_merge.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

namespace capguard {
namespace {

template <class T>
void move_all(std::vector<T>& into, std::vector<T>& from) {
  into.insert(into.end(), std::make_move_iterator(from.begin()),
              std::make_move_iterator(from.end()));
  from.clear();
}

// Messages name captures by id ("capture #2", rules/describe.cpp): moved on with the ids.
void renumber_captures(std::string& text, uint32_t offset) {
  static constexpr std::string_view kWord = "capture #";
  std::string out;
  size_t from = 0;
  for (size_t at = text.find(kWord); at != std::string::npos; at = text.find(kWord, from)) {
    size_t end = at + kWord.size();
    uint64_t id = 0;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9' && id < UINT32_MAX)
      id = id * 10 + static_cast<uint64_t>(text[end++] - '0');
    out.append(text, from, at + kWord.size() - from);
    if (end == at + kWord.size()) {  // no number after it
      from = end;
      continue;
    }
    out += std::to_string(id + offset);
    from = end;
  }
  if (from == 0) return;
  out.append(text, from, std::string::npos);
  text = std::move(out);
}

}  // namespace

uint32_t last_capture_id(const Report& report) {
  uint32_t last = 0;
  for (const CaptureInfo& c : report.captures) last = std::max({last, c.id, c.last_id});
  return last;
}

void append_report(Report& into, Report&& from, uint32_t* last_capture) {
  const auto processes = static_cast<uint32_t>(into.processes.size());
  const uint32_t captures = last_capture != nullptr ? *last_capture : last_capture_id(into);
  if (last_capture != nullptr) *last_capture = captures + last_capture_id(from);
  const size_t findings = into.findings.size();
  const auto process = [&](uint32_t p) { return p == 0 ? 0 : p + processes; };
  for (CaptureInfo& c : from.captures) {
    c.id += captures;
    if (c.last_id != 0) c.last_id += captures;
    c.process = process(c.process);
    if (c.root_cause) *c.root_cause += findings;
  }
  for (Finding& f : from.findings) {
    f.process = process(f.process);
    if (f.capture) *f.capture += captures;
    if (captures == 0) continue;
    renumber_captures(f.message, captures);
    for (Related& r : f.related) renumber_captures(r.detail, captures);
  }
  for (GraphSiteInfo& site : from.graph_sites) {
    site.process = process(site.process);
    for (size_t& f : site.findings) f += findings;
  }
  for (RehearsalInfo& r : from.rehearsals) r.process = process(r.process);
  for (CoverageInfo& c : from.coverage) c.process = process(c.process);
  for (RankCollectives& c : from.collectives) c.process = process(c.process);
  move_all(into.processes, from.processes);
  move_all(into.captures, from.captures);
  move_all(into.findings, from.findings);
  move_all(into.problems, from.problems);
  move_all(into.graph_sites, from.graph_sites);
  move_all(into.rehearsals, from.rehearsals);
  move_all(into.coverage, from.coverage);
  move_all(into.collectives, from.collectives);
  // The thresholds each part was judged by (rules/rule_options.h), each setting once.
  for (RuleOptionValue& o : from.rule_options)
    if (std::none_of(into.rule_options.begin(), into.rule_options.end(), [&](const auto& in) {
          return in.rule == o.rule && in.option == o.option && in.value == o.value;
        }))
      into.rule_options.push_back(std::move(o));
  from.rule_options.clear();
}

}  // namespace capguard
