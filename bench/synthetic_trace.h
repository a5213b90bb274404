// A synthetic program's trace for the analyzer benchmarks: events written with the
// interposer's own TraceWriter, each stack slot defined on its first use, as the interposer
// does. One process (pid 4242), one thread, one module.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "trace/writer.h"

namespace capguard::bench {

using trace::ApiEvent;
using trace::CaptureMode;
using trace::CaptureStatus;
using trace::Field;

class SyntheticTrace {
 public:
  // `slots` distinct stacks of `depth` frames each; exits with a message when `dir` is unusable.
  SyntheticTrace(const char* dir, const char* command, int slots, int depth)
      : stacks_(slots, std::vector<uint64_t>(depth)), written_(slots, false) {
    for (int s = 0; s < slots; ++s)
      for (int f = 0; f < depth; ++f) stacks_[s][f] = 0x400000 + s * 0x100 + f * 0x10;
    if (!writer_.open(dir, 4242, 1, 0)) {
      std::fprintf(stderr, "cannot create a trace in %s\n", dir);
      std::exit(2);
    }
    writer_.write_command(command);
    writer_.write_attach(true, "cupti");
    writer_.write_module(0, 0x400000, 0x500000, "/synthetic/app", "");
  }

  // One call on `stream` from stack `slot`; `fill` adds the fields the call needs.
  void call(const char* api, uint64_t stream, int slot, void (*fill)(ApiEvent&) = nullptr) {
    ApiEvent e;
    e.seq = ++seq_;
    e.time_ns = seq_ * 100;
    e.tid = 1000;
    e.api = api;
    e.stack = static_cast<uint32_t>(slot + 1);
    e.stream = stream;
    e.set(Field::Stream);
    if (fill) fill(e);
    const bool first = !written_[slot];
    written_[slot] = true;
    writer_.write_event(e, first ? stacks_[slot].data() : nullptr,
                        first ? static_cast<uint32_t>(stacks_[slot].size()) : 0);
  }

  void end() { writer_.write_end(seq_ * 100, 0); }
  uint64_t events() const { return seq_; }

 private:
  trace::TraceWriter writer_;
  uint64_t seq_ = 0;
  std::vector<std::vector<uint64_t>> stacks_;
  std::vector<bool> written_;
};

// Field fillers for SyntheticTrace::call.
inline void in_capture(ApiEvent& e) {
  e.status_before = e.status_after = CaptureStatus::Active;
  e.set(Field::StatusBefore);
  e.set(Field::StatusAfter);
  e.capture_id = 7;
  e.set(Field::CaptureId);
}
inline void begin_global_on_non_blocking(ApiEvent& e) {
  e.mode = CaptureMode::Global;
  e.set(Field::Mode);
  e.stream_flags = 1;
  e.set(Field::StreamFlags);
}
template <uint64_t kEvent, bool kInCapture>
void on_event(ApiEvent& e) {
  e.event = kEvent;
  e.set(Field::Event);
  if (kInCapture) in_capture(e);
}
template <uint64_t kNodes>
void ends_with_nodes(ApiEvent& e) {
  e.graph = 0x9000;
  e.set(Field::Graph);
  e.nodes = kNodes;
  e.set(Field::Nodes);
}

}  // namespace capguard::bench
