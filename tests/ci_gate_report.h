// A hand-built report exercising what the CI-gate outputs (SARIF, JUnit, suppressions,
// baselines) must cope with: two processes (one capguard could not attach to), a capture broken
// by two errors, a warning in a file outside the source tree, a note outside any capture, a
// finding whose stack was never symbolized, one with no stack at all, and text full of
// characters that need escaping.
#pragma once

#include "model/report.h"
#include "tests/render_test_report.h"  // frame()

namespace capguard::testing {

inline constexpr char kSourceRoot[] = "/repo";

// A stack whose user frame is the one at `file:line` in `function`, under CUDA's frames.
inline Location user_stack(const char* function, const char* file, int line, uint64_t seq = 1) {
  Location l;
  l.pid = 1000;
  l.seq = seq;
  l.frames = {
      frame(0x7f0000001000, "", "", 0, "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
      frame(0x555500001000 + seq, function, file, line, "/repo/build/train"),
      frame(0x555500002000, "main", "/repo/src/main.cpp", 12, "/repo/build/train"),
  };
  l.addresses = {l.frames[0].address, l.frames[1].address, l.frames[2].address};
  l.user_frame = 1;
  return l;
}

inline Report ci_gate_report() {
  Report report;
  ProcessInfo train;
  train.pid = 1000;
  train.command = "/repo/build/train --steps 3";
  train.attached = true;
  train.attach_message = "attached";
  report.processes.push_back(train);
  ProcessInfo child;
  child.pid = 2000;
  child.command = "python3 child.py";
  child.attach_message = "CUPTI is already in use by another profiler";
  report.processes.push_back(child);

  CaptureInfo broken;
  broken.id = 1;
  broken.pid = 1000;
  broken.thread = 7;
  broken.stream = 0xabc0;
  broken.mode = trace::CaptureMode::Global;
  broken.status = CaptureState::Invalidated;
  broken.begin = user_stack("train_step(float*, CUstream_st*)", "/repo/src/train.cu", 40);
  broken.root_cause = 0;
  report.captures.push_back(broken);

  CaptureInfo fine;
  fine.id = 2;
  fine.pid = 1000;
  fine.thread = 7;
  fine.stream = 0xdef0;
  fine.mode = trace::CaptureMode::ThreadLocal;
  fine.status = CaptureState::Ok;
  fine.nodes = 4;
  fine.begin = user_stack("eval_step()", "/repo/src/eval.cu", 20);
  report.captures.push_back(fine);

  Finding sync;
  sync.rule = "sync-during-capture";
  sync.severity = Severity::Error;
  sync.message = "cudaStreamSynchronize waits for work that only runs when the graph is launched";
  sync.api = "cudaStreamSynchronize";
  sync.result = 900;
  sync.result_name = "cudaErrorStreamCaptureUnsupported";
  sync.pid = 1000;
  sync.thread = 7;
  sync.capturing_thread = true;
  sync.capture = 1;
  sync.location = user_stack("train_step(float*, CUstream_st*)", "/repo/src/train.cu", 52, 2);
  sync.related.push_back(
      {"capture-begin", "",
       user_stack("train_step(float*, CUstream_st*)", "/repo/src/train.cu", 40)});
  sync.related.push_back(
      {"fork", "stream 0x77", user_stack("fork_side()", "/repo/src/train.cu", 44)});
  sync.related.push_back({"event-record", "not symbolized", Location{}});
  sync.consequences = 2;
  report.findings.push_back(sync);

  Finding unjoined;
  unjoined.rule = "unjoined-fork";
  unjoined.severity = Severity::Error;
  unjoined.message = "stream 0x77 was forked into the capture and never joined <back> & \"lost\"";
  unjoined.api = "cudaStreamEndCapture";
  unjoined.result = 904;
  unjoined.result_name = "cudaErrorStreamCaptureUnjoined";
  unjoined.pid = 1000;
  unjoined.thread = 7;
  unjoined.capture = 1;
  unjoined.location = user_stack("train_step(float*, CUstream_st*)", "/repo/src/train.cu", 60, 3);
  report.findings.push_back(unjoined);

  Finding escape;
  escape.rule = "escaped-sync-copy";
  escape.severity = Severity::Warning;
  escape.message = "cudaMemcpy ran once, now; the graph has no copy";
  escape.api = "cudaMemcpy";
  escape.pid = 1000;
  escape.thread = 7;
  escape.capturing_thread = true;
  escape.capture = 2;
  escape.location =
      user_stack("thrust::copy<int*>(int*, int*)", "/usr/include/thrust/copy.h", 99, 4);
  report.findings.push_back(escape);

  Finding relaxed;
  relaxed.rule = "relaxed-mode-unsafe-call";
  relaxed.severity = Severity::Note;
  relaxed.message = "cudaMalloc passed only because the capture is relaxed";
  relaxed.api = "cudaMalloc";
  relaxed.pid = 1000;
  relaxed.thread = 8;
  relaxed.location =
      user_stack("(anonymous namespace)::grow(unsigned long)", "/repo/src/pool.cpp", 17, 5);
  report.findings.push_back(relaxed);

  Finding unsymbolized;
  unsymbolized.rule = "capture-never-ended";
  unsymbolized.severity = Severity::Warning;
  unsymbolized.message = "the thread ended with a capture still open\x01 \xff";
  unsymbolized.api = "cudaStreamBeginCapture";
  unsymbolized.pid = 1000;
  unsymbolized.thread = 9;
  unsymbolized.location.frames = {frame(0x7f00000a0000, "", "", 0, "/opt/vendor/libkernels.so")};
  unsymbolized.location.frames[0].offset = 0xa0000;
  report.findings.push_back(unsymbolized);

  Finding stackless;
  stackless.rule = "capture-invalidated";
  stackless.severity = Severity::Error;
  stackless.message = "a capture was invalidated and no rule explains why";
  stackless.api = "cudaStreamEndCapture";
  stackless.pid = 2000;
  stackless.thread = 1;
  report.findings.push_back(stackless);
  return report;
}

}  // namespace capguard::testing
