// Writes the trace of a training loop that re-captures its step every iteration: STEPS clean
// captures of 8 events each (begin, fork, side-stream kernel, join, end, graph launch), as
// `capguard.4242.trace` in DIR. bench/analyzer_memory.py times `capguard report` on it.
//
//     bench_analyzer_memory_trace STEPS DIR      # 2.5M steps: 20M events, about 2 GB
#include <cstdio>
#include <cstdlib>
#include <string>

#include "trace/writer.h"

namespace {

using capguard::trace::ApiEvent;
using capguard::trace::CaptureMode;
using capguard::trace::CaptureStatus;
using capguard::trace::Field;

constexpr int kStackDepth = 12;
constexpr int kStackSlots = 8;

struct TrainingLoop {
  capguard::trace::TraceWriter writer;
  uint64_t seq = 0;
  uint64_t stacks[kStackSlots][kStackDepth] = {};
  bool stack_written[kStackSlots] = {};

  void call(const char* api, uint64_t stream, int slot, void (*fill)(ApiEvent&)) {
    ApiEvent e;
    e.seq = ++seq;
    e.time_ns = seq * 100;
    e.tid = 1000;
    e.api = api;
    e.stack = static_cast<uint32_t>(slot + 1);
    e.stream = stream;
    e.set(Field::Stream);
    fill(e);
    const bool first = !stack_written[slot];
    stack_written[slot] = true;
    writer.write_event(e, first ? stacks[slot] : nullptr, first ? kStackDepth : 0);
  }
};

void in_capture(ApiEvent& e) {
  e.status_before = e.status_after = CaptureStatus::Active;
  e.set(Field::StatusBefore);
  e.set(Field::StatusAfter);
  e.capture_id = 7;
  e.set(Field::CaptureId);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s STEPS DIR\n", argv[0]);
    return 2;
  }
  const uint64_t steps = std::strtoull(argv[1], nullptr, 10);
  TrainingLoop p;
  for (int s = 0; s < kStackSlots; ++s)
    for (int f = 0; f < kStackDepth; ++f) p.stacks[s][f] = 0x400000 + s * 0x100 + f * 0x10;
  if (!p.writer.open(argv[2], 4242, 1, 0)) {
    std::fprintf(stderr, "cannot create a trace in %s\n", argv[2]);
    return 2;
  }
  p.writer.write_command("synthetic training loop");
  p.writer.write_attach(true, "cupti");
  p.writer.write_module(0, 0x400000, 0x500000, "/synthetic/train", "");
  const uint64_t origin = 0x5000, side = 0x6000;
  for (uint64_t step = 0; step < steps; ++step) {
    p.call("cudaStreamBeginCapture", origin, 0, [](ApiEvent& e) {
      e.mode = CaptureMode::Global;
      e.set(Field::Mode);
      e.stream_flags = 1;
      e.set(Field::StreamFlags);
    });
    p.call("cudaEventRecord", origin, 1, [](ApiEvent& e) {
      e.event = 0x7000;
      e.set(Field::Event);
      in_capture(e);
    });
    p.call("cudaStreamWaitEvent", side, 2, [](ApiEvent& e) {
      e.event = 0x7000;
      e.set(Field::Event);
    });
    p.call("cudaLaunchKernel", side, 3, in_capture);
    p.call("cudaEventRecord", side, 4, [](ApiEvent& e) {
      e.event = 0x7100;
      e.set(Field::Event);
      in_capture(e);
    });
    p.call("cudaStreamWaitEvent", origin, 5, [](ApiEvent& e) {
      e.event = 0x7100;
      e.set(Field::Event);
      in_capture(e);
    });
    p.call("cudaStreamEndCapture", origin, 6, [](ApiEvent& e) {
      e.graph = 0x9000;
      e.set(Field::Graph);
      e.nodes = 4;
      e.set(Field::Nodes);
    });
    p.call("cudaGraphLaunch", origin, 7, [](ApiEvent&) {});
  }
  p.writer.write_end(p.seq * 100, 0);
  std::printf("%llu events\n", static_cast<unsigned long long>(p.seq));
  return 0;
}
