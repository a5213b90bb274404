#include "report/fingerprint.h"

#include <doctest/doctest.h>

#include "ci_gate_report.h"

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

}  // namespace capguard
