// The text report's graph lifecycle section: per process, the top sites by graphs, the rest
// counted, so that a program with hundreds of capture sites still gets a short report (the
// HTML and JSON reports list them all).
#include <fmt/format.h>

#include <iterator>

#include "report/lifecycle_table.h"
#include "report/utf8.h"

namespace capguard {
namespace {

constexpr size_t kSitesShown = 5;   // per process
constexpr size_t kSiteWidth = 36;   // room for "file.py:NN (function)": rows of 92 or 94
constexpr size_t kLineWidth = 99;   // headings are cut to this
constexpr size_t kHeldShown = 3;    // held-memory rows per site (HTML and JSON have them all)
constexpr size_t kHeldWidth = 120;  // the report's width: a held-memory line is cut to it

std::string count(uint64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string pad(const std::string& s, size_t width) {  // left-aligned, by code points
  const size_t used = text_width(s);
  return used >= width ? s : s + std::string(width - used, ' ');
}

void append_row(std::string& out, std::string_view indent, const std::string& site,
                std::string_view graphs, std::string_view keys, std::string_view alive,
                std::string_view launches, std::string_view time, std::string_view pool) {
  fmt::format_to(std::back_inserter(out), "{}{}{:>7}{:>6}{:>7}{:>10}{:>14}{:>10}\n", indent,
                 pad(site, kSiteWidth), graphs, keys, alive, launches, time, pool);
}

void append_site(std::string& out, const Report& report, const GraphSiteInfo& site,
                 std::string_view indent) {
  // Escaped first, so that the cut counts what the terminal shows.
  const std::string cell = ellipsize(terminal_safe(site_cell(site.site, kSiteWidth)), kSiteWidth);
  append_row(out, indent, cell, std::to_string(site.graphs), std::to_string(site.keys),
             std::to_string(site.alive_at_exit), launches_cell(site),
             duration_cell(site.capture_ns), bytes_cell(site.pool_bytes));
  if (!site.captured)
    fmt::format_to(std::back_inserter(out),
                   "{}  (built with the graph API: the site is its cudaGraphInstantiate)\n",
                   indent);
  for (size_t i = 0; i < site.held.size() && i < kHeldShown; ++i) {
    const std::string line =
        fmt::format("{}  held at exit: {}", indent, terminal_safe(held_memory_cell(site.held[i])));
    out += ellipsize(line, kHeldWidth) + '\n';
  }
  if (site.held.size() > kHeldShown)
    fmt::format_to(std::back_inserter(out), "{}  and {} more held-memory rows (JSON, HTML)\n",
                   indent, site.held.size() - kHeldShown);
  std::string rules;
  for (std::string_view rule : site_rules(report, site))
    rules += (rules.empty() ? "" : ", ") + terminal_safe(rule);
  if (!rules.empty())
    fmt::format_to(std::back_inserter(out), "{}  ← {}\n", indent,
                   ellipsize(rules, kLineWidth - indent.size() - 4));
}

void append_group(std::string& out, const Report& report, const SiteGroup& group, bool heading) {
  const std::string_view indent = heading ? "    " : "  ";
  if (heading) {
    std::string line = fmt::format("  process {} ({})", group.pid,
                                   count(group.sites.size(), "capture site", "capture sites"));
    if (group.process) line += ": " + terminal_safe(group.process->command);
    out += ellipsize(line, kLineWidth) + '\n';
  }
  append_row(out, indent, "site", "graphs", "keys", "alive", "launches", "capture+inst", "pool");
  const auto& sites = group.sites;
  for (size_t i = 0; i < sites.size() && i < kSitesShown; ++i)
    append_site(out, report, *sites[i], indent);
  if (sites.size() <= kSitesShown) return;
  uint64_t graphs = 0;
  for (size_t i = kSitesShown; i < sites.size(); ++i) graphs += sites[i]->graphs;
  fmt::format_to(std::back_inserter(out), "{}and {} more {} ({})\n", indent,
                 sites.size() - kSitesShown, sites.size() - kSitesShown == 1 ? "site" : "sites",
                 count(graphs, "graph", "graphs"));
}

}  // namespace

std::string lifecycle_text(const Report& report) {
  if (report.graph_sites.empty()) return {};
  const std::vector<SiteGroup> groups = sites_by_process(report);
  // One process: its table needs no heading of its own, as its findings need none.
  const bool headings = groups.size() > 1 || report.processes.size() > 1;
  std::string out = fmt::format(
      "graph lifecycle ({}{}):\n",
      count(report.graph_sites.size(), "capture site", "capture sites"),
      groups.size() > 1 ? fmt::format(" in {} processes", groups.size()) : std::string());
  for (const SiteGroup& group : groups) append_group(out, report, group, headings);
  out += '\n';
  return out;
}

}  // namespace capguard
