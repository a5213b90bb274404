#include "model/graph_coverage.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace capguard {

namespace {
uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
}  // namespace

CoverageInfo job_coverage(std::span<const CoverageInfo> processes) {
  CoverageInfo job;
  for (const CoverageInfo& c : processes) {
    job.measured = job.measured && c.measured;
    job.graph_launches = saturating_add(job.graph_launches, c.graph_launches);
    job.graph_kernels = saturating_add(job.graph_kernels, c.graph_kernels);
    job.unwalked_launches = saturating_add(job.unwalked_launches, c.unwalked_launches);
    job.eager_kernels = saturating_add(job.eager_kernels, c.eager_kernels);
    job.phases = saturating_add(job.phases, c.phases);
    job.most_in_phase = std::max(job.most_in_phase, c.most_in_phase);
  }
  return job;
}

void GraphCoverage::on_graph_node(const trace::GraphNodeRecord& record) {
  auto it = execs_.find(record.exec);
  if (it == execs_.end()) {
    if (execs_.size() >= kMaxExecs) return;
    it = execs_.emplace(record.exec, ExecKernels{}).first;
  }
  ExecKernels& exec = it->second;
  if (record.index == 0 && exec.last_index != 0) exec = {};  // a new walk of this handle
  // A node with many refs comes in several records of one index: it counts once.
  if (record.index == exec.last_index) return;
  exec.last_index = record.index;
  if (record.type == trace::kNodeKernel) ++exec.kernels;
}

void GraphCoverage::on_graph(const trace::GraphRecord& record) {
  if (record.nodes != 0) return;  // its 'g' records came before it
  if (execs_.size() >= kMaxExecs && execs_.count(record.exec) == 0) return;
  execs_[record.exec] = ExecKernels{0, UINT32_MAX, true};
}

void GraphCoverage::on_kernel_name(const trace::KernelNameRecord& record) {
  if (names_.size() < kMaxNames || names_.count(record.function) != 0)
    names_[record.function] = std::string(record.name);
}

void GraphCoverage::on_launch_count(const trace::LaunchCountRecord& record) {
  seen_ = true;
  if (record.kind == trace::LaunchCountKind::Blind) totals_.measured = false;
  for (const trace::ExecLaunches& e : record.execs) {
    totals_.graph_launches += e.launches;
    const auto it = execs_.find(e.exec);
    if (it != execs_.end() && it->second.walked())
      totals_.graph_kernels += e.launches * it->second.kernels;
    else
      totals_.unwalked_launches += e.launches;
  }
  uint64_t in_record = 0;
  for (const trace::EagerLaunches& k : record.eager) {
    in_record += k.launches;
    totals_.eager_kernels += k.launches;
    const SiteKey key{k.function, k.stack};
    auto it = sites_.find(key);
    if (it == sites_.end()) {
      if (sites_.size() >= kMaxSites) {
        ++totals_.other_sites;
        continue;
      }
      it = sites_.emplace(key, SiteCounts{}).first;
    }
    it->second.launches += k.launches;
    it->second.threads += k.threads;
    ++it->second.phases;
  }
  if (in_record != 0) {
    ++totals_.phases;
    totals_.most_in_phase = std::max(totals_.most_in_phase, in_record);
  }
}

CoverageInfo GraphCoverage::info(const std::function<Location(uint32_t stack)>& location) const {
  CoverageInfo info = totals_;
  std::vector<std::pair<SiteKey, SiteCounts>> sites(sites_.begin(), sites_.end());
  std::sort(sites.begin(), sites.end(), [](const auto& a, const auto& b) {
    if (a.second.launches != b.second.launches) return a.second.launches > b.second.launches;
    if (a.first.stack != b.first.stack) return a.first.stack < b.first.stack;
    return a.first.function < b.first.function;
  });
  // Kept beyond the report's bound, so that merging by user line after symbolization still
  // finds the busiest lines (engine/coverage_sites.h); the rest are summed.
  const size_t kept = std::min(sites.size(), kEagerSitesKept * 8);
  info.other_sites += sites.size() - kept;
  for (size_t i = 0; i < kept; ++i) {
    EagerSite site;
    const auto name = names_.find(sites[i].first.function);
    if (name != names_.end()) site.kernel = name->second;
    site.location = location(sites[i].first.stack);
    site.launches = sites[i].second.launches;
    site.threads = sites[i].second.threads;
    site.phases = sites[i].second.phases;
    info.eager.push_back(std::move(site));
  }
  return info;
}

}  // namespace capguard
