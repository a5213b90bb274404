#include <doctest/doctest.h>

#include <string>

#include "render_test_report.h"
#include "report/render.h"
#include "rules/rule_table.h"

namespace capguard {
namespace {

std::string fix_line(const char* rule) {
  const RuleInfo* info = find_rule(rule);
  REQUIRE(info != nullptr);
  return "  fix: " + std::string(info->fix) + "\n";
}

}  // namespace

TEST_CASE("a finding reads like a sanitizer report: the message, then the culprit frame") {
  const std::string text = render_text(testing::sample_report(), testing::with_rules());
  const std::string expected_first_finding =
      "==4242==ERROR: capguard: sync-during-capture\n"
      "  synchronizing stream 0x5555deadbeef waits for work that only runs at replay\n"
      "  cudaStreamSynchronize returned cudaErrorStreamCaptureUnsupported (900)\n"
      "  called here on thread 4243 (the capturing thread):\n"
      "    #3 0x555500002345 in train_step(float*, CUstream_st*) /src/app.cu:42 (app)\n"
      "    #4 0x555500003456 in main /src/app.cu:60 (app)\n"
      "    (3 frames inside CUDA/capguard and 2 outer frames not shown)\n"
      "  capture #1 (stream 0x5555deadbeef, global mode, thread 4243, invalidated) began here:\n"
      "    #0 0x555500004567 in main /src/app.cu:55 (app)\n"
      "  stream forked into the capture here (stream 0x77):\n"
      "    #0 0x555500005678 in main /src/app.cu:57 (app)\n"
      "  3 later calls failed only because of this one (folded into this finding)\n" +
      fix_line("sync-during-capture") +
      "  [sync-during-capture] see `capguard explain sync-during-capture`\n"
      "\n";
  CHECK(text.starts_with(expected_first_finding));
}

TEST_CASE("each fact once: a message that names the result and the thread is not repeated") {
  Report report = testing::sample_report();
  Finding& finding = report.findings[0];
  finding.message =  // within the 120 columns
      "cudaStreamSynchronize on thread 4243 while capturing; CUDA returned "
      "cudaErrorStreamCaptureUnsupported (900)";
  const std::string text = render_text(report, testing::with_rules());
  CHECK(text.starts_with("==4242==ERROR: capguard: sync-during-capture\n  " + finding.message +
                         "\n  called here:\n    #3 "));
  finding.thread = 42;  // "thread 4243" does not mention thread 42
  CHECK(render_text(report, testing::with_rules())
            .find("  called here on thread 42 (the capturing thread):\n") != std::string::npos);
}

TEST_CASE("library frames between CUDA and the user frame are shown, a long run elided") {
  Report report = testing::sample_report();
  Location& location = report.findings[0].location;
  const char* thrust = "/usr/local/cuda/include/cccl/thrust/system/cuda/malloc.h";  // 120 columns
  location.frames.insert(
      location.frames.begin() + 3,
      testing::frame(0x555500002000, "thrust::cuda_cub::malloc", thrust, 82, "/src/app"));
  location.user_frame = 4;
  std::string text = render_text(report, testing::with_rules());
  CHECK(text.find("    #3 0x555500002000 in thrust::cuda_cub::malloc " + std::string(thrust) +
                  ":82 (app)\n    #4 0x555500002345 in train_step") != std::string::npos);
  CHECK(text.find("(3 frames inside CUDA/capguard and 2 outer frames not shown)") !=
        std::string::npos);

  for (int i = 0; i < 14; ++i)
    location.frames.insert(
        location.frames.begin() + 3,
        testing::frame(0x7f0000009000 + i, "", "", 0, "/usr/lib/libtorch_cuda.so"));
  location.user_frame = 18;
  text = render_text(report, testing::with_rules());
  CHECK(text.find("    #7 0x7f0000009") != std::string::npos);
  CHECK(text.find("    (5 library frames not shown)\n    #13 0x7f0000009") != std::string::npos);
  CHECK(text.find("    #18 0x555500002345 in train_step") != std::string::npos);

  location.frames.erase(location.frames.begin() + 3, location.frames.begin() + 7);  // 11 left
  location.user_frame = 14;
  text = render_text(report, testing::with_rules());
  CHECK(text.find("not shown)\n    #") == std::string::npos);  // eliding one saves no line
  CHECK(text.find("    #8 0x7f0000009") != std::string::npos);
}

TEST_CASE("the summary line counts findings by severity and captures by outcome") {
  const std::string text = render_text(testing::sample_report(), testing::with_rules());
  CHECK(
      text.ends_with("SUMMARY: capguard: 1 error, 1 warning, 0 notes in 1 process "
                     "(2 captures: 1 ok, 1 invalidated)\n"));
}

TEST_CASE("an empty report is just the summary") {
  CHECK(render_text(Report{}, testing::with_rules()) ==
        "SUMMARY: capguard: 0 errors, 0 warnings, 0 notes in 0 processes (0 captures)\n");
}

TEST_CASE("a frame without source or module still says where it was") {
  Report report = testing::sample_report();
  Location& location = report.findings[1].location;
  location.frames = {testing::frame(0x7f00000010f0, "", "", 0, "/usr/lib/libfoo.so")};
  location.frames[0].offset = 0x10f0;
  location.frames.push_back(testing::frame(0x99, "", "", 0, ""));
  location.user_frame = -1;
  const std::string text = render_text(report, testing::with_rules());
  CHECK(text.find("    #0 0x7f00000010f0 (/usr/lib/libfoo.so+0x10f0)\n") != std::string::npos);
  CHECK(text.find("(no module maps this address)") == std::string::npos);  // outer, elided
  CHECK(text.find("(1 outer frame not shown)\n") != std::string::npos);
}

TEST_CASE("a finding without any stack says so instead of printing nothing") {
  const std::string text = render_text(testing::sample_report(), testing::with_rules());
  CHECK(text.find("==4242==WARNING: capguard: escaped-sync-copy\n"
                  "  cudaMemcpy ran once at capture time; the graph has no copy \"x\"\\\n"
                  "  called here on thread 4243 (the capturing thread):\n") != std::string::npos);
  CHECK(text.find("    (no stack recorded)\n  capture #2") != std::string::npos);
}

TEST_CASE("several processes get a header each; a process capguard could not attach says why") {
  Report report = testing::sample_report();
  ProcessInfo child;
  child.pid = 5000;
  child.command = "./worker";
  child.attach_message = "CUPTI already in use by another subscriber";
  report.processes.push_back(child);
  const std::string text = render_text(report, testing::with_rules());
  CHECK(text.starts_with("== process 4242: ./app --steps 3\n==4242==ERROR"));
  CHECK(text.find("== process 5000: ./worker\n"
                  "==5000==capguard: not attached: CUPTI already in use by another subscriber\n") !=
        std::string::npos);
  CHECK(text.find("in 2 processes") != std::string::npos);
}

TEST_CASE("colors only when asked, and the heading stays greppable without them") {
  const Report report = testing::sample_report();
  CHECK(render_text(report, testing::with_rules()).find('\033') == std::string::npos);
  RenderOptions color;
  color.rules = all_rules();
  color.color = true;
  CHECK(render_text(report, color).find("\033[1;31mERROR: capguard: sync-during-capture") !=
        std::string::npos);
}

TEST_CASE("identical findings print once, then how many more times and in which captures") {
  Report report = testing::sample_report();
  const Finding first = report.findings[0];
  report.captures.push_back(report.captures[1]);  // a third capture of the same site
  report.captures.back().id = 3;
  for (uint32_t capture : {2u, 3u}) {  // the same sync at the same line, in later captures
    report.findings.push_back(first);
    report.findings.back().capture = capture;
  }
  const std::string text = render_text(report, testing::with_rules());
  size_t blocks = 0;
  for (size_t at = text.find("ERROR: capguard: sync-during-capture"); at != std::string::npos;
       at = text.find("ERROR: capguard: sync-during-capture", at + 1))
    ++blocks;
  CHECK(blocks == 1);
  CHECK(text.find("  and 2 more times (captures #2, #3)\n\n") != std::string::npos);
  // Another line is another finding.
  report.findings.back().location.frames[3].line = 43;
  const std::string apart = render_text(report, testing::with_rules());
  CHECK(apart.find("  and 1 more time (captures #2)\n") != std::string::npos);
  // JSON keeps each one.
  const std::string json = render_json(report);
  size_t rules = 0;
  for (size_t at = json.find("\"sync-during-capture\""); at != std::string::npos;
       at = json.find("\"sync-during-capture\"", at + 1))
    ++rules;
  CHECK(rules >= 3);
}

TEST_CASE("long C++ names are shortened in text; JSON keeps them whole") {
  Report report = testing::sample_report();
  const std::string name =
      "void thrust::cuda_cub::malloc<thrust::cuda_cub::execute_on_stream, "
      "thrust::detail::very_long_policy_name<int, float, double>>(thrust::cuda_cub::policy&)";
  report.findings[0].location.frames[3].function = name;
  const std::string text = render_text(report, testing::with_rules());
  CHECK(text.find("in void thrust::cuda_cub::malloc<…>(thrust::cuda_cub::policy&)") !=
        std::string::npos);
  CHECK(text.find("very_long_policy_name") == std::string::npos);
  CHECK(render_json(report).find("very_long_policy_name<int, float, double>") != std::string::npos);
}

}  // namespace capguard

namespace capguard {
TEST_CASE("render_text: the CUDA the processes ran heads the report, once per distinct set") {
  Report report = testing::sample_report();
  CHECK(render_text(report, testing::with_rules()).find("capguard: CUDA") == std::string::npos);
  report.processes.at(0).cuda.recorded = true;
  report.processes.at(0).cuda.runtime = 12090;
  report.processes.at(0).cuda.linkage = "shared";
  report.processes.at(0).cuda.driver = 13000;
  report.processes.at(0).cuda.cupti_major = 12;
  report.processes.at(0).cuda.cupti_api = 28;
  const std::string text = render_text(report, testing::with_rules());
  const size_t header =
      text.find("capguard: CUDA 12.9 runtime (shared cudart), driver 13.0, CUPTI 12 (API 28)\n");
  REQUIRE(header != std::string::npos);
  CHECK(header < text.find("SUMMARY:"));
}
}  // namespace capguard
