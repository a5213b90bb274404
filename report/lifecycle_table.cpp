#include "report/lifecycle_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "model/frame_owner.h"
#include "report/render.h"
#include "report/utf8.h"
#include "util/base_name.h"
#include "util/cpp_names.h"

namespace capguard {

std::vector<const GraphSiteInfo*> sites_by_size(std::span<const GraphSiteInfo* const> sites) {
  std::vector<const GraphSiteInfo*> sorted(sites.begin(), sites.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    if (a->graphs != b->graphs) return a->graphs > b->graphs;
    return a->launches > b->launches;
  });
  return sorted;
}

std::vector<SiteGroup> sites_by_process(const Report& report) {
  // Grouped in one pass (a report may hold any number of processes): by the first process a
  // site belongs to, in process order, then sites of pids without a record, by pid in the order
  // each pid first appears.
  const auto& sites = report.graph_sites;
  const ProcessOwners owners(report);
  std::vector<SiteGroup> by_process(report.processes.size());
  std::vector<SiteGroup> orphans;
  std::unordered_map<uint32_t, size_t> orphan_of_pid;
  for (size_t p = 0; p < report.processes.size(); ++p)
    by_process[p] = SiteGroup{&report.processes[p], report.processes[p].pid, {}};
  for (const auto& site : sites) {
    if (const auto p = owners.first(site.process, site.pid)) {
      by_process[*p].sites.push_back(&site);
      continue;
    }
    auto [it, added] = orphan_of_pid.try_emplace(site.pid, orphans.size());
    if (added) orphans.push_back(SiteGroup{nullptr, site.pid, {}});
    orphans[it->second].sites.push_back(&site);
  }
  std::vector<SiteGroup> groups;
  for (SiteGroup& group : by_process)
    if (!group.sites.empty()) groups.push_back(std::move(group));
  for (SiteGroup& group : orphans) groups.push_back(std::move(group));
  for (SiteGroup& group : groups) group.sites = sites_by_size(group.sites);
  return groups;
}

size_t text_width(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++n) i += std::max<size_t>(1, utf8_sequence_length(s, i));
  return n;
}

std::string ellipsize(std::string_view s, size_t width) {
  if (text_width(s) <= width) return std::string(s);
  if (width == 0) return {};
  size_t i = 0;
  for (size_t kept = 0; kept + 1 < width && i < s.size(); ++kept)
    i += std::max<size_t>(1, utf8_sequence_length(s, i));
  return std::string(s.substr(0, i)) + "…";
}

std::string site_cell(const Location& site, size_t width) {
  if (site.frames.empty())
    return ellipsize(site.addresses.empty() ? "(no stack recorded)" : "(not symbolized)", width);
  // Without a user frame, the first outside CUDA: the stacks' views start there too.
  const Frame& frame = site.frames[std::min(frames_to_show(site).anchor, site.frames.size() - 1)];
  std::string where;  // the part worth keeping whole
  if (!frame.file.empty())
    where = fmt::format("{}:{}", base_name(frame.file), frame.line);
  else if (!frame.module.empty())
    where = fmt::format("{}+0x{:x}", base_name(frame.module), frame.offset);
  else
    where = fmt::format("0x{:x}", frame.address);
  // Too wide: the file's name is cut, never its line ("torch_default_stream_in_captu…:14").
  if (width != SIZE_MAX && text_width(where) > width && !frame.file.empty()) {
    const std::string line = fmt::format(":{}", frame.line);
    if (width > line.size() + 4)
      return ellipsize(base_name(frame.file), width - line.size()) + line;
  }
  if (frame.function.empty()) return ellipsize(where, width);
  const size_t decoration = text_width(where) + 3;  // " (" and ")"
  // A function cut below a few characters says nothing: drop it instead.
  if (width != SIZE_MAX && (width < decoration + 4)) return ellipsize(where, width);
  const size_t room = width == SIZE_MAX ? SIZE_MAX : width - decoration;
  // A C++ function as its name alone ("InitData", not its parameter list); Python's as it is.
  const std::string function =
      is_python_frame(frame) ? frame.function : short_function_name(frame.function, true);
  return fmt::format("{} ({})", where, ellipsize(function, room));
}

std::string bytes_cell(uint64_t bytes) {
  if (bytes == 0) return "-";
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (value >= 1023.95 && unit + 1 < std::size(kUnits)) value /= 1024, ++unit;  // no "1024.0"
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string duration_cell(uint64_t ns) {
  if (ns == 0) return "-";
  const double ms = static_cast<double>(ns) / 1e6;
  if (ms < 9.995) return fmt::format("{:.2f} ms", ms);
  if (ms < 999.95) return fmt::format("{:.1f} ms", ms);
  if (ms < 99995) return fmt::format("{:.2f} s", ms / 1000);
  return fmt::format("{:.0f} s", ms / 1000);
}

std::string launches_cell(const GraphSiteInfo& site) {
  return fmt::format("{}{}", site.launches, site.launches_at_least ? "+" : "");
}

std::string held_memory_cell(const HeldMemory& held) {
  const auto many = [](uint64_t n, std::string_view one, std::string_view more) {
    return fmt::format("{} {}", n, n == 1 ? one : more);
  };
  std::string out;
  if (held.blocks != 0)
    out = fmt::format("{} in {}, ", bytes_cell(held.bytes), many(held.blocks, "block", "blocks"));
  out += many(held.addresses, "address", "addresses");
  if (held.released != 0) out += fmt::format(" ({} released)", held.released);
  out += ": " + held.owner;
  if (!held.pool.empty()) out += ", " + held.pool;
  if (!held.alloc.frames.empty()) out += " at " + site_cell(held.alloc);
  return out;
}

std::vector<std::string_view> site_rules(const Report& report, const GraphSiteInfo& site) {
  std::vector<std::string_view> rules;
  for (size_t index : site.findings) {
    if (index >= report.findings.size()) continue;
    const std::string_view rule = report.findings[index].rule;
    if (std::find(rules.begin(), rules.end(), rule) == rules.end()) rules.push_back(rule);
  }
  return rules;
}

}  // namespace capguard
