// JUnit XML for CI test reporters (Jenkins, GitLab, GitHub test-report actions): one testsuite
// per process, one testcase per capture plus one for the findings outside any capture (under the
// pytest plugin: one per test that ran, plus one for the findings outside any test). A
// testcase fails when an error or warning is attached to it; notes go to <system-out>.
// Each testcase carries at most one <failure> (the strictest readers accept no more): its
// message names the root cause, its body is the text report of every finding of that case.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "report/finding_groups.h"
#include "report/fingerprint.h"
#include "report/json_writer.h"
#include "report/render.h"
#include "report/source_lines.h"
#include "report/xml_escape.h"
#include "util/base_name.h"

namespace capguard {
namespace {

std::string program_name(const std::string& command) {
  return std::string(base_name(command.substr(0, command.find(' '))));
}

// A finding's text as the terminal shows it: a one-finding report through render_text.
// Only the source lines follow `options` (their root, or none): the rest as before.
// `owners` and `captures_by_id` (indexes into report.captures by id) are made once per report.
std::string finding_text(const Report& report, const Finding& finding, const RenderOptions& options,
                         SourceReader& sources, const ProcessOwners& owners,
                         const std::unordered_map<uint32_t, std::vector<size_t>>& captures_by_id) {
  Report one;
  if (const auto index = owners.first(finding.process, finding.pid))
    one.processes.push_back(report.processes[*index]);
  const uint32_t process = one.processes.empty() ? 0 : 1;  // its index in `one`
  if (finding.capture) {
    if (const auto it = captures_by_id.find(*finding.capture); it != captures_by_id.end()) {
      for (size_t c : it->second) {
        one.captures.push_back(report.captures[c]);
        one.captures.back().root_cause.reset();
        one.captures.back().process = process;
      }
    }
  }
  one.findings.push_back(finding);
  one.findings.back().process = process;
  RenderOptions text_options;
  text_options.source = options.source;
  text_options.source_root = options.source_root;
  std::string text = render_text(one, text_options, sources);
  // The one-finding summary says nothing the testsuite counts don't: leave it out.
  if (const size_t summary = text.rfind("\nSUMMARY:"); summary != std::string::npos) {
    text.erase(summary + 1);
  }
  return text;
}

struct TestCase {
  std::string name;
  std::vector<size_t> findings;  // indexes into Report::findings, root cause first
  std::string error;             // set when the case could not run at all (not attached)
};

class JunitRenderer {
 public:
  JunitRenderer(const Report& report, const RenderOptions& options)
      : report_(report), options_(options), sources_(options.source_root) {}

  // Hands the document to `sink` a suite at a time: the counts its heads carry are found
  // first, so no more than one suite's text is ever held (100,000 processes: 99 MB of XML).
  void render(const JsonSink& sink) {
    // One suite per process; findings and captures of a pid without a process record get one
    // per pid. Processes that share a pid (several hosts or containers) stay apart. Which
    // suites hold each capture and finding is worked out once (a report may hold any number of
    // processes, captures and findings).
    std::vector<Suite> suites_wanted;
    for (size_t i = 0; i < report_.processes.size(); ++i)
      suites_wanted.push_back({static_cast<uint32_t>(i + 1), report_.processes[i].pid, {}, {}});
    std::unordered_map<uint32_t, std::vector<size_t>> orphans;  // pid -> its suites {0, pid}
    const auto holders = [&](uint32_t process, uint32_t pid, auto&& f) {
      owners_.for_each(process, pid, f);  // process suites come first, in process order
      if (process != 0) return;
      if (const auto it = orphans.find(pid); it != orphans.end())
        for (size_t suite : it->second) f(suite);
    };
    const auto add_orphan = [&](uint32_t process, uint32_t pid) {
      bool held = false;
      holders(process, pid, [&](size_t) { held = true; });
      if (held) return;
      orphans[pid].push_back(suites_wanted.size());
      suites_wanted.push_back({0, pid, {}, {}});
    };
    for (const CaptureInfo& c : report_.captures) add_orphan(c.process, c.pid);
    for (const Finding& f : report_.findings) add_orphan(f.process, f.pid);
    for (size_t i = 0; i < report_.captures.size(); ++i) {
      const CaptureInfo& c = report_.captures[i];
      holders(c.process, c.pid, [&](size_t suite) { suites_wanted[suite].captures.push_back(i); });
      captures_by_id_[c.id].push_back(i);
    }
    for (size_t i = 0; i < report_.findings.size(); ++i) {
      const Finding& f = report_.findings[i];
      holders(f.process, f.pid, [&](size_t suite) { suites_wanted[suite].findings.push_back(i); });
    }

    size_t tests = 0, failures = 0, errors = 0;
    if (!report_.problems.empty()) {
      tests += report_.problems.size();
      for (const ToolProblem& problem : report_.problems)
        errors += problem.level == Severity::Error;
    }
    for (Suite& suite : suites_wanted) {
      for (const TestCase& c : cases_of(suite)) {
        suite.errors += !c.error.empty();
        suite.failures += !failing(c).empty();
        ++suite.tests;
      }
      tests += suite.tests, failures += suite.failures, errors += suite.errors;
    }
    sink(
        fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<testsuites name=\"capguard\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n",
                    tests, failures, errors));
    if (!report_.problems.empty()) sink(problems_suite());
    std::string text;
    for (const Suite& suite : suites_wanted) {
      const ProcessInfo* process = process_of(suite);
      const std::string command = process ? process->command : "pid " + std::to_string(suite.pid);
      text = fmt::format(
          "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\">\n"
          "    <properties>\n      <property name=\"pid\" value=\"{}\"/>\n{}    </properties>\n",
          xml_escape("capguard: " + command), suite.tests, suite.failures, suite.errors, suite.pid,
          who_properties(process));
      for (const TestCase& c : cases_of(suite)) text += render_case(c, suite);
      text += "  </testsuite>\n";
      sink(text);
    }
    sink("</testsuites>\n");
  }

 private:
  // What kept capguard from checking everything, as error test cases: a test reporter then
  // shows a run that checked nothing as broken, not as passed.
  std::string problems_suite() const {
    std::string body;
    size_t suite_errors = 0;
    for (const ToolProblem& problem : report_.problems) {
      const bool error = problem.level == Severity::Error;
      body += fmt::format("    <testcase classname=\"capguard\" name=\"{}\">\n",
                          xml_escape(problem.message));
      body += error
                  ? fmt::format("      <error message=\"{}\" type=\"capguard\"/>\n",
                                xml_escape(problem.message))
                  : fmt::format("      <system-out>{}</system-out>\n", xml_escape(problem.message));
      body += "    </testcase>\n";
      suite_errors += error;
    }
    return fmt::format(
               "  <testsuite name=\"capguard\" tests=\"{}\" failures=\"0\" errors=\"{}\" "
               "skipped=\"0\">\n",
               report_.problems.size(), suite_errors) +
           body + "  </testsuite>\n";
  }

  struct Suite {
    uint32_t process;  // 1-based index into Report::processes; 0: a pid without a record
    uint32_t pid;
    std::vector<size_t> captures;                // indexes into Report::captures it holds, in order
    std::vector<size_t> findings;                // indexes into Report::findings it holds, in order
    size_t tests = 0, failures = 0, errors = 0;  // of its cases
  };

  const ProcessInfo* process_of(const Suite& suite) const {
    return suite.process != 0 ? &report_.processes[suite.process - 1] : nullptr;
  }

  static std::string capture_name(const CaptureInfo& c) {
    std::string name =
        fmt::format("capture #{} (stream 0x{:x}, {})", c.id, c.stream, mode_name(c.mode));
    if (const Frame* f = anchor_frame(c.begin)) {
      if (!f->file.empty()) {
        name += fmt::format(" at {}:{}", base_name(f->file), f->line);
      } else if (!f->function.empty()) {
        name += " in " + f->function;
      }
    }
    if (c.other_sites)  // clean captures of many sites past the bound (CaptureInfo)
      name += fmt::format(", and {} more clean captures at other sites up to #{}", c.count - 1,
                          c.last_id);
    else if (c.count > 1)  // clean captures of the same site, counted together
      name += fmt::format(", and {} more like it up to #{}", c.count - 1, c.last_id);
    return name;
  }

  // Who ran the suite's process, as properties.
  static std::string who_properties(const ProcessInfo* process) {
    if (process == nullptr || !process->who) return {};
    const WhoRan& who = *process->who;
    std::string out =
        fmt::format("      <property name=\"host\" value=\"{}\"/>\n", xml_escape(who.host));
    if (who.rank) out += fmt::format("      <property name=\"rank\" value=\"{}\"/>\n", *who.rank);
    if (!who.gpu.empty())
      out += fmt::format("      <property name=\"gpu\" value=\"{}\"/>\n", xml_escape(who.gpu));
    return out;
  }

  std::vector<TestCase> cases_of(const Suite& suite) const {
    std::vector<TestCase> cases;
    const ProcessInfo* process = process_of(suite);
    if (process && !process->attached) {
      cases.push_back({"capguard attached to the process", {}, process->attach_message});
      if (cases.back().error.empty()) cases.back().error = "capguard did not attach";
    }
    if (process && !process->tests.empty()) {  // the pytest plugin named the tests
      append_test_cases(*process, suite, cases);
      return cases;
    }
    std::unordered_map<uint32_t, std::vector<size_t>> by_capture;  // capture id -> findings
    for (size_t i : suite.findings)
      if (const Finding& f = report_.findings[i]; f.capture) by_capture[*f.capture].push_back(i);
    std::unordered_set<uint32_t> held;  // ids of the captures the suite holds
    for (size_t index : suite.captures) {
      const CaptureInfo& c = report_.captures[index];
      held.insert(c.id);
      TestCase tc{capture_name(c), {}, {}};
      if (c.root_cause && *c.root_cause < report_.findings.size()) {
        tc.findings.push_back(*c.root_cause);
      }
      if (const auto it = by_capture.find(c.id); it != by_capture.end())
        for (size_t i : it->second)
          if (!c.root_cause || *c.root_cause != i) tc.findings.push_back(i);
      cases.push_back(std::move(tc));
    }
    TestCase outside{"outside any capture", {}, {}};
    for (size_t i : suite.findings) {
      const Finding& f = report_.findings[i];
      if (!f.capture || !held.contains(*f.capture)) outside.findings.push_back(i);
    }
    cases.push_back(std::move(outside));
    return cases;
  }

  // One case per test that ran, carrying the findings made while it ran, then one for the
  // findings outside any test (collection, fixtures of the session, exit).
  void append_test_cases(const ProcessInfo& process, const Suite& suite,
                         std::vector<TestCase>& cases) const {
    const size_t first = cases.size();
    std::unordered_map<std::string_view, size_t> by_name;
    for (const std::string& test : process.tests) {
      by_name.try_emplace(test, cases.size());
      cases.push_back({test, {}, {}});
    }
    TestCase outside{"outside any test", {}, {}};
    for (size_t i : suite.findings) {
      const auto it = by_name.find(report_.findings[i].test);
      (it != by_name.end() ? cases[it->second] : outside).findings.push_back(i);
    }
    for (size_t c = first; c < cases.size(); ++c)  // a capture's root cause first, as elsewhere
      std::stable_partition(cases[c].findings.begin(), cases[c].findings.end(),
                            [&](size_t i) { return is_root_cause(i); });
    cases.push_back(std::move(outside));
  }

  bool is_root_cause(size_t finding) const {
    const CaptureInfo* capture = report_.find_capture(report_.findings[finding].capture);
    return capture != nullptr && capture->root_cause == finding;
  }

  std::vector<size_t> failing(const TestCase& c) const {
    std::vector<size_t> out;
    for (size_t i : c.findings) {
      if (report_.findings[i].severity != Severity::Note) out.push_back(i);
    }
    return out;
  }

  std::string render_case(const TestCase& c, const Suite& suite) const {
    const ProcessInfo* process = process_of(suite);
    const std::string classname = "capguard." + (process ? program_name(process->command)
                                                         : "pid" + std::to_string(suite.pid));
    std::string out = fmt::format("    <testcase classname=\"{}\" name=\"{}\"",
                                  xml_escape(classname), xml_escape(c.name));
    const std::vector<size_t> fails = failing(c);
    std::string notes;
    for (size_t i : c.findings) {
      if (report_.findings[i].severity == Severity::Note) {
        notes += finding_text(report_, report_.findings[i], options_, sources_, owners_,
                              captures_by_id_);
      }
    }
    if (fails.empty() && notes.empty() && c.error.empty()) return out + "/>\n";
    out += ">\n";
    if (!c.error.empty()) {
      out +=
          fmt::format("      <error message=\"{}\" type=\"not-attached\"/>\n", xml_escape(c.error));
    }
    if (!fails.empty()) {
      const Finding& first = report_.findings[fails.front()];
      std::string message = first.rule + ": " + first.message;
      if (const GroupScope& scope = scope_of(groups_.id[fails.front()]);
          scope.processes.size() > 1 || scope.diverged)
        message += " (" + scope.words + ")";  // which ranks of a job
      if (fails.size() > 1) message += fmt::format(" (and {} more)", fails.size() - 1);
      std::string text;
      for (size_t i : fails) text += failure_text(i);
      out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                         xml_escape(message), xml_escape(first.rule), xml_escape(text, false));
    }
    if (!notes.empty()) out += "      <system-out>" + xml_escape(notes, false) + "</system-out>\n";
    return out + "    </testcase>\n";
  }

  // A finding's text; one that repeats another process's finding points to it
  // rather than printing the same stack once per rank.
  std::string failure_text(size_t i) const {
    const Finding& f = report_.findings[i];
    const size_t first = groups_.first[groups_.id[i] - 1];
    if (first != i &&
        process_index(report_, f) != process_index(report_, report_.findings[first])) {
      const std::string who = finding_who(report_, report_.findings[first]);
      return fmt::format("the same {} as {} (finding group {}): {}\n\n", f.rule,
                         who.empty() ? "pid " + std::to_string(report_.findings[first].pid) : who,
                         groups_.id[i], f.message);
    }
    return finding_text(report_, f, options_, sources_, owners_, captures_by_id_);
  }

  // Once per group, not per rank's suite: a group may span every process of the report.
  const GroupScope& scope_of(uint32_t group) const {
    auto [at, fresh] = scopes_.try_emplace(group);
    if (fresh) at->second = group_scope(report_, groups_, groups_.first[group - 1]);
    return at->second;
  }

  const Report& report_;
  const RenderOptions& options_;
  // One reader for every finding's text: a file's lines are found once, not once a finding
  // (a 15.9 MB first line was read again for each of 400 findings: 9.5 s).
  mutable SourceReader sources_;  // a cache of line offsets: reading fills it
  const ProcessOwners owners_{report_};
  const FindingGroups groups_ = group_findings(report_);
  mutable std::unordered_map<uint32_t, GroupScope> scopes_;
  std::unordered_map<uint32_t, std::vector<size_t>> captures_by_id_;  // into Report::captures
};

}  // namespace

std::string render_junit(const Report& report) { return render_junit(report, RenderOptions{}); }
std::string render_junit(const Report& report, const RenderOptions& options) {
  std::string out;
  render_junit(report, options, [&](std::string_view piece) { out += piece; });
  return out;
}
void render_junit(const Report& report, const RenderOptions& options, const JsonSink& sink) {
  JunitRenderer(report, options).render(sink);
}

}  // namespace capguard
