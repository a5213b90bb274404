#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "report/render.h"
#include "ci_gate_report.h"

namespace capguard {
namespace {

size_t count(std::string_view text, std::string_view needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The <testcase> element whose name attribute starts with `name`, from its first occurrence.
std::string_view testcase(std::string_view xml, std::string_view name) {
  const size_t at = xml.find("name=\"" + std::string(name));
  REQUIRE(at != std::string_view::npos);
  const size_t open = xml.rfind("<testcase", at);
  const size_t tag_end = xml.find('>', at);
  const size_t end = xml[tag_end - 1] == '/' ? tag_end + 1 : xml.find("</testcase>", at) + 11;
  return xml.substr(open, end - open);
}

}  // namespace

TEST_CASE("junit and text: findings and captures go to every process they belong to, grouped once") {
  Report r;
  for (uint32_t pid : {10u, 10u, 20u}) {
    ProcessInfo p;
    p.pid = pid;
    p.attached = true;
    p.command = "./prog" + std::to_string(pid);
    r.processes.push_back(p);
  }
  r.processes[1].command = "./other10";
  auto finding = [&](uint32_t process, uint32_t pid, std::optional<uint32_t> capture, const char* msg) {
    Finding f;
    f.rule = "sync-during-capture";
    f.severity = Severity::Error;
    f.process = process;
    f.pid = pid;
    f.capture = capture;
    f.message = msg;
    r.findings.push_back(f);
  };
  CaptureInfo c;
  c.id = 7;
  c.process = 2;
  c.pid = 10;
  r.captures.push_back(c);
  finding(2, 10, 7, "M-in-capture-of-second");
  finding(0, 10, std::nullopt, "M-pid10-both");  // by pid alone: both processes of pid 10
  finding(0, 30, std::nullopt, "M-orphan-a");    // no process record: a suite of its own
  finding(0, 30, 7, "M-orphan-b");               // capture 7 is not held by that suite
  finding(9, 40, std::nullopt, "M-unknown-index");
  const std::string xml = render_junit(r);
  CHECK(count(xml, "<testsuite ") == 5);  // three processes, pid 30, pid 40 (index 9)
  CHECK(count(xml, "M-pid10-both") >= 2);
  CHECK(count(xml, "M-in-capture-of-second") >= 1);
  CHECK(testcase(xml, "capture #7").find("M-in-capture-of-second") != std::string_view::npos);
  const size_t orphan_suite = xml.find("capguard: pid 30");
  REQUIRE(orphan_suite != std::string::npos);
  CHECK(xml.find("M-orphan-a", orphan_suite) != std::string::npos);
  CHECK(xml.find("M-orphan-b", orphan_suite) != std::string::npos);
  RenderOptions plain;
  plain.source = false;
  const std::string text = render_text(r, plain);
  CHECK(count(text, "M-pid10-both") == 2);
  CHECK(count(text, "M-in-capture-of-second") == 1);
  CHECK(count(text, "M-unknown-index") == 1);
  CHECK(count(text, "(./") == 0);
  CHECK(text.find("== process 10") < text.find("M-in-capture-of-second"));
}

TEST_CASE("JUnit has one suite per process and one case per capture plus one outside") {
  const std::string xml = render_junit(testing::ci_gate_report());
  CHECK(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
  CHECK(count(xml, "<testsuite ") == 2);
  CHECK(xml.find("<testsuite name=\"capguard: /repo/build/train --steps 3\" tests=\"3\" "
                 "failures=\"3\" errors=\"0\"") != std::string::npos);
  // The process capguard could not attach to was not checked: an error, not a pass.
  CHECK(xml.find("<testsuite name=\"capguard: python3 child.py\" tests=\"2\" failures=\"1\" "
                 "errors=\"1\"") != std::string::npos);
  CHECK(xml.find("<testsuites name=\"capguard\" tests=\"5\" failures=\"4\" errors=\"1\">") !=
        std::string::npos);
  CHECK(xml.find("name=\"capture #1 (stream 0xabc0, global) at train.cu:40\"") !=
        std::string::npos);
  CHECK(xml.find("name=\"capture #2 (stream 0xdef0, thread_local) at eval.cu:20\"") !=
        std::string::npos);
  CHECK(count(xml, "name=\"outside any capture\"") == 2);
}

TEST_CASE("a JUnit case fails once, led by the capture's root cause, listing every finding") {
  const std::string xml = render_junit(testing::ci_gate_report());
  const std::string_view broken = testcase(xml, "capture #1");
  CHECK(count(broken, "<failure ") == 1);
  CHECK(broken.find("type=\"sync-during-capture\"") != std::string_view::npos);
  CHECK(broken.find("message=\"sync-during-capture: cudaStreamSynchronize waits for work that "
                    "only runs when the graph is launched (and 1 more)\"") !=
        std::string_view::npos);
  CHECK(broken.find("unjoined-fork") != std::string_view::npos);
  CHECK(broken.find("train.cu:52") != std::string_view::npos);
  CHECK(broken.find("SUMMARY:") == std::string_view::npos);
}

TEST_CASE("a JUnit case with only notes passes and shows them as output") {
  const std::string xml = render_junit(testing::ci_gate_report());
  const std::string_view outside = testcase(xml, "outside any capture");  // the first process
  CHECK(outside.find("<failure") != std::string_view::npos);  // the never-ended capture warning
  CHECK(outside.find("<system-out>") != std::string_view::npos);
  CHECK(outside.find("relaxed-mode-unsafe-call") != std::string_view::npos);

  Report only_note = testing::ci_gate_report();
  only_note.findings = {only_note.findings[3]};
  only_note.captures.clear();
  only_note.processes.resize(1);
  const std::string passing = render_junit(only_note);
  CHECK(passing.find("failures=\"0\"") != std::string::npos);
  CHECK(passing.find("<failure") == std::string::npos);
  CHECK(passing.find("<system-out>") != std::string::npos);
}

TEST_CASE("a clean report gives passing cases, self-closed") {
  Report clean = testing::ci_gate_report();
  clean.findings.clear();
  clean.captures.resize(1);
  clean.captures[0].root_cause.reset();
  clean.processes.resize(1);
  const std::string xml = render_junit(clean);
  CHECK(xml.find("tests=\"2\" failures=\"0\" errors=\"0\">") != std::string::npos);
  CHECK(count(xml, "\"/>\n") == 3);  // the pid property and the two cases
}

TEST_CASE("JUnit escapes markup and drops characters XML cannot carry") {
  const std::string xml = render_junit(testing::ci_gate_report());
  CHECK(xml.find("never joined &lt;back&gt; &amp; &quot;lost&quot;") != std::string::npos);
  CHECK(xml.find('\x01') == std::string::npos);
  CHECK(xml.find('\xff') == std::string::npos);
  CHECK(xml.find("still open\xEF\xBF\xBD \xEF\xBF\xBD") != std::string::npos);
}

}  // namespace capguard
