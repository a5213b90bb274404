// JUnit XML for CI test reporters (Jenkins, GitLab, GitHub test-report actions): one testsuite
// per process, one testcase per capture plus one for the findings outside any capture. A
// testcase fails when an error or warning is attached to it; notes go to <system-out>.
// Each testcase carries at most one <failure> (the strictest readers accept no more): its
// message names the root cause, its body is the text report of every finding of that case.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/base_name.h"
#include "analyzer/fingerprint.h"
#include "analyzer/render.h"
#include "analyzer/xml_escape.h"

namespace capguard {
namespace {

std::string program_name(const std::string& command) {
  return std::string(base_name(command.substr(0, command.find(' '))));
}

// A finding's text as the terminal shows it: a one-finding report through render_text.
std::string finding_text(const Report& report, const Finding& finding) {
  Report one;
  for (const ProcessInfo& p : report.processes) {
    if (p.pid == finding.pid) one.processes.push_back(p);
  }
  for (const CaptureInfo& c : report.captures) {
    if (finding.capture && c.id == *finding.capture) {
      one.captures.push_back(c);
      one.captures.back().root_cause.reset();
    }
  }
  one.findings.push_back(finding);
  std::string text = render_text(one, RenderOptions{});
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
  explicit JunitRenderer(const Report& report) : report_(report) {}

  std::string render() {
    std::vector<uint32_t> pids;
    const auto add_pid = [&](uint32_t pid) {
      if (std::find(pids.begin(), pids.end(), pid) == pids.end()) pids.push_back(pid);
    };
    for (const ProcessInfo& p : report_.processes) add_pid(p.pid);
    for (const CaptureInfo& c : report_.captures) add_pid(c.pid);
    for (const Finding& f : report_.findings) add_pid(f.pid);

    std::string suites;
    size_t tests = 0, failures = 0, errors = 0;
    for (uint32_t pid : pids) {
      const std::vector<TestCase> cases = cases_of(pid);
      size_t suite_failures = 0, suite_errors = 0;
      std::string body;
      for (const TestCase& c : cases) {
        if (!c.error.empty()) ++suite_errors;
        if (!failing(c).empty()) ++suite_failures;
        body += render_case(c, pid);
      }
      const ProcessInfo* process = process_of(pid);
      const std::string command = process ? process->command : "pid " + std::to_string(pid);
      suites += fmt::format(
          "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\">\n"
          "    <properties>\n      <property name=\"pid\" value=\"{}\"/>\n    </properties>\n",
          xml_escape("capguard: " + command), cases.size(), suite_failures, suite_errors, pid);
      suites += body + "  </testsuite>\n";
      tests += cases.size(), failures += suite_failures, errors += suite_errors;
    }
    return fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<testsuites name=\"capguard\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n{}"
        "</testsuites>\n",
        tests, failures, errors, suites);
  }

 private:
  const ProcessInfo* process_of(uint32_t pid) const {
    for (const ProcessInfo& p : report_.processes) {
      if (p.pid == pid) return &p;
    }
    return nullptr;
  }

  bool has_capture(uint32_t pid, std::optional<uint32_t> id) const {
    return id && std::any_of(report_.captures.begin(), report_.captures.end(),
                             [&](const CaptureInfo& c) { return c.pid == pid && c.id == *id; });
  }

  static std::string capture_name(const CaptureInfo& c) {
    std::string name = fmt::format("capture #{} (stream 0x{:x}, {})", c.id, c.stream, c.mode);
    if (const Frame* f = anchor_frame(c.begin)) {
      if (!f->file.empty()) {
        name += fmt::format(" at {}:{}", base_name(f->file), f->line);
      } else if (!f->function.empty()) {
        name += " in " + f->function;
      }
    }
    return name;
  }

  std::vector<TestCase> cases_of(uint32_t pid) const {
    std::vector<TestCase> cases;
    const ProcessInfo* process = process_of(pid);
    if (process && !process->attached) {
      cases.push_back({"capguard attached to the process", {}, process->attach_message});
      if (cases.back().error.empty()) cases.back().error = "capguard did not attach";
    }
    for (const CaptureInfo& c : report_.captures) {
      if (c.pid != pid) continue;
      TestCase tc{capture_name(c), {}, {}};
      if (c.root_cause && *c.root_cause < report_.findings.size()) {
        tc.findings.push_back(*c.root_cause);
      }
      for (size_t i = 0; i < report_.findings.size(); ++i) {
        const Finding& f = report_.findings[i];
        if (f.pid == pid && f.capture == c.id && (!c.root_cause || *c.root_cause != i)) {
          tc.findings.push_back(i);
        }
      }
      cases.push_back(std::move(tc));
    }
    TestCase outside{"outside any capture", {}, {}};
    for (size_t i = 0; i < report_.findings.size(); ++i) {
      const Finding& f = report_.findings[i];
      if (f.pid == pid && !has_capture(pid, f.capture)) outside.findings.push_back(i);
    }
    cases.push_back(std::move(outside));
    return cases;
  }

  std::vector<size_t> failing(const TestCase& c) const {
    std::vector<size_t> out;
    for (size_t i : c.findings) {
      if (report_.findings[i].severity != Severity::Note) out.push_back(i);
    }
    return out;
  }

  std::string render_case(const TestCase& c, uint32_t pid) const {
    const ProcessInfo* process = process_of(pid);
    const std::string classname =
        "capguard." + (process ? program_name(process->command) : "pid" + std::to_string(pid));
    std::string out = fmt::format("    <testcase classname=\"{}\" name=\"{}\"",
                                  xml_escape(classname), xml_escape(c.name));
    const std::vector<size_t> fails = failing(c);
    std::string notes;
    for (size_t i : c.findings) {
      if (report_.findings[i].severity == Severity::Note) {
        notes += finding_text(report_, report_.findings[i]);
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
      if (fails.size() > 1) message += fmt::format(" (and {} more)", fails.size() - 1);
      std::string text;
      for (size_t i : fails) text += finding_text(report_, report_.findings[i]);
      out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                         xml_escape(message), xml_escape(first.rule), xml_escape(text, false));
    }
    if (!notes.empty()) out += "      <system-out>" + xml_escape(notes, false) + "</system-out>\n";
    return out + "    </testcase>\n";
  }

  const Report& report_;
};

}  // namespace

std::string render_junit(const Report& report) { return JunitRenderer(report).render(); }

}  // namespace capguard
