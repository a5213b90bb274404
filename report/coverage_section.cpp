#include "report/coverage_section.h"

#include <fmt/format.h>

#include <iterator>

#include "model/graph_coverage.h"
#include "report/lifecycle_table.h"
#include "report/render.h"
#include "report/utf8.h"
#include "util/cpp_names.h"
#include "util/demangle.h"

namespace capguard {

namespace {

// Integers: the same digits on every machine; 128 bits, as counts read back from a JSON report
// may be any size.
__extension__ using Wide = unsigned __int128;
uint64_t share_tenths(const CoverageInfo& c) {
  const Wide all = Wide{c.graph_kernels} + c.eager_kernels;
  return all == 0 ? 1000 : static_cast<uint64_t>(Wide{c.graph_kernels} * 1000 / all);
}

}  // namespace

std::string coverage_share_words(const CoverageInfo& c) {
  const uint64_t tenths = share_tenths(c);
  return fmt::format("{}.{}%", tenths / 10, tenths % 10);
}

std::string coverage_summary(const CoverageInfo& c) {
  if (!c.measured)
    return fmt::format(
        "unknown: eager launches bypassed capguard's launch hooks ({} graph "
        "replays seen)",
        c.graph_launches);
  std::string out = fmt::format(
      "{} of {} kernels ran inside graph replays after warm-up ({} "
      "in {} replays",
      coverage_share_words(c), c.graph_kernels + c.eager_kernels, c.graph_kernels,
      c.graph_launches);
  if (c.unwalked_launches != 0)
    out += fmt::format(", {} of them of graphs whose nodes were not read", c.unwalked_launches);
  out += fmt::format("; {} launched eagerly", c.eager_kernels);
  if (c.phases != 0)
    out += fmt::format(", in {} {} between replays, at most {} in one", c.phases,
                       c.phases == 1 ? "phase" : "phases", c.most_in_phase);
  return out + ")";
}

std::string eager_kernel_name(const EagerSite& site) {
  if (site.kernel.empty()) return "an unnamed kernel";
  return short_kernel_name(demangle(site.kernel.c_str()));
}

std::string eager_site_line(const EagerSite& site) {
  std::string out =
      fmt::format("{} eager {} of {}", site.launches, site.launches == 1 ? "launch" : "launches",
                  terminal_safe(eager_kernel_name(site)));
  if (site.threads != 0) out += fmt::format(" ({} GPU threads)", site.threads);
  out += " at " + site_cell(site.location);
  if (!site.framework_call.empty()) out += " (" + site.framework_call + ")";
  return out + fmt::format(", in {} {}", site.phases, site.phases == 1 ? "phase" : "phases");
}

std::string coverage_text(const Report& report) {
  if (report.coverage.empty()) return {};
  std::string out = "graph coverage after warm-up (from the first graph replay on):\n";
  auto it = std::back_inserter(out);
  for (const CoverageInfo& c : report.coverage) {
    fmt::format_to(it, "  process {}: {}\n", c.pid, coverage_summary(c));
    const size_t shown = std::min(c.eager.size(), kEagerSitesShown);
    for (size_t i = 0; i < shown; ++i) fmt::format_to(it, "    {}\n", eager_site_line(c.eager[i]));
    const uint64_t more = c.eager.size() - shown + c.other_sites;
    if (more != 0) fmt::format_to(it, "    ... and {} more (the JSON report lists them)\n", more);
  }
  if (report.coverage.size() > 1)
    fmt::format_to(it, "  {}: {}\n", coverage_job_words(report.coverage.size()),
                   coverage_summary(job_coverage(report.coverage)));
  return out;
}

std::string coverage_job_words(size_t processes) {
  return fmt::format("the job ({} processes, their kernels counted together)", processes);
}

namespace {
void write_counts(JsonWriter& json, const CoverageInfo& c) {
  json.field("measured", c.measured);
  json.key("share_percent").fixed(share_tenths(c), 1);
  json.field("graph_launches", c.graph_launches);
  json.field("graph_kernels", c.graph_kernels);
  json.field("unwalked_graph_launches", c.unwalked_launches);
  json.field("eager_kernels", c.eager_kernels);
  json.field("eager_phases", c.phases);
  json.field("most_eager_in_a_phase", c.most_in_phase);
}
}  // namespace

void write_coverage_json(JsonWriter& json, const Report& report) {
  if (report.coverage.empty()) return;  // only then: reports of programs without graphs keep theirs
  json.key("graph_coverage");
  json.begin_array();
  for (const CoverageInfo& c : report.coverage) {
    json.begin_object();
    json.field("pid", uint64_t{c.pid});
    write_counts(json, c);
    json.key("eager");
    json.begin_array();
    for (const EagerSite& site : c.eager) {
      json.begin_object();
      site.kernel.empty() ? json.key("kernel").null() : json.field("kernel", site.kernel);
      json.field("launches", site.launches);
      json.field("threads", site.threads);
      json.field("phases", site.phases);
      if (!site.framework_call.empty()) json.field("framework_call", site.framework_call);
      json.key("location");
      write_json_location(json, site.location);
      json.end_object();
    }
    json.end_array();
    json.field("other_sites", c.other_sites);
    json.end_object();
  }
  json.end_array();
  if (report.coverage.size() < 2) return;
  // Derived from the processes' counts (a merge of node reports adds them up again).
  json.key("graph_coverage_job");
  json.begin_object();
  json.field("processes", uint64_t{report.coverage.size()});
  write_counts(json, job_coverage(report.coverage));
  json.end_object();
}

}  // namespace capguard
