// The HTML report: one self-contained page (inline CSS and SVG, no scripts, nothing fetched)
// with the summary, every finding with its stacks and the source lines around each user frame,
// and a picture of every capture (capture_picture.h).
#include <fmt/format.h>

#include <iterator>

#include "model/frame_owner.h"
#include "model/graph_coverage.h"
#include "report/capture_picture.h"
#include "report/coverage_section.h"
#include "report/finding_groups.h"
#include "report/lifecycle_table.h"
#include "report/python_stack.h"
#include "report/rehearsal_section.h"
#include "report/render.h"
#include "report/source_lines.h"
#include "report/xml_escape.h"

namespace capguard {
namespace {

constexpr int kCulpritContext = 3;     // source lines either side of the culprit's user frame
constexpr int kRelatedContext = 1;     // ... and of the other stacks
constexpr size_t kSiteCellWidth = 80;  // a lifecycle site's function is cut, its title has all

constexpr const char* kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1c2833; max-width: 1400px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; }
h3 { font-size: 16px; margin: 0 0 6px; } h4 { font-size: 13px; margin: 10px 0 2px; color: #455a64; }
.summary { font-family: ui-monospace, monospace; background: #eceff1; padding: 6px 10px; }
.finding { border: 1px solid #cfd8dc; border-left: 6px solid #c62828; border-radius: 6px;
           padding: 12px 16px; margin: 14px 0; }
.finding.warning { border-left-color: #b8860b; } .finding.note { border-left-color: #00838f; }
.sev { font-weight: 700; color: #c62828; } .warning .sev { color: #b8860b; } .note .sev { color: #00838f; }
.call, .message { margin: 4px 0; } .fix { margin: 8px 0 0; } .fix b { color: #2e7d32; }
ol.stack { font-family: ui-monospace, monospace; font-size: 12.5px; margin: 2px 0; padding-left: 22px; }
ol.stack li.user { font-weight: 700; } .hidden { color: #78909c; font-size: 12px; }
pre.source { background: #fafafa; border: 1px solid #e0e0e0; margin: 4px 0 6px; padding: 4px 0;
             font-size: 12.5px; overflow-x: auto; }
pre.source span { display: block; padding: 0 8px; } pre.source span.culprit { background: #ffebee; font-weight: 700; }
figure.capture { margin: 10px 0; overflow-x: auto; } figcaption { font-size: 12.5px; color: #455a64; }
svg text { font: 11px system-ui, sans-serif; fill: #263238; } svg text.box-title { font-weight: 700; font-size: 12px; }
svg text.lane-name { font-family: ui-monospace, monospace; } svg text.lane-name.unjoined { fill: #c62828; font-weight: 700; }
svg text.culprit-label { font-weight: 700; fill: #b71c1c; } svg text.site { fill: #607d8b; font-size: 10px; }
.legend { font-size: 12px; color: #455a64; }
table.lifecycle { border-collapse: collapse; font-size: 13px; margin: 6px 0; }
table.lifecycle th, table.lifecycle td { padding: 2px 10px; border-bottom: 1px solid #eceff1; }
table.lifecycle th { text-align: left; color: #455a64; } table.lifecycle td.n { text-align: right; }
table.lifecycle td.site { font-family: ui-monospace, monospace; } table.lifecycle tr.flagged td.site { color: #b8860b; }
)";

class HtmlWriter {
 public:
  HtmlWriter(const Report& report, const RenderOptions& options)
      : report_(report),
        options_(options),
        sources_(options.source_root),
        capture_findings_(report) {}

  std::string write() {
    out_ += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out_ += "<title>capguard report</title>\n<style>";
    out_ += kStyle;
    out_ += "</style>\n</head>\n<body>\n<h1>capguard report</h1>\n";
    std::string summary = summary_line(report_);
    if (!summary.empty() && summary.back() == '\n') summary.pop_back();
    put("<p class=\"summary\">{}</p>\n", esc(summary));
    write_processes();
    out_ += "<h2 id=\"findings\">Findings</h2>\n";
    if (report_.findings.empty()) out_ += "<p>No findings.</p>\n";
    // Identical findings once, as in the text report (finding_groups.h).
    const FindingGroups groups = group_findings(report_);
    for (size_t i = 0; i < report_.findings.size(); ++i)
      if (!groups.repeat[i])
        write_finding(i, report_.findings[i], groups.others[i], group_scope(report_, groups, i));
    if (!report_.graph_sites.empty()) write_lifecycle();
    if (!report_.rehearsals.empty()) write_rehearsals();
    if (!report_.coverage.empty()) write_coverage();
    out_ += "<h2 id=\"captures\">Captures</h2>\n";
    out_ +=
        "<p class=\"legend\">Each lane is a stream, calls in order from left to right: "
        "&#9646; begin/end of the capture, blue arrow: a stream forked in, green arrow: a join, "
        "&#9675; last work on a lane (red: never joined back), &#9670; the culprit call; calls "
        "that escaped the capture are drawn below it. Hover a mark for its source line.</p>\n";
    if (report_.captures.empty()) out_ += "<p>No captures.</p>\n";
    for (const CaptureInfo& capture : report_.captures) write_capture(capture);
    out_ += "</body>\n</html>\n";
    return std::move(out_);
  }

 private:
  template <class... Args>
  void put(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(out_), format, std::forward<Args>(args)...);
  }
  static std::string esc(std::string_view s) { return xml_escape(s, false); }

  void write_processes() {
    out_ += "<ul class=\"processes\">\n";
    for (const ProcessInfo& p : report_.processes) {
      put("<li>process {}{}: <code>{}</code>", p.pid,
          p.who ? " (" + esc(who_label(*p.who)) + ")" : "", esc(p.command));
      if (!p.attached && !p.attach_message.empty())
        put(" &#8212; not attached: {}", esc(p.attach_message));
      if (!p.cupti_lost.empty()) put(" &#8212; stopped watching: {}", esc(p.cupti_lost));
      for (const CuptiClientInfo& client : p.cupti_clients)
        put(" &#8212; shares CUPTI with {} ({})", esc(client.name),
            client.beside ? "beside capguard" : "its callbacks forwarded");
      out_ += "</li>\n";
    }
    out_ += "</ul>\n";
  }

  void write_finding(size_t index, const Finding& finding, const std::vector<size_t>& repeats,
                     const GroupScope& scope) {
    const char* severity = to_string(finding.severity);
    put("<article class=\"finding {}\" id=\"finding-{}\" data-rule=\"{}\"", severity, index + 1,
        esc(finding.rule));
    if (finding.capture) put(" data-capture=\"{}\"", *finding.capture);
    // Which ranks: all of them, or the ones that diverged.
    const std::string who = finding_who(report_, finding);
    std::string where = fmt::format("process {}", finding.pid);
    if (!who.empty()) where += ", " + who;
    if (scope.processes.size() > 1 || scope.diverged) where = scope.words + "; shown: " + where;
    put(">\n<h3><span class=\"sev\">{}</span> {}{} <small>({})</small></h3>\n", severity,
        esc(finding.rule), finding.rehearsed ? rehearsed_heading(finding.severity) : "",
        esc(where));
    out_ += "<p class=\"call\">";
    if (!finding.api.empty())
      put("<code>{}</code> returned {} ({}) ", esc(finding.api),
          esc(finding.result_name.empty() ? std::to_string(finding.result) : finding.result_name),
          finding.result);
    put("on thread {}</p>\n", finding.thread);
    if (!finding.test.empty())
      put("<p class=\"test\">in test <code>{}</code></p>\n", esc(finding.test));
    if (!finding.message.empty()) put("<p class=\"message\">{}</p>\n", esc(finding.message));
    // The picture first: it is what the reader takes in at a glance.
    const CaptureInfo* capture = report_.find_capture(finding.capture);
    if (capture) write_picture(*capture, finding);
    write_stack(finding.location, kCulpritContext);
    if (capture) {
      put("<h4>{} began here (<a href=\"#capture-{}\">picture</a>)</h4>\n",
          esc(capture_title(*capture)), capture->id);
      write_stack(capture->begin);
    }
    for (const Related& related : finding.related) {
      if (capture && related.role == "capture-begin" && related.location.seq == capture->begin.seq)
        continue;
      put("<h4>{}</h4>\n", esc(related_heading(related)));
      write_stack(related.location);
    }
    if (finding.consequences > 0)
      put("<p>{} later call(s) failed only because of this one (folded into this finding)</p>\n",
          finding.consequences);
    if (const RuleInfo* rule = find_rule_in(options_.rules, finding.rule);
        rule != nullptr && !rule->fix.empty())
      put("<p class=\"fix\"><b>fix:</b> {}</p>\n", esc(std::string(rule->fix)));
    write_repeats(repeats);
    out_ += "</article>\n";
  }

  // The rest of a finding's group: how many, their captures, and an anchor for each, so that
  // links to any of them (the lifecycle table's, a capture's root cause) land on the group.
  void write_repeats(const std::vector<size_t>& repeats) {
    if (repeats.empty()) return;
    put("<p class=\"repeats\">and {} more {}", repeats.size(),
        repeats.size() == 1 ? "time" : "times");
    bool first = true;
    for (size_t i : repeats) {
      put("<span id=\"finding-{}\"></span>", i + 1);
      if (const auto& capture = report_.findings[i].capture) {
        put("{}<a href=\"#capture-{}\">#{}</a>", first ? " (captures " : ", ", *capture, *capture);
        first = false;
      }
    }
    out_ += first ? "</p>\n" : ")</p>\n";
  }

  // Capture rehearsal: each region's verdict, and what its executions did.
  void write_rehearsals() {
    out_ += "<h2 id=\"rehearsals\">Capture rehearsal</h2>\n<ul class=\"rehearsals\">\n";
    for (const RehearsalInfo& r : report_.rehearsals) {
      if (r.verdict == RehearsalVerdict::NeverExecuted) {
        put("<li><code>{}</code> (--rehearse): <b>{}</b></li>\n", esc(r.name),
            esc(verdict_words(r)));
        continue;
      }
      put("<li><code>{}</code> (process {}, {} mode, {} execution(s)): <b>{}</b>", esc(r.name),
          r.pid, esc(mode_name(r.mode)), r.executions, esc(verdict_words(r)));
      for (const auto* items : {&r.warmup, &r.breaks}) {
        if (items->empty()) continue;
        put("<br>{}<ul>\n", items == &r.warmup ? kWarmupHeading : kBreaksHeading);
        const size_t shown = std::min(items->size(), kRehearsalItemsShown * 8);
        for (size_t i = 0; i < shown; ++i)
          put("<li>{}</li>\n", esc(item_line((*items)[i], r.executions)));
        if (items->size() > shown)
          put("<li>... and {} more (the JSON report lists every one)</li>\n",
              items->size() - shown);
        out_ += "</ul>";
      }
      out_ += "</li>\n";
    }
    out_ += "</ul>\n";
  }

  // Graph coverage after warm-up: each process's share and its eager hot spots.
  void write_coverage() {
    out_ +=
        "<h2 id=\"graph-coverage\">Graph coverage after warm-up</h2>\n<ul class=\"coverage\">\n";
    for (const CoverageInfo& c : report_.coverage) {
      put("<li>process {}: {}", c.pid, esc(coverage_summary(c)));
      if (!c.eager.empty()) {
        out_ += "<ul>\n";
        const size_t shown = std::min(c.eager.size(), kEagerSitesShown * 8);
        for (size_t i = 0; i < shown; ++i) put("<li>{}</li>\n", esc(eager_site_line(c.eager[i])));
        if (c.eager.size() - shown + c.other_sites != 0)
          put("<li>... and {} more (the JSON report lists them)</li>\n",
              c.eager.size() - shown + c.other_sites);
        out_ += "</ul>";
      }
      out_ += "</li>\n";
    }
    if (report_.coverage.size() > 1)
      put("<li>{}: {}</li>\n", esc(coverage_job_words(report_.coverage.size())),
          esc(coverage_summary(job_coverage(report_.coverage))));
    out_ += "</ul>\n";
  }

  // Every site, not only the text report's top ones: a page can fold what a terminal cannot.
  void write_lifecycle() {
    uint64_t graphs = 0;
    for (const GraphSiteInfo& site : report_.graph_sites) graphs += site.graphs;
    const std::vector<SiteGroup> groups = sites_by_process(report_);
    const bool several = groups.size() > 1 || report_.processes.size() > 1;
    out_ += "<h2 id=\"graph-lifecycle\">Graph lifecycle</h2>\n";
    put("<details class=\"graph-lifecycle\" open><summary>{} capture site(s), {} graph(s); "
        "hover a site for its stack</summary>\n<table class=\"lifecycle\">\n<tr>{}",
        report_.graph_sites.size(), graphs, several ? "<th>process</th>" : "");
    out_ +=
        "<th>site</th><th>graphs</th><th>keys</th><th>topologies</th><th>updates</th>"
        "<th>alive at exit</th><th>launches</th><th>capture+instantiate</th><th>pool</th>"
        "<th>held at exit</th><th>findings</th></tr>\n";
    for (const SiteGroup& group : groups)
      for (const GraphSiteInfo* site : group.sites) write_site(*site, several);
    out_ += "</table>\n</details>\n";
  }

  void write_site(const GraphSiteInfo& site, bool several) {
    put("<tr data-pid=\"{}\"{}>", site.pid, site.findings.empty() ? "" : " class=\"flagged\"");
    if (several) put("<td class=\"n\">{}</td>", site.pid);
    put("<td class=\"site\" title=\"{}\">{}{}</td>", xml_escape(frames_title(site.site)),
        esc(site_cell(site.site, kSiteCellWidth)),
        site.captured ? "" : " <small>(graph API)</small>");
    put("<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
        "<td class=\"n\">{}</td><td class=\"n\">{}</td>",
        site.graphs, site.keys, site.topologies, site.updates, site.alive_at_exit);
    put("<td class=\"n\"{}>{}</td>",
        site.launches_at_least
            ? " title=\"at least: some exec replayed past its recorded launches\""
            : "",
        launches_cell(site));
    put("<td class=\"n\">{}</td><td class=\"n\">{}</td><td>", duration_cell(site.capture_ns),
        bytes_cell(site.pool_bytes));
    for (size_t i = 0; i < site.held.size(); ++i)
      put("{}{}", i == 0 ? "" : "<br>", esc(held_memory_cell(site.held[i])));
    out_ += "</td><td>";
    bool first = true;
    for (size_t index : site.findings) {
      if (index >= report_.findings.size()) continue;
      put("{}<a href=\"#finding-{}\">{}</a>", first ? "" : ", ", index + 1,
          esc(report_.findings[index].rule));
      first = false;
    }
    out_ += "</td></tr>\n";
  }

  // Every frame, innermost first, one a line: what a hover over the site cell shows.
  static std::string frames_title(const Location& location) {
    std::string title;
    for (size_t i = 0; i < location.frames.size(); ++i) {
      const Frame& frame = location.frames[i];
      title += fmt::format(
          "{}#{} {}", i == 0 ? "" : "\n", i,
          frame.function.empty() ? fmt::format("0x{:x}", frame.address) : frame.function);
      if (!frame.file.empty())
        title += fmt::format(" {}:{}", frame.file, frame.line);
      else if (!frame.module.empty())
        title += fmt::format(" ({}+0x{:x})", frame.module, frame.offset);
      if (static_cast<int>(i) == location.user_frame) title += "  <- user frame";
    }
    return title;
  }

  void write_stack(const Location& location, int context = kRelatedContext) {
    if (location.frames.empty()) {
      put("<p class=\"hidden\">{}</p>\n",
          location.addresses.empty() ? "(no stack recorded)" : "(not symbolized)");
      return;
    }
    const ShownFrames shown = frames_to_show(location);
    if (location.user_frame >= 0 &&
        is_python_frame(location.frames[static_cast<size_t>(location.user_frame)])) {
      write_python_stack(location, shown, context);
      return;
    }
    out_ += "<ol class=\"stack\">\n";
    for (size_t i = shown.first; i < shown.last; ++i)
      write_frame_item(location, i, static_cast<int>(i) == location.user_frame, context);
    out_ += "</ol>\n";
    if (shown.hidden_inner() + shown.hidden_outer(location) > 0)
      put("<p class=\"hidden\">({} frames inside CUDA/capguard and {} outer frames not "
          "shown)</p>\n",
          shown.hidden_inner(), shown.hidden_outer(location));
  }

  void write_frame_item(const Location& location, size_t i, bool user, int context) {
    const Frame& frame = location.frames[i];
    put("<li value=\"{}\"{}>", i, user ? " class=\"user\"" : "");
    put("{}", frame.function.empty() ? fmt::format("0x{:x}", frame.address) : esc(frame.function));
    if (!frame.file.empty())
      put(" <span class=\"file\">{}:{}</span>", esc(frame.file), frame.line);
    else if (!frame.module.empty())
      put(" ({}+0x{:x})", esc(frame.module), frame.offset);
    out_ += "</li>\n";
    if (user && options_.source) write_source(frame, context);
  }

  // Python-first, as the text report (python_stack.h): the user's line, how it reached CUDA
  // (every frame of it one click away), the callers; CPython's frames left out.
  void write_python_stack(const Location& location, const ShownFrames& shown, int context) {
    const PythonStackView view = python_stack_view(location, shown.first, shown.last);
    out_ += "<ol class=\"stack\">\n";
    write_frame_item(location, view.user, true, context);
    if (!view.via.empty()) {
      put("<li class=\"via\"><details><summary>→ {}</summary><ol class=\"stack\">\n",
          esc(view.via));
      for (size_t i = view.user; i-- > shown.first;)
        if (!is_interpreter_frame(location.frames[i])) write_frame_item(location, i, false, 0);
      out_ += "</ol></details></li>\n";
    }
    for (const PythonCaller& caller : view.callers) {
      if (caller.count > 1)
        put("<li class=\"via\">… {} ({} frames)</li>\n", esc(caller.group), caller.count);
      else
        write_frame_item(location, caller.frame, false, 0);
    }
    out_ += "</ol>\n";
    put("<p class=\"hidden\">({} frames inside CUDA/capguard, {} interpreter frames, {} library "
        "frames folded and {} outer frames not shown)</p>\n",
        shown.hidden_inner(), view.interpreter, view.folded_python + view.folded_native,
        shown.hidden_outer(location));
  }

  void write_source(const Frame& frame, int context) {
    const auto lines = sources_.around(frame.file, frame.line, context);
    if (lines.empty()) return;
    out_ += "<pre class=\"source\">";
    for (const SourceLine& line : lines)
      put("<span{}>{:>5} | {}</span>", line.number == frame.line ? " class=\"culprit\"" : "",
          line.number, esc(line.text));
    out_ += "</pre>\n";
  }

  // At most kMaxPictures pictures in the findings and kMaxCapturePictures in the captures'
  // list: past them a line says so (a report of 100k findings would be pictures mostly).
  bool picture_budget_spent(size_t& drawn, size_t budget) {
    if (drawn < budget) {
      ++drawn;
      return false;
    }
    put("<p class=\"no-picture\">(not drawn: a report draws at most {} pictures here)</p>\n",
        budget);
    return true;
  }

  void write_picture(const CaptureInfo& capture, const Finding& finding) {
    if (picture_budget_spent(finding_pictures_, kMaxPictures)) return;
    put("<figure class=\"capture-picture\" data-capture=\"{}\">\n", capture.id);
    out_ += capture_svg(picture_of(report_, capture, capture_findings_, &finding));
    out_ += "</figure>\n";
  }

  void write_capture(const CaptureInfo& capture) {
    put("<figure class=\"capture\" id=\"capture-{}\" data-capture=\"{}\" data-status=\"{}\">\n",
        capture.id, capture.id, to_string(capture.status));
    if (!picture_budget_spent(capture_pictures_, kMaxCapturePictures))
      out_ += capture_svg(picture_of(report_, capture, capture_findings_));
    put("<figcaption>{}, process {}, thread {}, origin {}, {} stream(s)",
        esc(capture_title(capture)), capture.pid, capture.thread, esc(stream_label(capture.stream)),
        capture.lanes.empty() ? 1 : capture.lanes.size());
    if (capture.nodes) put(", {} nodes", *capture.nodes);
    if (capture.root_cause)
      put("; killed by <a href=\"#finding-{}\">finding {}</a>", *capture.root_cause + 1,
          *capture.root_cause + 1);
    out_ += "</figcaption>\n</figure>\n";
    // The sites, folded: the picture is what this section is for.
    out_ += "<details><summary>where it began and ended</summary>\n<h4>began here</h4>\n";
    write_stack(capture.begin);
    if (capture.end) {
      out_ += "<h4>ended here</h4>\n";
      write_stack(*capture.end);
    }
    out_ += "</details>\n";
  }

  const Report& report_;
  const RenderOptions& options_;
  SourceReader sources_;
  const CaptureFindings capture_findings_;
  size_t finding_pictures_ = 0, capture_pictures_ = 0;
  std::string out_;
};

}  // namespace

std::string render_html(const Report& report, const RenderOptions& options) {
  return HtmlWriter(report, options).write();
}

}  // namespace capguard
