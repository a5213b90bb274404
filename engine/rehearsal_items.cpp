#include "engine/rehearsal_items.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "model/framework_calls.h"
#include "model/rehearsal.h"

namespace capguard {
namespace {

// What items merge on: the rule, the thread, and the user line, or, on a thread without one
// (PyTorch's autograd thread), the library's first use; empty: the item stays on its own.
std::string merge_key(const RehearsalItem& item) {
  std::string where;
  if (const Frame* frame = item.location.user())
    where = "L" + user_line_key(*frame);
  else if (!item.first_use.empty())
    where = "F" + item.first_use;
  else
    return {};
  return item.rule + '\n' + std::to_string(item.thread) + '\n' + where;
}

// "cudaMalloc, cudaFree": each name once, in the order met.
void add_word(std::string& list, std::string_view word) {
  for (size_t start = 0; start < list.size();) {
    size_t end = list.find(", ", start);
    if (end == std::string::npos) end = list.size();
    if (std::string_view(list).substr(start, end - start) == word) return;
    start = end + 2;
  }
  if (!list.empty()) list += ", ";
  list += word;
}

void merge(std::vector<RehearsalItem>& items) {
  std::vector<RehearsalItem> merged;
  std::unordered_map<std::string, size_t> at;  // merge_key -> index in merged
  for (RehearsalItem& item : items) {
    std::string key = merge_key(item);
    const auto [known, fresh] = at.try_emplace(std::move(key), merged.size());
    if (fresh || known->first.empty()) {
      merged.push_back(std::move(item));
      continue;
    }
    RehearsalItem& into = merged[known->second];
    add_word(into.api, item.api);
    add_word(into.what, item.what);
    into.calls += item.calls;
    into.executions = std::max(into.executions, item.executions);
    if (into.first_use.empty()) into.first_use = std::move(item.first_use);
  }
  items = std::move(merged);
}

}  // namespace

void merge_rehearsal_items(Report& report) {
  for (RehearsalInfo& rehearsal : report.rehearsals) {
    merge(rehearsal.warmup);
    merge(rehearsal.breaks);
  }
}

void settle_rehearsals(Report& report) {
  // On the region's own thread, what capture-aware code does eagerly is not what it would do
  // under a capture of the region (an allocator in relaxed mode, a capture's set-up): no break.
  std::erase_if(report.findings, [](const Finding& f) {
    return f.rehearsed && f.capturing_thread && capture_aware_call(f.location) != nullptr;
  });
  std::set<std::tuple<uint32_t, std::string_view, uint64_t>> left;  // pid, rule, call
  for (const Finding& finding : report.findings)
    if (finding.rehearsed) left.emplace(finding.pid, finding.rule, finding.location.seq);
  for (RehearsalInfo& rehearsal : report.rehearsals) {
    if (rehearsal.verdict == RehearsalVerdict::NeverExecuted) continue;
    std::vector<RehearsalItem> items;
    for (auto* list : {&rehearsal.warmup, &rehearsal.breaks})
      for (RehearsalItem& item : *list)
        if (left.contains({rehearsal.pid, item.rule, item.location.seq}))
          items.push_back(std::move(item));
    settle_verdict(rehearsal, std::move(items));
  }
  merge_rehearsal_items(report);
}

}  // namespace capguard
