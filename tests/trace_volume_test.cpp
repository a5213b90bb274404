// Many threads writing at once, and traces big enough to cross every read-buffer boundary:
// nothing torn, nothing lost, every stack defined before its use. No timing here (bench/).
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "tests/trace_recording_sink.h"
#include "trace/writer.h"

namespace capguard::trace {
namespace {

using testing::TempDir;

constexpr const char* kApiNames[] = {
    "cudaLaunchKernel", "cudaMemcpyAsync_ptsz", "cuMemcpyHtoD_v2",     "cudaStreamBeginCapture",
    "cudaEventRecord",  "cudaMalloc",           "cudaStreamWaitEvent", "cudaGraphLaunch"};
constexpr size_t kApiCount = std::size(kApiNames);

uint64_t frame(uint32_t stack_id, size_t depth) { return (uint64_t{stack_id} << 20) + depth; }

// The event number `i` of writer `thread`, every value derived from the two.
ApiEvent make_event(uint32_t thread, uint32_t i) {
  ApiEvent e;
  e.seq = (uint64_t{thread} << 32) | i;
  e.time_ns = 0x16000000000000 + i * 977ull;
  e.tid = thread + 1;
  e.api = kApiNames[(i + thread) % kApiCount];
  e.result = static_cast<int32_t>(i % 5 == 0 ? 900 : 0);
  e.stack = thread * 1000000 + i / 3 + 1;  // three events share each stack
  e.fields = (i * 2654435761u) & ((1u << kFieldCount) - 1);
  e.stream = 0x7f0000000000 + i;
  e.capture_id = i;
  e.status_before = static_cast<CaptureStatus>(i % 3);
  e.mode = static_cast<CaptureMode>((i / 3) % 3);
  e.nodes = i * 7;
  return e;
}

void write_events(TraceWriter& writer, uint32_t thread, uint32_t count) {
  uint64_t frames[TraceWriter::kMaxStackDepth];
  for (uint32_t i = 0; i < count; ++i) {
    const ApiEvent e = make_event(thread, i);
    if (i % 3 != 0) {
      writer.write_event(e);  // the stack was defined with an earlier event of this thread
      continue;
    }
    const size_t depth = 1 + i % TraceWriter::kMaxStackDepth;
    for (size_t d = 0; d < depth; ++d) frames[d] = frame(e.stack, d);
    writer.write_event(e, frames, depth);
  }
}

// Checks every event against make_event() and every stack use against its definition.
struct CheckingSink : TraceSink {
  std::vector<std::vector<bool>> seen_stack;  // [thread][index], filled as stacks arrive
  std::vector<uint32_t> next_index;           // per thread: events arrive in its write order
  uint64_t events = 0, mismatches = 0, undefined_stacks = 0, bad_stacks = 0;

  explicit CheckingSink(uint32_t threads, uint32_t per_thread)
      : seen_stack(threads, std::vector<bool>(per_thread / 3 + 2)), next_index(threads) {}

  void on_stack(const StackRecord& s) override {
    const uint32_t thread = (s.id - 1) / 1000000, index = (s.id - 1) % 1000000;
    bool ok = thread < seen_stack.size() && index < seen_stack[thread].size();
    for (size_t d = 0; ok && d < s.addresses.size(); ++d) ok = s.addresses[d] == frame(s.id, d);
    if (!ok) return void(++bad_stacks);
    seen_stack[thread][index] = true;
  }
  void on_event(const ApiEvent& got) override {
    ++events;
    const uint32_t thread = static_cast<uint32_t>(got.seq >> 32);
    if (thread >= next_index.size()) return void(++mismatches);
    const ApiEvent want = make_event(thread, next_index[thread]++);
    const bool same = got.seq == want.seq && got.time_ns == want.time_ns && got.tid == want.tid &&
                      got.api == want.api && got.result == want.result && got.stack == want.stack &&
                      got.fields == want.fields &&
                      (!got.has(Field::Stream) || got.stream == want.stream) &&
                      (!got.has(Field::CaptureId) || got.capture_id == want.capture_id) &&
                      (!got.has(Field::StatusBefore) || got.status_before == want.status_before) &&
                      (!got.has(Field::Mode) || got.mode == want.mode) &&
                      (!got.has(Field::Nodes) || got.nodes == want.nodes);
    if (!same) ++mismatches;
    if (!seen_stack[thread][(got.stack - 1) % 1000000]) ++undefined_stacks;
  }
};

TEST_SUITE("trace_volume_test") {
  TEST_CASE("8 threads writing 5000 events each: all 40000 arrive whole, stacks defined first") {
    constexpr uint32_t kThreads = 8, kPerThread = 5000;
    TempDir dir;
    TraceWriter writer;
    REQUIRE(writer.open(dir.path().c_str(), 99, 1, 0));
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < kThreads; ++t) {
      threads.emplace_back([&writer, t] { write_events(writer, t, kPerThread); });
    }
    for (auto& thread : threads) thread.join();

    CheckingSink sink(kThreads, kPerThread);
    const auto error = read_trace(writer.path(), sink);
    REQUIRE_MESSAGE(!error, error->to_string());
    CHECK(sink.events == kThreads * kPerThread);
    CHECK(sink.mismatches == 0);
    CHECK(sink.undefined_stacks == 0);
    CHECK(sink.bad_stacks == 0);
    for (uint32_t t = 0; t < kThreads; ++t) CHECK(sink.next_index[t] == kPerThread);
  }

  TEST_CASE("200000 events parse back exactly, across many read-buffer refills") {
    constexpr uint32_t kEvents = 200000;
    TempDir dir;
    TraceWriter writer;
    REQUIRE(writer.open(dir.path().c_str(), 99, 1, 0));
    write_events(writer, 0, kEvents);
    CheckingSink sink(1, kEvents);
    const auto error = read_trace(writer.path(), sink);
    REQUIRE_MESSAGE(!error, error->to_string());
    CHECK(sink.events == kEvents);
    CHECK(sink.mismatches == 0);
    CHECK(sink.undefined_stacks == 0);
    CHECK(sink.bad_stacks == 0);
  }
}

}  // namespace
}  // namespace capguard::trace
