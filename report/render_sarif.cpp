// SARIF 2.1.0 for GitHub code scanning and other SARIF viewers. Shaped by what GitHub accepts:
// every result has a physicalLocation with an artifactLocation (GitHub rejects the whole upload
// otherwise), partialFingerprints carry fingerprint() so an alert survives reruns, and related
// locations are linked from the message text as "[capture-begin](1)".
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/frame_owner.h"
#include "report/coverage_section.h"
#include "report/finding_groups.h"
#include "report/fingerprint.h"
#include "report/inner_frames.h"
#include "report/json_writer.h"
#include "report/render.h"
#include "trace/format.h"
#include "util/base_name.h"

namespace capguard {
namespace {

namespace fs = std::filesystem;

// Text from a trace inside a SARIF message: viewers turn "[text](url)" in message.text into a
// link (SARIF 2.1.0 3.11.6, GitHub code scanning), so brackets and backslashes are escaped
// (\[ \] \\), as the standard says; only capguard's own links to related locations stay links.
std::string sarif_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

constexpr char kSchemaUri[] =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
constexpr char kSourceRootId[] = "SRCROOT";

// SARIF's levels are capguard's severity names (model/enum_names.def).
const char* sarif_level(Severity s) { return to_string(s); }

// "sync-during-capture" -> "SyncDuringCapture": SARIF's reportingDescriptor.name.
std::string pascal_case(std::string_view id) {
  std::string out;
  bool upper = true;
  for (char c : id) {
    if (c == '-') {
      upper = true;
    } else {
      out += upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
      upper = false;
    }
  }
  return out;
}

// The explanation's first paragraph on one line: what the rule is about, for SARIF viewers
// that show a description next to the rule's name.
std::string first_paragraph(const RuleInfo& rule) {
  std::string_view text = rule.explanation;
  text = text.substr(0, text.find("\n\n"));
  if (text.empty()) return std::string(rule.summary);
  std::string out(text);
  for (char& c : out) c = c == '\n' ? ' ' : c;
  return out;
}

// RFC 3986: keep unreserved characters and '/', percent-encode every other byte.
std::string percent_encode(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
    if (keep) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

struct Artifact {
  std::string uri;
  bool relative_to_root = false;  // uriBaseId SRCROOT
};

class SarifRenderer {
 public:
  SarifRenderer(const Report& report, const RenderOptions& options, const JsonSink& sink)
      : report_(report), options_(options), w_(sink) {
    if (!options.source_root.empty()) {
      root_ = fs::absolute(fs::path(options.source_root)).lexically_normal();
      if (!root_.has_filename()) root_ = root_.parent_path();  // drop a trailing '/'
    }
  }

  void render() {
    w_.begin_object();
    w_.field("$schema", kSchemaUri).field("version", "2.1.0");
    w_.key("runs").begin_array().begin_object();
    write_tool();
    write_invocation();
    if (!root_.empty()) {
      w_.key("originalUriBaseIds").begin_object().key(kSourceRootId).begin_object();
      w_.field("uri", "file://" + percent_encode(root_.generic_string() + "/"));
      w_.end_object().end_object();
    }
    w_.key("results").begin_array();
    const FindingGroups groups = group_findings(report_);
    for (size_t i = 0; i < report_.findings.size(); ++i) {
      // Across processes a group is one result, its ranks a property; repeats in
      // the first finding's own process stay results of their own, as before.
      const size_t first = groups.first[groups.id[i] - 1];
      if (i != first && process_index(report_, report_.findings[i]) !=
                            process_index(report_, report_.findings[first]))
        continue;
      std::optional<GroupScope> scope;
      if (i == first) scope = group_scope(report_, groups, first);
      write_result(report_.findings[i], groups.id[i], scope);
    }
    for (const CoverageInfo& coverage : report_.coverage) write_eager_hot_spots(coverage);
    w_.end_array();
    w_.end_object().end_array();
    w_.end_object();
  }

 private:
  void write_tool() {
    w_.key("tool").begin_object().key("driver").begin_object();
    w_.field("name", "capguard").field("version", trace::kToolVersion);
    w_.field("semanticVersion", trace::kToolVersion);
    w_.key("rules").begin_array();
    for (const RuleInfo& rule : options_.rules) write_rule(rule);
    if (!report_.coverage.empty()) write_rule(kEagerHotSpotRule);
    w_.end_array();
    w_.end_object().end_object();
  }

  void write_rule(const RuleInfo& rule) {
    w_.begin_object();
    w_.field("id", rule.id).field("name", pascal_case(rule.id));
    w_.key("shortDescription").begin_object().field("text", rule.summary).end_object();
    w_.key("fullDescription").begin_object().field("text", first_paragraph(rule)).end_object();
    // The explanation is plain text whose examples are indented by four spaces: it reads the
    // same as Markdown. Its own "Fix:" paragraph, when it has one, makes the fix line redundant.
    std::string text(rule.explanation);
    if (text.find("Fix:") == std::string::npos) text += "\n\nFix: " + std::string(rule.fix);
    const std::string markdown = "**" + std::string(rule.summary) + "**\n\n" + text;
    w_.key("help").begin_object().field("text", text).field("markdown", markdown).end_object();
    w_.key("defaultConfiguration").begin_object();
    w_.field("level", sarif_level(rule.severity)).end_object();
    w_.key("properties").begin_object();
    w_.key("tags")
        .begin_array()
        .value("cuda")
        .value("cuda-graphs")
        .value("correctness")
        .end_array();
    w_.field("precision", "very-high");
    w_.field("problem.severity",
             rule.severity == Severity::Note ? "recommendation" : sarif_level(rule.severity));
    w_.end_object();
    w_.end_object();
  }

  // A process capguard could not attach to was not checked: say so as a tool notification.
  void write_invocation() {
    bool all_attached = true;
    for (const ProcessInfo& p : report_.processes) all_attached &= p.attached;
    bool failed = !all_attached;
    for (const ToolProblem& problem : report_.problems) failed |= problem.level == Severity::Error;
    w_.key("invocations").begin_array().begin_object();
    w_.field("executionSuccessful", !failed);
    if (!all_attached || !report_.problems.empty()) {
      w_.key("toolExecutionNotifications").begin_array();
      for (const ProcessInfo& p : report_.processes) {
        if (p.attached) continue;
        w_.begin_object().field("level", to_string(Severity::Error)).key("message").begin_object();
        w_.field("text", "capguard did not attach to process " + std::to_string(p.pid) + " (" +
                             sarif_text(p.command) + "): " + sarif_text(p.attach_message));
        w_.end_object().end_object();
      }
      for (const ToolProblem& problem : report_.problems) {
        w_.begin_object().field("level", to_string(problem.level)).key("message").begin_object();
        w_.field("text", sarif_text(problem.message));
        w_.end_object().end_object();
      }
      w_.end_array();
    }
    w_.end_object().end_array();
  }

  Artifact artifact_for(const std::string& path) const {
    const fs::path p = fs::path(path).lexically_normal();
    if (!root_.empty() && p.is_absolute()) {
      const fs::path rel = p.lexically_relative(root_);
      if (!rel.empty() && *rel.begin() != "..") return {percent_encode(rel.generic_string()), true};
    }
    if (!p.is_absolute()) return {percent_encode(p.generic_string()), !root_.empty()};
    return {"file://" + percent_encode(p.generic_string()), false};
  }

  // physicalLocation of a frame: its source line, else its module (a binary has no line).
  bool write_physical(const Frame* frame) {
    if (!frame || (frame->file.empty() && frame->module.empty())) return false;
    const bool has_source = !frame->file.empty();
    const Artifact a = artifact_for(has_source ? frame->file : frame->module);
    w_.key("physicalLocation").begin_object();
    w_.key("artifactLocation").begin_object().field("uri", a.uri);
    if (a.relative_to_root) w_.field("uriBaseId", kSourceRootId);
    w_.end_object();
    if (has_source && frame->line > 0) {
      w_.key("region").begin_object().field("startLine", frame->line).end_object();
    }
    w_.end_object();
    return true;
  }

  void write_logical(const Frame* frame) {
    if (!frame || frame->function.empty()) return;
    w_.key("logicalLocations").begin_array().begin_object();
    w_.field("fullyQualifiedName", frame->function).field("kind", "function");
    w_.end_object().end_array();
  }

  // The frame to anchor a location at: the user frame; else, past CUDA's and capguard's own
  // frames, the innermost frame with a source line, else with a module; else any such frame.
  static const Frame* placeable_frame(const Location& location) {
    const auto& frames = location.frames;
    if (location.user_frame >= 0 && static_cast<size_t>(location.user_frame) < frames.size()) {
      const Frame& user = frames[static_cast<size_t>(location.user_frame)];
      if (!user.file.empty() || !user.module.empty()) return &user;
    }
    for (size_t from : {inner_frame_count(location), size_t{0}}) {
      for (size_t i = from; i < frames.size(); ++i)
        if (!frames[i].file.empty()) return &frames[i];
      for (size_t i = from; i < frames.size(); ++i)
        if (!frames[i].module.empty()) return &frames[i];
    }
    return nullptr;
  }

  const ProcessInfo* process_of(uint32_t pid) const {
    for (const ProcessInfo& p : report_.processes) {
      if (p.pid == pid) return &p;
    }
    return nullptr;
  }

  void write_primary_location(const Finding& f) {
    const Frame* frame = placeable_frame(f.location);
    w_.key("locations").begin_array().begin_object();
    if (!write_physical(frame)) {
      // No stack at all: point at the program, so the result is still accepted and visible.
      const ProcessInfo* p = process_of(f.pid);
      std::string program = p ? p->command.substr(0, p->command.find(' ')) : std::string();
      if (program.empty()) program = "unknown-program";
      // A bare program name ("python3") is not a path in the source tree: no uriBaseId.
      const Artifact a = artifact_for(program);
      w_.key("physicalLocation").begin_object().key("artifactLocation").begin_object();
      w_.field("uri", a.uri);
      if (a.relative_to_root && program.find('/') != std::string::npos) {
        w_.field("uriBaseId", kSourceRootId);
      }
      w_.end_object().end_object();
    }
    write_logical(frame);
    w_.end_object().end_array();
  }

  std::string message_text(const Finding& f) const {
    std::string text = sarif_text(f.message);
    const Frame* anchor = anchor_frame(f.location);
    if (!anchor || anchor->file.empty()) text += " (no source line: the stack was not symbolized)";
    if (!text.empty() && text.back() != '.') text += '.';
    if (f.consequences > 0) {
      text += " " + std::to_string(f.consequences) + " later call" +
              (f.consequences == 1 ? " fails" : "s fail") + " only because of this.";
    }
    std::string links;
    int id = 0;
    for (const Related& r : f.related) {
      ++id;
      if (!placeable_frame(r.location)) continue;
      links += (links.empty() ? " See " : ", ") +
               ("[" + sarif_text(r.role) + "](" + std::to_string(id) + ")");  // roles are untrusted
    }
    if (!links.empty()) text += links + ".";
    if (const RuleInfo* rule = find_rule_in(options_.rules, f.rule))
      text += "\nFix: " + std::string(rule->fix);
    return text;
  }

  void write_related(const Finding& f) {
    bool any = false;
    int id = 0;
    for (const Related& r : f.related) {
      ++id;
      const Frame* frame = placeable_frame(r.location);
      if (!frame) continue;  // GitHub rejects locations without an artifact
      if (!any) w_.key("relatedLocations").begin_array();
      any = true;
      w_.begin_object().field("id", id);
      write_physical(frame);
      write_logical(frame);
      w_.key("message").begin_object();
      w_.field("text", r.detail.empty() ? sarif_text(r.role)
                                        : sarif_text(r.role) + ": " + sarif_text(r.detail))
          .end_object();
      w_.end_object();
    }
    if (any) w_.end_array();
  }

  // The culprit's whole host stack for viewers that show call stacks: from where the program's
  // side begins outward, then CUDA's and capguard's own frames below it (report/inner_frames.h),
  // each innermost first.
  void write_stack(const Finding& f) {
    const auto& frames = f.location.frames;
    if (frames.empty()) return;
    const size_t inner = inner_frame_count(f.location);
    w_.key("stacks").begin_array();
    write_frames("host stack of " + sarif_text(f.api), frames, inner, frames.size());
    if (inner > 0) write_frames("inside CUDA and capguard, below the call", frames, 0, inner);
    w_.end_array();
  }

  void write_frames(const std::string& message, const std::vector<Frame>& frames, size_t first,
                    size_t last) {
    w_.begin_object();
    w_.key("message").begin_object().field("text", message).end_object();
    w_.key("frames").begin_array();
    for (size_t i = first; i < last; ++i) {
      const Frame& frame = frames[i];
      w_.begin_object().key("location").begin_object();
      if (!frame.file.empty()) write_physical(&frame);
      write_logical(&frame);
      if (frame.function.empty()) {
        char address[32];
        std::snprintf(address, sizeof address, "0x%llx",
                      static_cast<unsigned long long>(frame.address));
        w_.key("message").begin_object().field("text", address).end_object();
      }
      w_.end_object();
      if (!frame.module.empty()) w_.field("module", std::string(base_name(frame.module)));
      w_.key("properties").begin_object().field("kind", frame_kind(frame)).end_object();
      w_.end_object();
    }
    w_.end_array();
    w_.end_object();
  }

  void write_result(const Finding& f, uint32_t group, const std::optional<GroupScope>& scope) {
    w_.begin_object();
    w_.field("ruleId", f.rule);
    const auto rules = options_.rules;
    for (size_t i = 0; i < rules.size(); ++i) {
      if (rules[i].id == f.rule) w_.field("ruleIndex", i);
    }
    w_.field("level", sarif_level(f.severity));
    std::string text = message_text(f);
    if (scope && (scope->processes.size() > 1 || scope->diverged))
      text += " (" + scope->words + ")";
    w_.key("message").begin_object().field("text", text).end_object();
    write_primary_location(f);
    write_related(f);
    write_stack(f);
    w_.key("partialFingerprints").begin_object();
    w_.field(kFingerprintKey, fingerprint(f)).end_object();
    w_.key("properties").begin_object();
    w_.field("api", f.api).field("result", f.result).field("resultName", f.result_name);
    w_.field("pid", f.pid).field("thread", f.thread).field("capturingThread", f.capturing_thread);
    if (f.capture) w_.field("capture", *f.capture);
    w_.field("consequences", f.consequences);
    w_.field("group", group);  // shared by identical findings (report/finding_groups.h)
    if (!f.test.empty()) w_.field("test", f.test);  // the pytest plugin's node id
    if (f.rehearsed) w_.field("rehearsed", true).field("region", f.region);
    if (const std::string who = finding_who(report_, f); !who.empty()) w_.field("who", who);
    if (scope && (scope->processes.size() > 1 || scope->world != 0)) {  // a job's ranks
      w_.field("processes", scope->processes.size());
      w_.key("ranks").begin_array();
      for (uint32_t rank : scope->ranks) w_.value(uint64_t{rank});
      w_.end_array();
      w_.field("ofRanks", scope->world).field("diverged", scope->diverged);
      w_.field("where", scope->words);
    }
    w_.end_object();
    w_.end_object();
  }

  // Graph coverage: one note per eager hot spot (the busiest sites of each process), so that a
  // code-scanning view shows where the step left the graphs. Not a finding: no gate sees it.
  void write_eager_hot_spots(const CoverageInfo& coverage) {
    const size_t shown = std::min(coverage.eager.size(), kEagerSitesShown);
    for (size_t i = 0; i < shown; ++i) {
      const EagerSite& site = coverage.eager[i];
      Finding spot;
      spot.rule = kEagerHotSpotRule.id;
      spot.api = site.kernel;  // with the site's frame: the same hot spot in every run
      spot.pid = coverage.pid;
      spot.location = site.location;
      w_.begin_object();
      w_.field("ruleId", kEagerHotSpotRule.id).field("ruleIndex", options_.rules.size());
      w_.field("level", sarif_level(Severity::Note));
      spot.message = fmt::format(
          "{} kernel launches of {} ran outside graph replays after warm-up, in {} phases "
          "between replays ({} of this process's kernels ran inside graph replays)",
          site.launches, eager_kernel_name(site), site.phases, coverage_share_words(coverage));
      w_.key("message").begin_object().field("text", message_text(spot)).end_object();
      write_primary_location(spot);
      // Code scanning matches results across runs by it, as it does findings.
      w_.key("partialFingerprints").begin_object();
      w_.field(kFingerprintKey, fingerprint(spot)).end_object();
      w_.key("properties").begin_object();
      w_.field("pid", coverage.pid).field("launches", site.launches);
      w_.field("threads", site.threads).field("phases", site.phases);
      if (!site.kernel.empty()) w_.field("kernel", site.kernel);
      w_.end_object();
      w_.end_object();
    }
  }

  const Report& report_;
  const RenderOptions& options_;
  fs::path root_;
  JsonWriter w_;
};

}  // namespace

std::string render_sarif(const Report& report, const RenderOptions& options) {
  std::string out;
  render_sarif(report, options, [&](std::string_view piece) { out += piece; });
  return out;
}

void render_sarif(const Report& report, const RenderOptions& options, const JsonSink& sink) {
  SarifRenderer(report, options, sink).render();
}

}  // namespace capguard
