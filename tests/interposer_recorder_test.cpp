// The switchboard driven by fabricated CUPTI callbacks, with a fake CUDA driver behind the
// seam: what is recorded, with which capture status, and what must never happen (recording
// the interposer's own calls, asking about the legacy stream, writing into a parent's trace).
#include <cupti.h>
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <link.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "interposer/recorder.h"
#include "interposer/startup_times.h"
#include "tests/recorder_harness.h"
#include "tests/trace_recording_sink.h"
#include "trace/reader.h"

namespace capguard::interposer {
namespace {

using namespace recorder_harness;  // NOLINT(google-build-using-namespace): the harness

TEST_CASE("a capture: its calls carry the stream's status; outside it only the roles count") {
  TempDir dir;
  auto r = make_recorder(dir);
  launch(*r, kStream);  // before any capture: neither recorded nor queried
  CHECK(g_fake.queried.empty());
  begin_capture(*r, kStream, 7);
  CHECK(r->captures().contains(kStream));
  launch(*r, kStream);  // the capture's body on its origin stream: not recorded (no rule reads it)
  fork_into_capture(kForked, 7);  // a stream forked into the capture: its work is recorded
  launch(*r, kForked);
  cudaMemcpy_v3020_params copy{nullptr, nullptr, 64, cudaMemcpyHostToDevice};
  call(*r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy", &copy, 0);
  launch(*r, kStream, false, 901);  // a failure on the origin is recorded
  end_capture(*r, kStream, 0x8000);
  CHECK_FALSE(r->captures().any());
  launch(*r, kStream);  // after the capture: not recorded again

  const RecordingSink sink = read_back(*r);
  REQUIRE(api_names(sink) == std::vector<std::string>{"cudaStreamBeginCapture", "cudaLaunchKernel",
                                                      "cudaMemcpy", "cudaLaunchKernel",
                                                      "cudaStreamEndCapture"});
  CHECK(sink.events[1].stream == kForked);
  CHECK(sink.events[3].stream == kStream);
  CHECK(sink.events[3].result == 901);
  const ApiEvent& begin = sink.events[0];
  CHECK(begin.stream == kStream);
  CHECK(begin.has(Field::StreamFlags));
  CHECK(begin.stream_flags == 1);
  CHECK(begin.status_before == CaptureStatus::None);
  CHECK(begin.status_after == CaptureStatus::Active);
  CHECK(begin.capture_id == 7);
  CHECK(begin.has(Field::Mode));
  CHECK(begin.domain == ApiDomain::Runtime);
  const ApiEvent& kernel = sink.events[1];
  CHECK_FALSE(kernel.has(Field::StatusBefore));  // an enqueue cannot join: exit status suffices
  CHECK(kernel.status_after == CaptureStatus::Active);
  CHECK(kernel.capture_id == 7);
  const ApiEvent& copy_event = sink.events[2];
  CHECK_FALSE(copy_event.has(Field::Stream));
  CHECK(copy_event.copy_kind == cudaMemcpyHostToDevice);
  const ApiEvent& end = sink.events[4];
  CHECK(end.status_before == CaptureStatus::Active);
  CHECK(end.status_after == CaptureStatus::None);
  CHECK(end.capture_id == 7);  // the capture that ended, known from the entry
  CHECK(end.graph == 0x8000);
  CHECK(end.nodes == 3);
  CHECK(sink.events[1].seq > sink.events[0].seq);
  CHECK(sink.events[0].tid == static_cast<uint32_t>(gettid()));
}

TEST_CASE("a rehearsed range records every call as a capture would, and asks no stream status") {
  TempDir dir;
  auto r = make_recorder(dir);
  g_fake.queried.clear();
  launch(*r, kStream);  // outside: not recorded
  r->range_begin(1, "", "step");
  CHECK(r->rehearsing());
  launch(*r, kStream);  // the region's body on its stream: recorded (no stream captures)
  malloc_call(*r, 0);
  r->range_end(1);
  CHECK_FALSE(r->rehearsing());
  launch(*r, kStream);  // after the range: not recorded again
  CHECK(g_fake.queried.empty());
  const RecordingSink sink = read_back(*r);
  CHECK(sink.types.find('r') < sink.types.find('e'));  // in file order too
  CHECK(sink.types.rfind('R') > sink.types.rfind('e'));
  CHECK(api_names(sink) == std::vector<std::string>{"cudaLaunchKernel", "cudaMalloc"});
  REQUIRE(sink.ranges.size() == 2);
  CHECK(sink.ranges[0].name == "step");
  CHECK(sink.ranges[0].seq < sink.events[0].seq);
  CHECK(sink.ranges[1].seq > sink.events[1].seq);
  CHECK_FALSE(sink.events[0].has(Field::StatusAfter));
}

TEST_CASE("a runtime call's own driver calls are not recorded; a driver-only call is") {
  TempDir dir;
  auto r = make_recorder(dir);
  begin_capture(*r, kStream, 1);
  fork_into_capture(kForked, 1);
  cudaLaunchKernel_v7000_params p{};
  p.stream = as<cudaStream_t>(kForked);
  call(*r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel",
       &p, 0,
       [&] { driver_callback(*r, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"); });
  cuMemcpyHtoD_v2_params copy{};
  call(*r, ApiDomain::Driver, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2", &copy, 0);
  const RecordingSink sink = read_back(*r);
  REQUIRE(api_names(sink) == std::vector<std::string>{"cudaStreamBeginCapture", "cudaLaunchKernel",
                                                      "cuMemcpyHtoD_v2"});
  CHECK(sink.events[2].domain == ApiDomain::Driver);
}

TEST_CASE("the interposer's own driver calls are never recorded") {
  TempDir dir;
  auto r = make_recorder(dir);
  g_fake.reenter = r.get();
  begin_capture(*r, kStream, 1);
  fork_into_capture(kForked, 1);
  launch(*r, kForked);
  g_fake.reenter = nullptr;
  const RecordingSink sink = read_back(*r);
  CHECK(api_names(sink) == std::vector<std::string>{"cudaStreamBeginCapture", "cudaLaunchKernel"});
}

TEST_CASE("the set of open captures never contains 0, the value of its free slots") {
  CaptureSet set;
  CHECK_FALSE(set.contains(0));
  set.add(kStream);
  CHECK(set.contains(kStream));
  CHECK_FALSE(set.contains(0));
  CHECK(set.remove(kStream));
  CHECK_FALSE(set.contains(kStream));
}

TEST_CASE("the legacy stream is never asked about, the per-thread stream is") {
  TempDir dir;
  auto r = make_recorder(dir);
  begin_capture(*r, kStream, 1);
  g_fake.queried.clear();
  launch(*r, 0);
  launch(*r, trace::kStreamLegacy);
  launch(*r, trace::kStreamLegacy, /*ptsz=*/true);
  CHECK(g_fake.queried.empty());
  launch(*r, 0, /*ptsz=*/true);
  CHECK(g_fake.queried == std::vector<uint64_t>{trace::kStreamPerThread});  // at exit only
  const RecordingSink sink = read_back(*r);
  REQUIRE(sink.events.size() == 5);
  CHECK(sink.events[1].has(Field::Stream));
  CHECK(sink.events[1].stream == 0);
  CHECK_FALSE(sink.events[1].has(Field::StatusBefore));
}

TEST_CASE("outside captures, a capture error is recorded whatever the call") {
  TempDir dir;
  auto r = make_recorder(dir);
  malloc_call(*r, 0);
  malloc_call(*r, 900);
  cudaGraph_t graph = nullptr;
  cudaStreamEndCapture_v10000_params p{as<cudaStream_t>(kStream), &graph};
  call(*r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
       "cudaStreamEndCapture", &p, 401);
  const RecordingSink sink = read_back(*r);
  // The successful cudaMalloc is recorded too: allocations are (graph lifetime).
  REQUIRE(api_names(sink) ==
          std::vector<std::string>{"cudaMalloc", "cudaMalloc", "cudaStreamEndCapture"});
  CHECK(sink.events[0].result == 0);
  CHECK(sink.events[1].result == 900);
  CHECK(sink.events[2].result == 401);
  CHECK_FALSE(sink.events[2].has(Field::Graph));  // a failed call wrote no graph
}

TEST_CASE("a callback without params or return value is recorded, not dereferenced") {
  TempDir dir;
  auto r = make_recorder(dir);
  begin_capture(*r, kStream, 1);
  call(*r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID___cudaPushCallConfiguration_v13000, nullptr,
       nullptr, 0, {}, /*null_return=*/true);
  call(*r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel",
       nullptr, 0, {}, /*null_return=*/true);
  call(*r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID___cudaPopCallConfiguration_v13000, nullptr,
       nullptr, 900);
  const RecordingSink sink = read_back(*r);
  // The runtime's own __cuda* entry points only when they fail; the launch always.
  REQUIRE(api_names(sink) == std::vector<std::string>{"cudaStreamBeginCapture", "cudaLaunchKernel",
                                                      "__cudaPopCallConfiguration_v13000"});
  CHECK(sink.events[1].result == 0);
  CHECK_FALSE(sink.events[1].has(Field::Stream));
  CHECK(sink.events[2].result == 900);  // table name: CUPTI gave none
}

TEST_CASE("a mode exchange records the mode set and the mode it replaced") {
  TempDir dir;
  auto r = make_recorder(dir);
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode_v10010_params p{&mode};
  call(*r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010,
       "cudaThreadExchangeStreamCaptureMode", &p, 0, [&] { mode = cudaStreamCaptureModeGlobal; });
  const RecordingSink sink = read_back(*r);
  REQUIRE(sink.events.size() == 1);
  CHECK(sink.events[0].mode == trace::CaptureMode::Relaxed);
  CHECK(sink.events[0].has(Field::PrevMode));
  CHECK(sink.events[0].prev_mode == trace::CaptureMode::Global);
}

TEST_CASE("each distinct stack is written once per thread, before its first use") {
  TempDir dir;
  auto r = make_recorder(dir);
  begin_capture(*r, kStream, 1);
  fork_into_capture(kForked, 1);
  launch(*r, kForked);
  g_fake.stack = {0x1000, 0x3000};
  launch(*r, kForked);
  const RecordingSink sink = read_back(*r);
  REQUIRE(sink.events.size() == 3);
  CHECK(sink.events[0].stack == sink.events[1].stack);
  CHECK(sink.events[2].stack != sink.events[1].stack);
  CHECK(sink.stacks.size() == 2);
  CHECK(sink.stack_redefinitions == 0);
  CHECK(sink.stacks.at(sink.events[2].stack) == std::vector<uint64_t>{0x1000, 0x3000});
  // Unknown addresses like these make the module map rescan, without writing duplicates.
  const std::string types = sink.types;
  CHECK(types.find("se") != std::string::npos);
}

TEST_CASE("a stack in a library loaded after start gets its module written first") {
  TempDir dir;
  auto r = make_recorder(dir);
  void* lib = nullptr;
  for (const char* name : {"libanl.so.1", "libutil.so.1", "libBrokenLocale.so.1", "libz.so.1"}) {
    if ((lib = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) != nullptr) {
      dlclose(lib);  // already loaded before the trace began: not a late load
      lib = nullptr;
      continue;
    }
    if ((lib = dlopen(name, RTLD_NOW)) != nullptr) break;
  }
  if (lib == nullptr) {
    MESSAGE("no unloaded system library to load late: skipped");
    return;
  }
  link_map* map = nullptr;
  REQUIRE(dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0);
  const std::string path = map->l_name;
  struct Find {
    const char* path;
    uint64_t address = 0;
  } find{path.c_str()};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* p) {
        auto* f = static_cast<Find*>(p);
        if (std::string(info->dlpi_name) != f->path) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            f->address = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr + 1;
            return 1;
          }
        }
        return 0;
      },
      &find);
  REQUIRE(find.address != 0);
  g_fake.stack = {find.address};
  cuStreamCreate_params p{};
  call(*r, ApiDomain::Driver, CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, "cuStreamCreate", &p, 0);
  const RecordingSink sink = read_back(*r);
  const auto late = std::find_if(sink.modules.begin(), sink.modules.end(),
                                 [&](const auto& m) { return m.path == path; });
  CHECK(late != sink.modules.end());
  CHECK(sink.types.rfind('m') < sink.types.find('s'));
  dlclose(lib);
}

TEST_CASE("a thread that recorded gets an exit record; one that did not gets none") {
  TempDir dir;
  auto r = make_recorder(dir);
  uint32_t worker_tid = 0;
  std::thread worker([&] {
    worker_tid = static_cast<uint32_t>(gettid());
    malloc_call(*r, 900);
    r->on_thread_exit();  // what the thread-exit key destructor does
  });
  worker.join();
  r->on_thread_exit();  // this thread recorded nothing
  const RecordingSink sink = read_back(*r);
  REQUIRE(sink.thread_exits.size() == 1);
  CHECK(sink.thread_exits[0].first == worker_tid);
  CHECK(sink.types.back() == 'x');
}

TEST_CASE("process exit writes the end record, and nothing is written after it") {
  TempDir dir;
  auto r = make_recorder(dir);
  malloc_call(*r, 900);
  r->on_process_exit(3);
  malloc_call(*r, 900);
  r->on_process_exit(4);
  const RecordingSink sink = read_back(*r);
  CHECK(sink.events.size() == 1);
  REQUIRE(sink.ends.size() == 1);
  CHECK(sink.ends[0].second == 3);
  CHECK(sink.types.back() == 'z');
}

TEST_CASE("CAPGUARD_STARTUP_TIMES times the callbacks and records the same trace") {
  const auto record_session = [](bool timed) {
    TempDir dir;
    startup::clear();
    startup::set_enabled(timed);
    auto r = make_recorder(dir);
    malloc_call(*r, 900);
    begin_capture(*r, kStream, 7);
    fork_into_capture(kForked, 7);
    launch(*r, kForked);
    end_capture(*r, kStream, 0x8000);
    r->on_process_exit(0);
    const RecordingSink sink = read_back(*r);
    startup::set_enabled(false);
    std::vector<std::string> seen = api_names(sink);
    seen.push_back(sink.types);  // every record's type, in order
    return seen;
  };
  const std::vector<std::string> plain = record_session(false);
  CHECK(startup::sum_count(startup::Sum::callbacks) == 0);
  CHECK(startup::phase_ns(startup::Phase::first_callback) == 0);
  const std::vector<std::string> timed = record_session(true);
  CHECK(timed == plain);
  CHECK(startup::sum_count(startup::Sum::callbacks) == 8);     // ENTER and EXIT of four calls
  CHECK(startup::sum_count(startup::Sum::stack_unwind) == 4);  // the four recorded calls
  CHECK(startup::sum_count(startup::Sum::module_scan) >= 1);   // the preamble's module map
  CHECK(startup::phase_ns(startup::Phase::trace_opened) != 0);
  CHECK(startup::phase_ns(startup::Phase::preamble_written) >=
        startup::phase_ns(startup::Phase::trace_opened));
  CHECK(startup::phase_ns(startup::Phase::first_callback) >=
        startup::phase_ns(startup::Phase::preamble_written));
  CHECK(startup::phase_ns(startup::Phase::first_record) >=
        startup::phase_ns(startup::Phase::first_callback));
  CHECK(startup::phase_ns(startup::Phase::first_capture) >=
        startup::phase_ns(startup::Phase::first_record));
  startup::clear();
}

TEST_CASE("a fork child writes its own trace, never into the parent's") {
  TempDir dir;
  auto r = make_recorder(dir);
  begin_capture(*r, kStream, 1);
  r->before_fork();
  const pid_t child = fork();
  if (child == 0) {
    r->after_fork_child();
    CHECK_FALSE(r->captures().any());  // no doctest output from here: the exit code says it
    malloc_call(*r, 900);
    r->on_process_exit(0);
    _exit(r->captures().any() ? 1 : 0);
  }
  r->after_fork_parent();
  int status = -1;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  malloc_call(*r, 900);

  const RecordingSink parent = read_back(*r);
  CHECK(api_names(parent) == std::vector<std::string>{"cudaStreamBeginCapture", "cudaMalloc"});
  CHECK(parent.process.pid == static_cast<uint32_t>(getpid()));
  std::vector<std::string> others;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path() != r->writer().path()) others.push_back(entry.path());
  }
  REQUIRE(others.size() == 1);
  const RecordingSink forked = read_back(others[0]);
  CHECK(forked.process.pid == static_cast<uint32_t>(child));
  CHECK(forked.process.ppid == static_cast<uint32_t>(getpid()));
  CHECK(api_names(forked) == std::vector<std::string>{"cudaMalloc"});
  CHECK(forked.stacks.size() == 1);  // the child defines its stacks in its own trace
  CHECK(forked.ends.size() == 1);
  REQUIRE(forked.attaches.size() == 1);
  CHECK(forked.attaches[0].first);
}

// CUPTI behind the callback gate: a callback reaches the switchboard only while it is enabled,
// as CUPTI does, so a call whose callback goes off while a thread is inside it loses its EXIT.
struct GatedCupti {
  std::mutex mutex;
  std::map<std::pair<int, uint32_t>, bool> on;
  // Runs once, right after a domain went off (the moment a reduction delivers nothing).
  std::function<void()> while_off;
};
GatedCupti g_gated;

CUptiResult gated_enable_domain(uint32_t enable, CUpti_SubscriberHandle,
                                CUpti_CallbackDomain domain) {
  {
    const std::lock_guard lock(g_gated.mutex);
    const uint32_t size = api_table_size(domain == CUPTI_CB_DOMAIN_RUNTIME_API ? ApiDomain::Runtime
                                                                               : ApiDomain::Driver);
    for (uint32_t cbid = 1; cbid < size; ++cbid) g_gated.on[{domain, cbid}] = enable != 0;
  }
  if (enable == 0 && g_gated.while_off) std::exchange(g_gated.while_off, nullptr)();
  return CUPTI_SUCCESS;
}
CUptiResult gated_enable_callback(uint32_t enable, CUpti_SubscriberHandle,
                                  CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const std::lock_guard lock(g_gated.mutex);
  g_gated.on[{domain, cbid}] = enable != 0;
  return CUPTI_SUCCESS;
}

// One runtime call through the gated CUPTI, ENTER and EXIT separately.
struct GatedCall {
  Recorder& recorder;
  uint32_t cbid;
  uint64_t correlation = 0;
  int32_t result = 0;
  CUpti_CallbackData data{};
  GatedCall(Recorder& r, uint32_t id, const char* name, const void* params)
      : recorder(r), cbid(id) {
    static std::atomic<uint32_t> next_correlation{0};
    data.correlationId = ++next_correlation;  // CUPTI's: one per call, its ENTER's and EXIT's
    data.functionName = name;
    data.functionParams = params;
    data.correlationData = &correlation;
  }
  void deliver(CUpti_ApiCallbackSite site) {
    {
      const std::lock_guard lock(g_gated.mutex);
      if (!g_gated.on[{CUPTI_CB_DOMAIN_RUNTIME_API, cbid}]) return;
    }
    data.callbackSite = site;
    Recorder::switchboard(&recorder, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &data);
  }
  void enter() { deliver(CUPTI_API_ENTER); }
  void exit(int32_t value = 0) {
    result = value;
    data.functionReturnValue = &result;
    deliver(CUPTI_API_EXIT);
  }
  void whole(int32_t value = 0) {
    enter();
    exit(value);
  }
};

// A capture begun on `stream`, and a synchronize inside it that CUDA rejects (900).
void capture_with_rejected_sync(Recorder& r, uint64_t stream) {
  cudaStreamBeginCapture_v10000_params begin{as<cudaStream_t>(stream), cudaStreamCaptureModeGlobal};
  GatedCall begin_call(r, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
                       "cudaStreamBeginCapture", &begin);
  begin_call.enter();
  g_fake.status[stream] = 1;
  g_fake.id[stream] = 9;
  begin_call.exit();
  cudaStreamSynchronize_v3020_params sync{as<cudaStream_t>(stream)};
  GatedCall(r, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, "cudaStreamSynchronize", &sync)
      .whole(900);
}

// A recorder behind a real CallbackGate over the gated CUPTI (reduced set on, 1 ms linger).
struct GatedRecorder {
  TempDir dir;
  CallbackGate gate;
  std::optional<Recorder> recorder;
  GatedRecorder() {
    g_fake = FakeCuda{};
    g_gated.on.clear();
    CuptiSwitches switches;
    switches.enable_domain = &gated_enable_domain;
    switches.enable_callback = &gated_enable_callback;
    gate.init(switches, /*always_full=*/false, /*linger_ns=*/1'000'000);
    REQUIRE(gate.enable_reduced_set());
    RecorderConfig config;
    config.trace_dir = dir.path().c_str();
    config.driver.stream_get_capture_info = &fake_capture_info;
    config.capture_stack = &fake_stack;
    config.gate = &gate;
    recorder.emplace(config);
    REQUIRE(recorder->start());
  }
  // A capture opens and ends on the main thread: everything on, a reduction due after 1 ms.
  void capture_on_main_thread() {
    Recorder& r = *recorder;
    cudaStreamBeginCapture_v10000_params begin{as<cudaStream_t>(kStream),
                                               cudaStreamCaptureModeGlobal};
    GatedCall(r, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, "cudaStreamBeginCapture",
              &begin)
        .whole();
    g_fake.status[kStream] = 1;
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture_v10000_params end{as<cudaStream_t>(kStream), &graph};
    g_fake.status[kStream] = 0;
    GatedCall(r, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000, "cudaStreamEndCapture", &end)
        .whole();
  }
  // After the linger, a launch on the main thread: its EXIT reduces.
  void reduce_after_linger() {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    cudaLaunchKernel_v7000_params launch{};
    launch.stream = as<cudaStream_t>(kStream);
    GatedCall(*recorder, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel",
              &launch)
        .whole();
    REQUIRE(gate.reductions() == 1);
  }
};

TEST_CASE("a thread whose EXIT the gate swallowed still records its next capture") {
  GatedRecorder gated;
  CallbackGate& gate = gated.gate;
  Recorder& r = *gated.recorder;

  gated.capture_on_main_thread();
  CHECK(gate.full());

  constexpr uint64_t kWorkerStream = 0x6000;
  cudaLaunchKernel_v7000_params launch_params{};
  launch_params.stream = as<cudaStream_t>(kWorkerStream);
  std::promise<void> worker_inside, launch_switched_off;
  std::thread worker([&] {
    GatedCall launch_call(r, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel",
                          &launch_params);
    launch_call.enter();  // inside cudaLaunchKernel when the main thread switches it off
    worker_inside.set_value();
    launch_switched_off.get_future().wait();
    launch_call.exit();  // never delivered: its callback is off now

    // The worker's own capture, and a synchronize inside it that CUDA rejects.
    capture_with_rejected_sync(r, kWorkerStream);
  });
  worker_inside.get_future().wait();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the linger passes
  GatedCall(r, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel", &launch_params)
      .whole();  // the capture ended before: the gate reduces, every thread loses the launch
  CHECK(gate.reductions() == 1);
  launch_switched_off.set_value();
  worker.join();

  const RecordingSink sink = read_back(r);
  std::vector<std::string> worker_calls;
  for (const auto& e : sink.events) {
    if (e.stream == kWorkerStream) worker_calls.emplace_back(e.api);
  }
  CHECK(worker_calls ==
        std::vector<std::string>{"cudaStreamBeginCapture", "cudaStreamSynchronize"});
}

TEST_CASE(
    "a reduced-set call whose EXIT came while the gate switched still lets the thread record") {
  GatedRecorder gated;
  CallbackGate& gate = gated.gate;
  Recorder& r = *gated.recorder;

  gated.capture_on_main_thread();
  REQUIRE(gate.full());

  // The worker is inside a call of the reduced set (a stream's creation, always recorded) when
  // the reduction switches both domains off; its EXIT comes in that moment and is lost.
  constexpr uint64_t kWorkerStream = 0x6000;
  cudaStream_t created = as<cudaStream_t>(kWorkerStream);
  cudaStreamCreateWithFlags_v5000_params create{&created, 1};
  GatedCall create_call(r, CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000,
                        "cudaStreamCreateWithFlags", &create);
  std::promise<void> worker_inside, exit_lost, go_on;
  std::thread worker([&] {
    create_call.enter();
    worker_inside.set_value();
    go_on.get_future().wait();

    capture_with_rejected_sync(r, kWorkerStream);
  });
  worker_inside.get_future().wait();
  g_gated.while_off = [&] {
    create_call.exit();  // not delivered: every callback is off for this moment
    exit_lost.set_value();
  };
  gated.reduce_after_linger();
  exit_lost.get_future().wait();
  go_on.set_value();
  worker.join();

  const RecordingSink sink = read_back(r);
  std::vector<std::string> worker_calls;
  for (const auto& e : sink.events) {
    if (e.stream == kWorkerStream) worker_calls.emplace_back(e.api);
  }
  CHECK(worker_calls ==
        std::vector<std::string>{"cudaStreamBeginCapture", "cudaStreamSynchronize"});
}

TEST_CASE("a call given up for lost whose EXIT comes after all is still recorded") {
  GatedRecorder gated;
  Recorder& r = *gated.recorder;

  // A worker inside a stream's creation (reduced set) while the main thread's capture ends and
  // the gate reduces; then a runtime call nested in the creation: the creation is given up at
  // that ENTER, yet its EXIT comes after all and is recorded.
  cudaStream_t created = as<cudaStream_t>(0x6100);
  cudaStreamCreateWithFlags_v5000_params create{&created, 1};
  GatedCall outer(r, CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000,
                  "cudaStreamCreateWithFlags", &create);
  std::promise<void> inside, reduced;
  std::thread worker([&] {
    outer.enter();
    inside.set_value();
    reduced.get_future().wait();
    cudaEvent_t event = as<cudaEvent_t>(0xe7);
    cudaEventCreate_v3020_params nested_params{&event};
    GatedCall(r, CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020, "cudaEventCreate", &nested_params)
        .whole();
    outer.exit();
  });
  inside.get_future().wait();
  gated.capture_on_main_thread();
  gated.reduce_after_linger();
  reduced.set_value();
  worker.join();

  const std::vector<std::string> names = api_names(read_back(r));
  CHECK(std::count(names.begin(), names.end(), "cudaStreamCreateWithFlags") == 1);
  CHECK(std::count(names.begin(), names.end(), "cudaEventCreate") == 1);
}

}  // namespace
}  // namespace capguard::interposer

namespace capguard::interposer {
namespace {

// Graph lifetime: the recorder's side, through the switchboard with a fake driver.
int fake_range(uint64_t* base, size_t* size, uint64_t address) {
  if (address < 0x7000 || address >= 0x8000) return 500;  // CUDA_ERROR_NOT_FOUND
  *base = 0x7000;
  *size = 0x1000;
  return 0;
}

struct GraphRecordSink : RecordingSink {
  size_t graph_nodes = 0, graphs = 0;
  void on_graph_node(const trace::GraphNodeRecord&) override { ++graph_nodes; }
  void on_graph(const trace::GraphRecord&) override { ++graphs; }
};

TEST_CASE(
    "graph lifetime: allocations and frees carry address and size; launches outside "
    "captures are recorded for each exec's first launches only; syncs when they matter") {
  TempDir dir;
  g_fake = FakeCuda{};
  RecorderConfig config;
  config.trace_dir = dir.path().c_str();
  config.driver.stream_get_capture_info = &fake_capture_info;
  config.capture_stack = &fake_stack;
  config.graph_driver.address_range = &fake_range;
  config.graph_driver.get_nodes = [](void*, void**, size_t* count) {
    *count = 0;
    return 0;
  };
  Recorder r(config);
  REQUIRE(r.start());

  void* allocated = as<void*>(0x7000);
  cudaMalloc_v3020_params m{&allocated, 0x1000};
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc", &m, 0);
  cudaStreamSynchronize_v3020_params sync{as<cudaStream_t>(kStream)};
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
       "cudaStreamSynchronize", &sync, 0);  // no exec yet: not recorded
  cudaGraphExec_t exec = as<cudaGraphExec_t>(0xe1);
  cudaGraphInstantiate_v12000_params inst{&exec, as<cudaGraph_t>(0x9000), 0};
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000,
       "cudaGraphInstantiate", &inst, 0);
  cudaGraphLaunch_v10000_params gl{exec, as<cudaStream_t>(kStream)};
  for (int i = 0; i < 6; ++i) {
    call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch",
         &gl, 0);
  }
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
       "cudaStreamSynchronize", &sync, 0);  // follows recorded launches
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
       "cudaStreamSynchronize", &sync, 0);  // nothing new: not recorded
  // A stream-ordered free is recorded while an exec lives (this one: 0xe1).
  cudaFreeAsync_v11020_params fa{as<void*>(0x7800), as<cudaStream_t>(kStream)};
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, "cudaFreeAsync", &fa,
       0);
  cudaFree_v3020_params f{as<void*>(0x7000)};
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, "cudaFree", &f, 0);
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
       "cudaStreamSynchronize", &sync, 700);  // a failure always

  GraphRecordSink sink;
  const auto error = trace::read_trace(r.writer().path(), sink);
  REQUIRE_MESSAGE(!error, error->to_string());
  const std::vector<std::string> expected = {
      "cudaMalloc",      "cudaGraphInstantiate", "cudaGraphLaunch",       "cudaGraphLaunch",
      "cudaGraphLaunch", "cudaGraphLaunch",      "cudaStreamSynchronize", "cudaFreeAsync",
      "cudaFree",        "cudaStreamSynchronize"};
  REQUIRE(api_names(sink) == expected);
  CHECK(sink.events[0].pointer == 0x7000u);
  CHECK(sink.events[0].size == 0x1000u);
  CHECK(sink.events[7].pointer == 0x7800u);
  CHECK_FALSE(sink.events[7].has(Field::Size));  // not the base of its range
  CHECK(sink.events[8].pointer == 0x7000u);
  CHECK(sink.events[8].size == 0x1000u);  // asked at the free's ENTER
  CHECK(sink.events[9].result == 700);
  CHECK(sink.graphs == 1);  // the walk's summary, even of an empty graph

  // Once no exec lives, stream-ordered allocations and frees outside captures are not recorded.
  cudaGraphExecDestroy_v10000_params d{exec};
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaGraphExecDestroy_v10000,
       "cudaGraphExecDestroy", &d, 0);
  void* pooled = as<void*>(0x7800);
  cudaMallocAsync_v11020_params ma{&pooled, 64, as<cudaStream_t>(kStream)};
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, "cudaMallocAsync",
       &ma, 0);
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, "cudaFreeAsync", &fa,
       0);
  GraphRecordSink after;
  REQUIRE_FALSE(trace::read_trace(r.writer().path(), after));
  CHECK(api_names(after).back() == "cudaGraphExecDestroy");
}

}  // namespace
}  // namespace capguard::interposer
