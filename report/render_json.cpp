// The JSON report: the stable machine interface (docs/output-formats.md). Deterministic (fixed
// order of fields and elements, so golden files can diff it), valid UTF-8 (report/json_writer.h).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/frame_owner.h"
#include "report/coverage_section.h"
#include "report/finding_groups.h"
#include "report/inner_frames.h"
#include "report/json_writer.h"
#include "report/render.h"
#include "trace/format.h"

namespace capguard {
namespace {

void write_frame(JsonWriter& json, const Frame& frame) {
  json.begin_object();
  json.key("function");
  frame.function.empty() ? json.null() : json.value(frame.function);
  json.key("file");
  frame.file.empty() ? json.null() : json.value(frame.file);
  json.key("line");
  frame.line > 0 ? json.value(static_cast<uint64_t>(frame.line)) : json.null();
  json.key("module");
  frame.module.empty() ? json.null() : json.value(frame.module);
  json.key("kind"), json.value(frame_kind(frame));
  json.end_object();
}

// `frames` starts where the program's side begins; CUDA's and capguard's own frames below it
// are `inner_frames` (report/inner_frames.h), innermost first. user_frame indexes `frames`.
void write_location(JsonWriter& json, const Location& location) {
  const size_t inner = inner_frame_count(location);
  json.begin_object();
  json.key("frames");
  json.begin_array();
  for (size_t i = inner; i < location.frames.size(); ++i) write_frame(json, location.frames[i]);
  json.end_array();
  json.key("inner_frames");
  json.begin_array();
  for (size_t i = 0; i < inner; ++i) write_frame(json, location.frames[i]);
  json.end_array();
  json.key("user_frame");
  location.user_frame >= 0 ? json.value(static_cast<uint64_t>(location.user_frame) - inner)
                           : json.null();
  json.end_object();
}

// NCCL collectives in graphs, per process: what a merge of node reports compares across ranks
// (rules/rank_collective_mismatch.cpp). "process" is the 1-based index into "processes".
void write_collectives(JsonWriter& json, const Report& report) {
  json.key("collective_graphs");
  json.begin_array();
  for (const RankCollectives& rank : report.collectives) {
    json.begin_object();
    json.key("process"), json.value(uint64_t{rank.process});
    json.key("pid"), json.value(uint64_t{rank.pid});
    json.key("ended"), json.value(rank.ended);
    json.key("graphs");
    json.begin_array();
    for (const CollectiveGraph& graph : rank.graphs) {
      json.begin_object();
      // Its capture's line alone: what the ranks are compared by (the report stays small).
      json.key("site");
      json.begin_object();
      const Frame* line = graph.site.line_frame();
      json.key("file"), json.value(line != nullptr ? line->file : std::string());
      json.key("line"), json.value(uint64_t(line != nullptr && line->line > 0 ? line->line : 0));
      json.key("function"), json.value(line != nullptr ? line->function : std::string());
      json.end_object();
      json.key("key"), json.value(fmt::format("{:x}", graph.key));
      json.key("collectives");
      json.begin_array();
      for (const std::string& c : graph.collectives) json.value(c);
      json.end_array();
      if (graph.collectives_cut) json.key("collectives_cut"), json.value(true);
      json.key("execs"), json.value(graph.execs);
      json.end_object();
    }
    json.end_array();
    json.key("replays");
    json.begin_array();
    for (uint32_t graph : rank.replays) json.value(uint64_t{graph});
    json.end_array();
    if (rank.replays_cut) json.key("replays_cut"), json.value(true);
    json.key("last_launches");
    json.begin_array();
    for (const StreamReplay& last : rank.last) {
      json.begin_object();
      json.key("stream"), json.value(fmt::format("{:x}", last.stream));
      json.key("graph"), json.value(uint64_t{last.graph});
      json.key("seq"), json.value(last.launch);
      json.end_object();
    }
    json.end_array();
    json.end_object();
  }
  json.end_array();
}

void write_process(JsonWriter& json, const ProcessInfo& process) {
  json.begin_object();
  json.key("pid"), json.value(uint64_t{process.pid});
  json.key("command"), json.value(process.command);
  json.key("attached"), json.value(process.attached);
  // Only where there is something to say: reports of other programs keep their shape.
  if (!process.cupti_clients.empty()) {
    json.key("cupti_clients");
    json.begin_array();
    for (const CuptiClientInfo& client : process.cupti_clients) {
      json.begin_object();
      json.key("name"), json.value(client.name);
      json.key("sharing"), json.value(client.beside ? "beside" : "forwarded");
      json.key("subscriptions"), json.value(uint64_t{client.subscriptions});
      json.key("finalize_calls_kept"), json.value(uint64_t{client.finalizes});
      json.key("refused"), json.value(uint64_t{client.refused});
      json.end_object();
    }
    json.end_array();
  }
  if (!process.cupti_lost.empty()) json.key("stopped_watching"), json.value(process.cupti_lost);
  if (!process.framework_hooks.empty()) {  // PyTorch's allocator (trace/framework_memory.def)
    json.key("framework_hooks");
    json.begin_array();
    for (const FrameworkHookInfo& hook : process.framework_hooks) {
      json.begin_object();
      json.key("owner"), json.value(hook.owner);
      json.key("attached"), json.value(hook.attached);
      json.key("state"), json.value(hook.state);
      json.end_object();
    }
    json.end_array();
  }
  if (process.cuda.recorded) {  // traces of format 7 on
    const CudaInfo& cuda = process.cuda;
    json.key("cuda");
    json.begin_object();
    json.key("runtime"), json.value(cuda_version_text(cuda.runtime));
    json.key("runtime_linkage"), json.value(cuda.linkage);
    json.key("runtime_library"), json.value(cuda.runtime_path);
    if (cuda.other_runtime != 0)
      json.key("other_runtime"), json.value(cuda_version_text(cuda.other_runtime));
    json.key("driver"), json.value(cuda_version_text(cuda.driver));
    json.key("cupti_major"), json.value(uint64_t{cuda.cupti_major});
    json.key("cupti_api_version"), json.value(uint64_t{cuda.cupti_api});
    json.key("cupti_library"), json.value(cuda.cupti_path);
    json.end_object();
  }
  if (process.who) {  // who ran it: traces of format 8 on
    if (!process.attached) json.key("attach_message"), json.value(process.attach_message);
    json.key("trace"), json.value(process.trace_path);
    // A string: nanoseconds since 1970 lose their last digits as a JSON number (a double).
    if (process.start_unix_ns != 0)
      json.key("started_unix_ns"), json.value(std::to_string(process.start_unix_ns));
    const WhoRan& who = *process.who;
    json.key("who");
    json.begin_object();
    json.key("host"), json.value(who.host);
    json.key("rank");
    who.rank ? json.value(uint64_t{*who.rank}) : json.null();
    json.key("rank_from"), json.value(who.rank_from);
    json.key("local_rank");
    who.local_rank ? json.value(uint64_t{*who.local_rank}) : json.null();
    json.key("world_size");
    who.world_size ? json.value(uint64_t{*who.world_size}) : json.null();
    json.key("cuda_visible_devices"), json.value(who.devices);
    json.key("gpu"), json.value(who.gpu);
    json.key("label"), json.value(who_label(who));
    json.end_object();
  }
  json.end_object();
}

// Each group once, with where it was found: only for reports of traces that say who
// ran them, so that other reports keep their shape.
void write_groups(JsonWriter& json, const Report& report, const FindingGroups& groups) {
  json.key("finding_groups");
  json.begin_array();
  for (size_t g = 0; g < groups.first.size(); ++g) {
    const size_t first = groups.first[g];
    const GroupScope scope = group_scope(report, groups, first);
    json.begin_object();
    json.key("id"), json.value(uint64_t{g + 1});
    json.key("rule"), json.value(report.findings[first].rule);
    json.key("findings"), json.value(uint64_t{groups.others[first].size() + 1});
    json.key("processes"), json.value(uint64_t{scope.processes.size()});
    json.key("ranks");
    json.begin_array();
    for (uint32_t rank : scope.ranks) json.value(uint64_t{rank});
    json.end_array();
    json.key("of_ranks"), json.value(uint64_t{scope.world});
    json.key("diverged"), json.value(scope.diverged);
    json.key("where"), json.value(scope.words);
    json.end_object();
  }
  json.end_array();
}

void write_capture(JsonWriter& json, const CaptureInfo& capture) {
  json.begin_object();
  json.key("id"), json.value(uint64_t{capture.id});
  json.key("pid"), json.value(uint64_t{capture.pid});
  json.key("thread"), json.value(uint64_t{capture.thread});
  json.key("stream"), json.value(fmt::format("0x{:x}", capture.stream));
  json.key("mode"), json.value(mode_name(capture.mode));
  json.key("status"), json.value(to_string(capture.status));
  json.key("nodes");
  capture.nodes ? json.value(*capture.nodes) : json.null();
  json.key("begin"), write_location(json, capture.begin);
  json.key("end");
  if (capture.end)
    write_location(json, *capture.end);
  else
    json.null();
  json.key("root_cause");
  capture.root_cause ? json.value(uint64_t{*capture.root_cause}) : json.null();
  if (capture.count > 1) {  // clean captures of one site, counted together (docs: JSON)
    json.key("count"), json.value(capture.count);
    json.key("last_id"), json.value(uint64_t{capture.last_id});
  }
  if (capture.other_sites) json.key("other_sites"), json.value(true);
  json.end_object();
}

void write_graph_site(JsonWriter& json, const GraphSiteInfo& site) {
  json.begin_object();
  json.key("pid"), json.value(uint64_t{site.pid});
  json.key("site"), write_location(json, site.site);
  json.key("captured"), json.value(site.captured);
  json.key("graphs"), json.value(site.graphs);
  json.key("keys"), json.value(uint64_t{site.keys});
  json.key("topologies"), json.value(uint64_t{site.topologies});
  json.key("updates"), json.value(site.updates);
  json.key("alive_at_exit"), json.value(site.alive_at_exit);
  json.key("launches"), json.value(site.launches);
  json.key("launches_exact"), json.value(!site.launches_at_least);
  json.key("capture_ms"), json.fixed((site.capture_ns + 500) / 1000, 3);  // rounded to 1 µs
  json.key("pool_bytes"), json.value(site.pool_bytes);
  json.key("findings");
  json.begin_array();
  for (size_t index : site.findings) json.value(uint64_t{index});
  json.end_array();
  // What its execs alive at exit hold, by owner (model/graph_held_memory.h).
  json.key("held_memory");
  json.begin_array();
  for (const HeldMemory& held : site.held) {
    json.begin_object();
    json.key("owner"), json.value(held.owner);
    json.key("pool");
    if (held.pool.empty())
      json.null();
    else
      json.value(held.pool);
    json.key("blocks"), json.value(held.blocks);
    json.key("bytes"), json.value(held.bytes);
    json.key("addresses"), json.value(held.addresses);
    json.key("released"), json.value(held.released);
    json.key("allocation");
    if (held.alloc.frames.empty())
      json.null();
    else
      write_location(json, held.alloc);
    json.end_object();
  }
  json.end_array();
  json.end_object();
}

void write_finding(JsonWriter& json, const Report& report, const Finding& finding, uint32_t group) {
  json.begin_object();
  json.key("rule"), json.value(finding.rule);
  json.key("group"), json.value(uint64_t{group});  // shared by identical findings
  // What a merge of the nodes' reports needs, in reports of traces that say who ran
  // them (format 8 on): older reports keep their shape.
  const auto process = process_index(report, finding);
  const bool for_merge = process && report.processes[*process].who;
  if (for_merge) {
    const WhoRan& who = *report.processes[*process].who;
    json.key("rank");
    who.rank ? json.value(uint64_t{*who.rank}) : json.null();
    json.key("host"), json.value(who.host);
    json.key("who"), json.value(who_label(who));
    json.key("result_code"), json.value(int64_t{finding.result});  // a merge prints it again
  }
  json.key("severity"), json.value(to_string(finding.severity));
  json.key("message"), json.value(finding.message);
  json.key("api"), json.value(finding.api);
  if (!finding.framework_call.empty())  // what the user wrote (framework_calls.def)
    json.key("framework_call"), json.value(finding.framework_call);
  if (!finding.framework_headline.empty())  // what happened in its words (framework_fixes.def)
    json.key("framework_headline"), json.value(finding.framework_headline);
  if (!finding.framework_fix.empty()) {
    json.key("framework_fix"), json.value(finding.framework_fix);
  }
  json.key("result");
  finding.result_name.empty() ? json.null() : json.value(finding.result_name);
  json.key("pid"), json.value(uint64_t{finding.pid});
  json.key("thread"), json.value(uint64_t{finding.thread});
  if (!finding.thread_name.empty())  // a framework's thread (framework_calls.def Thread)
    json.key("thread_name"), json.value(finding.thread_name);
  json.key("capturing_thread"), json.value(finding.capturing_thread);
  json.key("capture");
  finding.capture ? json.value(uint64_t{*finding.capture}) : json.null();
  json.key("location"), write_location(json, finding.location);
  json.key("related");
  json.begin_array();
  for (const auto& related : finding.related) {
    json.begin_object();
    json.key("role"), json.value(related.role);
    if (for_merge && !related.detail.empty()) json.key("detail"), json.value(related.detail);
    json.key("location"), write_location(json, related.location);
    json.end_object();
  }
  json.end_array();
  json.key("consequences"), json.value(uint64_t{finding.consequences});
  if (!finding.test.empty()) json.key("test"), json.value(finding.test);  // pytest plugin's
  if (finding.rehearsed) {  // only then: real captures' findings keep their shape
    json.key("rehearsed"), json.value(true);
    json.key("region"), json.value(finding.region);
  }
  json.end_object();
}

void write_rehearsal_items(JsonWriter& json, const std::vector<RehearsalItem>& items) {
  json.begin_array();
  for (const RehearsalItem& item : items) {
    json.begin_object();
    json.key("what"), json.value(item.what);
    json.key("rule"), json.value(item.rule);
    json.key("api"), json.value(item.api);
    json.key("thread"), json.value(uint64_t{item.thread});
    json.key("executions"), json.value(uint64_t{item.executions});
    json.key("calls"), json.value(uint64_t{item.calls});
    json.key("other_thread"), json.value(item.other_thread);
    if (!item.first_use.empty()) json.key("first_use"), json.value(item.first_use);
    if (!item.thread_name.empty()) json.key("thread_name"), json.value(item.thread_name);
    json.key("location"), write_location(json, item.location);
    json.end_object();
  }
  json.end_array();
}

void write_rehearsal(JsonWriter& json, const RehearsalInfo& r) {
  json.begin_object();
  json.key("pid"), json.value(uint64_t{r.pid});
  json.key("name"), json.value(r.name);
  json.key("domain"), json.value(r.domain);
  json.key("mode"), json.value(mode_name(r.mode));
  json.key("executions"), json.value(uint64_t{r.executions});
  json.key("verdict"), json.value(to_string(r.verdict));
  json.key("warmups"), json.value(uint64_t{r.warmups});
  json.key("warmup"), write_rehearsal_items(json, r.warmup);
  json.key("breaks"), write_rehearsal_items(json, r.breaks);
  json.end_object();
}

}  // namespace

void write_json_location(JsonWriter& json, const Location& location) {
  write_location(json, location);
}

std::string render_json(const Report& report) {
  std::string out;
  render_json(report, [&](std::string_view piece) { out += piece; });
  return out;  // ends with a newline
}

void render_json(const Report& report, const JsonSink& sink) {
  JsonWriter json(sink);
  json.begin_object();
  json.key("tool"), json.value("capguard");
  json.key("version"), json.value(trace::kToolVersion);
  if (!report.judged_fail_on.empty()) json.key("fail_on"), json.value(report.judged_fail_on);
  json.key("processes");
  json.begin_array();
  for (const auto& process : report.processes) write_process(json, process);
  json.end_array();
  json.key("captures");
  json.begin_array();
  for (const auto& capture : report.captures) write_capture(json, capture);
  json.end_array();
  if (!report.graph_sites.empty()) {  // only then: reports of programs without graphs keep theirs
    json.key("graph_lifecycle");
    json.begin_array();
    for (const GraphSiteInfo& site : report.graph_sites) write_graph_site(json, site);
    json.end_array();
  }
  json.key("findings");
  json.begin_array();
  const FindingGroups groups = group_findings(report);
  for (size_t i = 0; i < report.findings.size(); ++i)
    write_finding(json, report, report.findings[i], groups.id[i]);
  json.end_array();
  if (std::any_of(report.processes.begin(), report.processes.end(),
                  [](const ProcessInfo& p) { return p.who.has_value(); }))
    write_groups(json, report, groups);
  if (!report.rehearsals.empty()) {  // capture rehearsal: only when rehearsed
    json.key("rehearsals");
    json.begin_array();
    for (const RehearsalInfo& r : report.rehearsals) write_rehearsal(json, r);
    json.end_array();
  }
  write_coverage_json(json, report);
  if (!report.collectives.empty()) write_collectives(json, report);
  if (!report.rule_options.empty()) {  // only then: reports with the defaults keep their shape
    json.key("rule_options");
    json.begin_array();
    for (const RuleOptionValue& o : report.rule_options) {
      json.begin_object();
      json.key("rule"), json.value(o.rule);
      json.key("option"), json.value(o.option);
      json.key("value"), json.value(o.value);
      json.key("default"), json.value(o.default_value);
      json.end_object();
    }
    json.end_array();
  }
  if (!report.problems.empty()) {  // only then: reports of complete analyses keep their shape
    json.key("problems");
    json.begin_array();
    for (const ToolProblem& problem : report.problems) {
      json.begin_object();
      json.key("level"), json.value(to_string(problem.level));
      json.key("message"), json.value(problem.message);
      if (problem.unfinished) json.key("unfinished"), json.value(true);
      if (problem.coverage_gate) json.key("graph_coverage_gate"), json.value(true);
      json.end_object();
    }
    json.end_array();
  }
  json.key("summary");
  json.begin_object();
  json.key("errors"), json.value(uint64_t(report.count(Severity::Error)));
  json.key("warnings"), json.value(uint64_t(report.count(Severity::Warning)));
  json.key("notes"), json.value(uint64_t(report.count(Severity::Note)));
  json.end_object();
  json.end_object();
}

}  // namespace capguard
