// A hand-built report shared by the renderer tests: one process, a synchronize that broke a
// capture (with a forked stream and three folded consequences), and a silent escape.
#pragma once

#include "model/report.h"
#include "report/render.h"
#include "rules/rule_table.h"

namespace capguard::testing {

// Render options that know the rule table, as capguard's own pipeline passes it.
inline RenderOptions with_rules(RenderOptions options = {}) {
  options.rules = all_rules();
  return options;
}


inline Frame frame(uint64_t address, const char* function, const char* file, int line,
                   const char* module) {
  Frame f;
  f.address = address;
  f.function = function;
  f.file = file;
  f.line = line;
  f.module = module;
  return f;
}

inline Location culprit_stack() {
  Location location;
  location.pid = 4242;
  location.seq = 17;
  location.frames = {
      frame(0x7f0000001000, "capguard::on_api_exit", "", 0, "/opt/capguard/lib/libcapguard.so"),
      frame(0x7f0000002000, "", "", 0, "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
      frame(0x555500001234, "cudaStreamSynchronize", "", 0, "/src/app"),
      frame(0x555500002345, "train_step(float*, CUstream_st*)", "/src/app.cu", 42, "/src/app"),
      frame(0x555500003456, "main", "/src/app.cu", 60, "/src/app"),
      frame(0x7f0000003000, "__libc_start_main", "", 0, "/lib/x86_64-linux-gnu/libc.so.6"),
      frame(0x555500000100, "_start", "", 0, "/src/app"),
  };
  location.frames[1].offset = 0x2000;
  location.frames[5].offset = 0x3000;
  location.user_frame = 3;
  return location;
}

inline Location begin_stack() {
  Location location;
  location.pid = 4242;
  location.seq = 9;
  location.frames = {frame(0x555500004567, "main", "/src/app.cu", 55, "/src/app")};
  location.user_frame = 0;
  return location;
}

inline Report sample_report() {
  Report report;
  ProcessInfo process;
  process.pid = 4242;
  process.command = "./app --steps 3";
  process.attached = true;
  report.processes.push_back(process);

  CaptureInfo capture;
  capture.id = 1;
  capture.pid = 4242;
  capture.thread = 4243;
  capture.stream = 0x5555deadbeef;
  capture.mode = trace::CaptureMode::Global;
  capture.status = CaptureState::Invalidated;
  capture.begin = begin_stack();
  capture.root_cause = 0;
  report.captures.push_back(capture);

  CaptureInfo ok = capture;
  ok.id = 2;
  ok.status = CaptureState::Ok;
  ok.nodes = 3;
  ok.end = begin_stack();
  ok.root_cause.reset();
  report.captures.push_back(ok);

  Finding sync;
  sync.rule = "sync-during-capture";
  sync.severity = Severity::Error;
  sync.message = "synchronizing stream 0x5555deadbeef waits for work that only runs at replay";
  sync.api = "cudaStreamSynchronize";
  sync.result = 900;
  sync.result_name = "cudaErrorStreamCaptureUnsupported";
  sync.pid = 4242;
  sync.thread = 4243;
  sync.capturing_thread = true;
  sync.capture = 1;
  sync.location = culprit_stack();
  sync.related.push_back({"capture-begin", "", begin_stack()});
  Related fork{"fork", "stream 0x77", {}};
  fork.location.frames = {frame(0x555500005678, "main", "/src/app.cu", 57, "/src/app")};
  fork.location.user_frame = 0;
  sync.related.push_back(fork);
  sync.consequences = 3;
  report.findings.push_back(sync);

  Finding escape;
  escape.rule = "escaped-sync-copy";
  escape.severity = Severity::Warning;
  escape.message = "cudaMemcpy ran once at capture time; the graph has no copy \"x\"\\";
  escape.api = "cudaMemcpy";
  escape.result = 0;
  escape.result_name = "cudaSuccess";
  escape.pid = 4242;
  escape.thread = 4243;
  escape.capturing_thread = true;
  escape.capture = 2;
  report.findings.push_back(escape);
  return report;
}

// A capture site of the graph lifecycle table: cudaStreamBeginCapture called from `function` at
// app.cu:`line`, in process 4242 (the sample report's), every graph alive at exit.
inline GraphSiteInfo graph_site(int line, const char* function, uint64_t graphs,
                                uint64_t launches) {
  GraphSiteInfo site;
  site.pid = 4242;
  site.site.pid = 4242;
  site.site.frames = {
      frame(0x7f0000004000, "cudaStreamBeginCapture", "", 0,
            "/usr/lib/x86_64-linux-gnu/libcudart.so.12"),
      frame(0x555500010000 + static_cast<uint64_t>(line), function, "/src/app.cu", line,
            "/src/app"),
      frame(0x555500003456, "main", "/src/app.cu", 60, "/src/app"),
  };
  site.site.user_frame = 1;
  site.graphs = graphs;
  site.keys = static_cast<uint32_t>(graphs);
  site.topologies = 1;
  site.alive_at_exit = graphs;
  site.launches = launches;
  site.capture_ns = graphs * 1'000'000;  // 1 ms a graph
  return site;
}

// The sample report with `n` lifecycle sites of graphs 1, 51, 2, 40, 3, 40, 5, ... (two with
// 40 to check the launches tie-break), their lines 100, 101, ...
inline Report lifecycle_report(size_t n) {
  static constexpr uint64_t kGraphs[] = {1, 51, 2, 40, 3, 40, 5, 6, 7, 8};
  static constexpr uint64_t kLaunches[] = {1, 103, 2, 40, 9, 80, 5, 6, 7, 8};
  Report report = sample_report();
  for (size_t i = 0; i < n; ++i)
    report.graph_sites.push_back(
        graph_site(100 + static_cast<int>(i), "capture_step", kGraphs[i % 10], kLaunches[i % 10]));
  return report;
}

}  // namespace capguard::testing
