#include "report/fingerprint.h"

#include <doctest/doctest.h>

#include "ci_gate_report.h"
#include "report/baseline.h"

namespace capguard {

TEST_CASE("a finding's fingerprint ignores pid, thread, addresses, sequence and message") {
  const Finding original = testing::ci_gate_report().findings[0];
  Finding rerun = original;
  rerun.pid = 31337;
  rerun.thread = 99;
  rerun.capture = 12;
  rerun.consequences = 0;
  rerun.message = "synchronizing stream 0x7fff0000 waits ...";
  rerun.location.seq = 123456;
  for (Frame& f : rerun.location.frames) f.address ^= 0xfff000;
  rerun.location.frames[1].module = "/other/checkout/build/train";
  rerun.location.frames[1].file = "/other/checkout/src/train.cu";  // same base name
  CHECK(fingerprint(rerun) == fingerprint(original));
  CHECK(fingerprint(original).size() == 16);
}

TEST_CASE("a finding's fingerprint changes with its rule, API, line, function or file") {
  const Finding original = testing::ci_gate_report().findings[0];
  const std::string print = fingerprint(original);
  Finding moved = original;
  moved.location.frames[1].line = 53;
  CHECK(fingerprint(moved) != print);
  Finding renamed = original;
  renamed.location.frames[1].function = "train_step2(float*, CUstream_st*)";
  CHECK(fingerprint(renamed) != print);
  Finding other_file = original;
  other_file.location.frames[1].file = "/repo/src/eval.cu";
  CHECK(fingerprint(other_file) != print);
  Finding other_rule = original;
  other_rule.rule = "unjoined-fork";
  CHECK(fingerprint(other_rule) != print);
  Finding other_api = original;
  other_api.api = "cudaDeviceSynchronize";
  CHECK(fingerprint(other_api) != print);
}

TEST_CASE("the anchor frame is the user frame, else the innermost frame with a file or name") {
  Location l = testing::user_stack("f()", "/repo/a.cu", 3);
  CHECK(anchor_frame(l) == &l.frames[1]);
  l.user_frame = -1;
  CHECK(anchor_frame(l) == &l.frames[1]);  // frame 0 (libcuda) has no file
  l.frames[1].file.clear();
  CHECK(anchor_frame(l) == &l.frames[2]);
  l.frames[2].file.clear();
  CHECK(anchor_frame(l) == &l.frames[1]);  // no file anywhere: the innermost named frame
  CHECK(anchor_frame(Location{}) == nullptr);
}

namespace {
Finding unsymbolized(const char* module, uint64_t offset) {
  Finding f;
  f.rule = "sync-during-capture";
  f.api = "cudaStreamSynchronize";
  Frame frame;
  frame.module = module;
  frame.address = 0x400000 + offset;
  frame.offset = offset;
  f.location.frames.push_back(frame);
  f.location.user_frame = 0;
  return f;
}
}  // namespace

TEST_CASE("fingerprints of unsymbolized findings hold module and offset; symbolized ones are as before") {
  // Baselines written before keep matching symbolized findings: the v1 value of a known one.
  CHECK(fingerprint(testing::ci_gate_report().findings[0]) == "9b98aacb28aa24ff");
  const std::string print = fingerprint(unsymbolized("/ci/build/stripped_app", 0x1234));
  CHECK(fingerprint(unsymbolized("/elsewhere/stripped_app", 0x1234)) == print);  // base name
  CHECK(fingerprint(unsymbolized("/ci/build/stripped_app", 0x1240)) != print);   // another call
  CHECK(fingerprint(unsymbolized("/ci/build/libother.so", 0x1234)) != print);
  // A baseline from capguard's SARIF (fingerprints with offsets) hides only the same call.
  Report report;
  report.findings = {unsymbolized("/ci/build/stripped_app", 0x1234),
                     unsymbolized("/ci/build/stripped_app", 0x1240)};
  Baseline sarif;
  sarif.fingerprints.insert(print);
  const BaselineStats stats = apply_baseline(report, sarif);
  CHECK(stats.known == 1);
  CHECK(stats.fresh == 1);
  REQUIRE(report.findings.size() == 1);
  CHECK(report.findings[0].location.frames[0].offset == 0x1240);
  // A JSON baseline has no offsets: it cannot tell one call of the module from another, so it
  // hides none of them (fails closed), and says which it could not vouch for.
  Report two;
  two.findings = {unsymbolized("/ci/build/stripped_app", 0x1240),
                  unsymbolized("/ci/build/libother.so", 0x1234)};
  Baseline json;
  json.without_offsets = true;
  json.fingerprints.insert(fingerprint(unsymbolized("/x/stripped_app", 0)));
  const BaselineStats by_module = apply_baseline(two, json);
  CHECK(by_module.known == 0);
  CHECK(by_module.fresh == 2);
  CHECK(by_module.unvouched == 1);
  CHECK(by_module.gone == 0);
  REQUIRE(by_module.unvouched_where.size() == 1);
  CHECK(by_module.unvouched_where[0] == "sync-during-capture in stripped_app+0x1240");
  CHECK(two.findings.size() == 2);
  // Symbolized findings (file and line) are matched by a JSON baseline as before.
  Finding symbolized = unsymbolized("/ci/build/app", 0x1234);
  symbolized.location.frames[0].file = "/src/app.cu";
  symbolized.location.frames[0].line = 12;
  Report three;
  three.findings = {symbolized};
  Baseline json_symbolized;
  json_symbolized.without_offsets = true;
  Finding as_read_back = symbolized;
  as_read_back.location.frames[0].offset = 0;
  json_symbolized.fingerprints.insert(fingerprint(as_read_back));
  const BaselineStats known = apply_baseline(three, json_symbolized);
  CHECK(known.known == 1);
  CHECK(known.unvouched == 0);
  CHECK(three.findings.empty());
  // An exported function of a stripped library (a name, no file or line): two calls in it
  // differ by their offsets, so a baselined one hides only itself.
  Finding exported = unsymbolized("/usr/lib/libpython3.11.so", 0x1234);
  exported.location.frames[0].function = "PyObject_Call";
  Finding other_call = exported;
  other_call.location.frames[0].offset = 0x1288;
  CHECK(fingerprint(exported) != fingerprint(other_call));
  // No frame at all: rule and API alone, as before.
  Finding bare = unsymbolized("", 0);
  bare.location.frames.clear();
  bare.location.user_frame = -1;
  CHECK(fingerprint(bare).size() == 16);
}

}  // namespace capguard
