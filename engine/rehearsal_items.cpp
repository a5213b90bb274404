#include "engine/rehearsal_items.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <tuple>

#include "model/framework_calls.h"
#include "model/rehearsal.h"

namespace capguard {
namespace {

const Frame* user_frame(const Location& location) {
  if (location.user_frame < 0 || static_cast<size_t>(location.user_frame) >= location.frames.size())
    return nullptr;
  return &location.frames[static_cast<size_t>(location.user_frame)];
}

// The same user line, or, on a thread without one (PyTorch's autograd thread), the same
// library first use.
bool same_line(const RehearsalItem& a, const RehearsalItem& b) {
  if (a.rule != b.rule || a.thread != b.thread) return false;
  const Frame* fa = user_frame(a.location);
  const Frame* fb = user_frame(b.location);
  if (fa == nullptr && fb == nullptr) return !a.first_use.empty() && a.first_use == b.first_use;
  return fa != nullptr && fb != nullptr && fa->file == fb->file && fa->line == fb->line &&
         fa->function == fb->function;
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
  for (RehearsalItem& item : items) {
    const auto into = std::find_if(merged.begin(), merged.end(),
                                   [&](const RehearsalItem& m) { return same_line(m, item); });
    if (into == merged.end()) {
      merged.push_back(std::move(item));
      continue;
    }
    add_word(into->api, item.api);
    add_word(into->what, item.what);
    into->calls += item.calls;
    into->executions = std::max(into->executions, item.executions);
    if (into->first_use.empty()) into->first_use = std::move(item.first_use);
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
    if (rehearsal.verdict == "never_executed") continue;
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
