// The graph lifecycle table (Report::graph_sites), the pieces the text and HTML views share:
// which sites come first, how a site, a size and a time are written.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/report.h"

namespace capguard {

// Most graphs first, then most launches; ties keep the report's order.
std::vector<const GraphSiteInfo*> sites_by_size(std::span<const GraphSiteInfo* const> sites);

// The sites grouped as the findings are: per process of the report that has any, in the
// report's order, then those of processes the report has no record of, by pid. Each group's
// sites in sites_by_size order.
struct SiteGroup {
  const ProcessInfo* process = nullptr;  // null: known by pid only
  uint32_t pid = 0;
  std::vector<const GraphSiteInfo*> sites;
};
std::vector<SiteGroup> sites_by_process(const Report& report);

// The site's user frame (or its first frame outside CUDA) as "app.cu:42 (train_step)", its function
// cut to fit `width` code points with "…"; "app.cu:42" alone when even that is too long (cut too).
// Text as the trace has it (escape it for the format).
std::string site_cell(const Location& site, size_t width = SIZE_MAX);

std::string bytes_cell(uint64_t bytes);  // "1.2 GiB", "512 B"; "-" for 0 (none seen)
std::string duration_cell(uint64_t ns);  // "48.2 ms", "2.35 s"; "-" for 0 (none measured)
std::string launches_cell(const GraphSiteInfo& site);  // "103", "103+" when a floor

// A held-memory row (GraphSiteInfo::held) in words: "4.0 MiB in 2 blocks, 5 addresses (1 released):
// cudaMalloc at app.cu:20 (main)", "1 address: unknown owner". Text as the trace has it.
std::string held_memory_cell(const HeldMemory& held);

// The rule ids of the site's findings, each once, in the findings' order.
std::vector<std::string_view> site_rules(const Report& report, const GraphSiteInfo& site);

// Code points in valid UTF-8 (what a terminal column count is, near enough); `s` cut to at most
// `width` of them, ending in "…" when cut.
size_t text_width(std::string_view s);
std::string ellipsize(std::string_view s, size_t width);

// The section before the text report's SUMMARY line (render_text_lifecycle.cpp); empty when
// the report has no graph sites.
std::string lifecycle_text(const Report& report);

}  // namespace capguard
