#include "interposer/recorder.h"

#include <cuda.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "interposer/decode.h"
#include "interposer/graph_policy.h"
#include "interposer/kernel_launches.h"
#include "interposer/launch_hooks.h"
#include "interposer/python_frames.h"
#include "interposer/stack.h"
#include "interposer/startup_times.h"
#include "interposer/who_ran.h"
#include "trace/errno_guard.h"

namespace capguard::interposer {
namespace {

using trace::ApiDomain;
using trace::ApiEvent;
using trace::CaptureStatus;
using trace::Field;

// Each Recorder, and each fork child's trace, gets a new generation; a thread's cached state
// (stack ids, whether it recorded) belongs to one generation and is reset when it changes.
std::atomic<uint64_t> g_generations{0};

struct ThreadState {
  int runtime_depth = 0;          // runtime API calls in progress: their driver calls are internal
  uint32_t outer_cbid = 0;        // the top-level runtime call in progress (depth > 0)
  uint32_t outer_generation = 0;  // the gate's reduction generation at its ENTER
  bool in_tool = false;           // the interposer's own driver calls are not recorded
  bool recorded = false;
  uint32_t tid = 0;
  uint32_t enter_correlation = 0;  // of the top-level call in progress: its EXIT must match
  // A top-level call given up for lost at a later ENTER: its EXIT, should it come after all, is
  // still recorded (0: none).
  uint32_t lost_correlation = 0;
  // Graph lifetime: a free's size, asked at its ENTER (before the memory goes away) for the
  // EXIT of the same top-level call (free_correlation). Kept here, not in the correlation bits.
  bool free_size_known = false;
  uint32_t free_correlation = 0;
  uint64_t free_size = 0;
  uint64_t generation = 0;
  StackCache stacks;
};
thread_local ThreadState t_state;

std::atomic<Recorder*> g_launch_recorder{nullptr};  // the recorder the kernel records go to

class InToolScope {
 public:
  InToolScope() { t_state.in_tool = true; }
  ~InToolScope() { t_state.in_tool = false; }
  InToolScope(const InToolScope&) = delete;
  InToolScope& operator=(const InToolScope&) = delete;
};

// What an ENTER callback leaves for its EXIT in CUPTI's correlationData.
namespace corr {
constexpr uint64_t kActiveAtEnter = 1u << 0;
constexpr uint64_t kStatusKnown = 1u << 1;    // status in bits 2-3, capture id from bit 11
constexpr uint64_t kModeKnown = 1u << 4;      // mode set, in bits 5-6
constexpr uint64_t kFlagsKnown = 1u << 7;     // stream flags, in bits 8-9
constexpr uint64_t kBeginCounted = 1u << 10;  // in begins_in_flight_ until the EXIT
constexpr int kStatusShift = 2, kModeShift = 5, kFlagsShift = 8, kIdShift = 11;
}  // namespace corr

uint64_t now_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint32_t current_tid() {
  if (t_state.tid == 0) t_state.tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return t_state.tid;
}

// The calling thread's state, its stack ids dropped when the trace file changed (a fork child's
// own trace) since it last recorded.
ThreadState& thread_state(uint64_t generation) {
  ThreadState& t = t_state;
  if (t.generation != generation) {
    t.stacks.clear();
    t.recorded = false;
    t.generation = generation;
  }
  return t;
}

// The thread wrote its first record to this trace: its exit will be recorded.
void mark_recorded(ThreadState& t, void (*on_thread_first_record)()) {
  if (t.recorded) return;
  t.recorded = true;
  if (on_thread_first_record != nullptr) on_thread_first_record();
}

bool is_capture_control(ApiKind kind) {
  return kind == ApiKind::BeginCapture || kind == ApiKind::EndCapture;
}

}  // namespace

Recorder::Recorder(const RecorderConfig& config)
    : config_(config), generation_(g_generations.fetch_add(1) + 1) {
  // Graph lifetime: the reduced set holds graph launches and syncs while the graph
  // watch wants them.
  if (config_.gate != nullptr) {
    config_.gate->set_also_wanted(
        [](const CallbackInfo& info, const void* self) {
          return callback_wanted_by_graph_watch(info,
                                                static_cast<const Recorder*>(self)->graph_watch_);
        },
        this);
  }
}

bool Recorder::start() {
  read_who_ran_once();  // the host goes into the trace's name
  if (!writer_.open(config_.trace_dir, static_cast<uint32_t>(getpid()),
                    static_cast<uint32_t>(getppid()), now_ns(CLOCK_REALTIME), who_ran_host())) {
    return false;
  }
  startup::mark(startup::Phase::trace_opened);
  write_preamble();
  startup::mark(startup::Phase::preamble_written);
  return true;
}

void Recorder::write_preamble() {
  static char cmdline[8192];  // only under open_mutex_ or before any callback
  size_t n = 0;
  const int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t got;
    while (n < sizeof(cmdline) - 1 &&
           (got = ::read(fd, cmdline + n, sizeof(cmdline) - 1 - n)) > 0) {
      n += static_cast<size_t>(got);
    }
    ::close(fd);
  }
  while (n > 0 && cmdline[n - 1] == '\0') --n;
  for (size_t i = 0; i < n; ++i) {
    if (cmdline[i] == '\0') cmdline[i] = ' ';
  }
  cmdline[n] = '\0';
  writer_.write_command(cmdline);
  write_who_ran(writer_);  // who ran it: host, rank variables, visible devices
  modules_.refresh(writer_);
}

void Recorder::write_attach(bool ok, const char* message) { writer_.write_attach(ok, message); }

void Recorder::write_cuda(const CudaVersions& v) {
  const char* linkage = v.linkage == RuntimeLinkage::shared    ? "shared"
                        : v.linkage == RuntimeLinkage::static_ ? "static"
                                                               : "unknown";
  writer_.write_cuda(static_cast<uint32_t>(v.runtime), static_cast<uint32_t>(v.driver),
                     static_cast<uint32_t>(v.cupti_major), v.cupti_api, linkage,
                     static_cast<uint32_t>(v.other_runtime), v.runtime_path, v.cupti_path);
}

void CUPTIAPI Recorder::switchboard(void* userdata, CUpti_CallbackDomain domain,
                                    CUpti_CallbackId cbid, const void* data) {
  if (launch_hooks::owns(domain, cbid)) return;
  hooked_switchboard(userdata, domain, cbid, data);
}

bool Recorder::on_open_origin(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                              const void* params) {
  const auto* self = static_cast<const Recorder*>(userdata);
  if (self == nullptr || !self->captures_.any()) return false;
  const CallbackInfo& info = api_info(
      domain == CUPTI_CB_DOMAIN_RUNTIME_API ? ApiDomain::Runtime : ApiDomain::Driver, cbid);
  uint64_t stream = 0;
  return is_capture_body(info, 0) && decode_stream(info, params, stream) &&
         self->captures_.contains(queryable_stream(info, stream));
}

void CUPTIAPI Recorder::hooked_switchboard(void* userdata, CUpti_CallbackDomain domain,
                                           CUpti_CallbackId cbid, const void* data) {
  auto* self = static_cast<Recorder*>(userdata);
  if (self == nullptr || data == nullptr) return;
  // CAPGUARD_STARTUP_TIMES: the timed path is out of line; without it, one predicted branch.
  if (startup::enabled()) [[unlikely]]
    return timed_switchboard(self, domain, cbid, data);
  dispatch(self, domain, cbid, data);
}

inline void Recorder::dispatch(Recorder* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                               const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    self->on_api(ApiDomain::Runtime, cbid, *static_cast<const CUpti_CallbackData*>(data));
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    self->on_api(ApiDomain::Driver, cbid, *static_cast<const CUpti_CallbackData*>(data));
  }
}

__attribute__((noinline, cold)) void Recorder::timed_switchboard(Recorder* self,
                                                                 CUpti_CallbackDomain domain,
                                                                 CUpti_CallbackId cbid,
                                                                 const void* data) {
  startup::mark(startup::Phase::first_callback);
  const startup::TimedOutermost timed(startup::Sum::callbacks);
  dispatch(self, domain, cbid, data);
}

void Recorder::on_api(ApiDomain domain, uint32_t cbid, const CUpti_CallbackData& data) {
  ThreadState& t = t_state;
  if (t.in_tool) return;
  trace::ErrnoGuard keep_errno;  // the program must not see errno changed by a CUDA call it made
  const bool enter = data.callbackSite == CUPTI_API_ENTER;
  const CallbackInfo& info = api_info(domain, cbid);
  if (!enter && config_.gate != nullptr && config_.gate->full()) {
    config_.gate->on_exit_while_full(current_tid());  // reduces once the linger has passed
  }
  // Only top-level calls count: a runtime call's own driver calls (and nested runtime calls)
  // would report the same thing twice. An EXIT whose ENTER was never seen (the subscription
  // began inside that call) is dropped without unbalancing the depth. An EXIT that never comes
  // must not leave every later call of this thread looking nested (the thread would go blind):
  // the gate switched the call's callback off while this thread was inside it, or, for a call
  // of the reduced set, delivered nothing while it switched (both domains off, the reduced set
  // back on; seen on the H100 in gate_race_worker_sync). The next ENTER after a reduction starts
  // afresh (for a reduced-set call, the next runtime ENTER: its own driver calls come inside it);
  // should the given-up call's EXIT come after all (the ENTER was nested in it), it is still
  // recorded.
  if (t.runtime_depth > 0 && enter && config_.gate != nullptr &&
      config_.gate->reduced_since(t.outer_generation) &&
      (domain == ApiDomain::Runtime ||
       !in_reduced_set(api_info(ApiDomain::Runtime, t.outer_cbid)))) {
    t.runtime_depth = 0;
    t.lost_correlation = t.enter_correlation;
  }
  if (domain == ApiDomain::Runtime) {
    if (enter) {
      if (t.runtime_depth++ > 0) return;
      t.outer_cbid = cbid;
      if (config_.gate != nullptr) t.outer_generation = config_.gate->reduction_generation();
    } else if (t.runtime_depth == 0) {
      if (t.lost_correlation == 0 || data.correlationId != t.lost_correlation) return;
      t.lost_correlation = 0;  // the given-up call's EXIT after all: recorded as top-level
    } else if (--t.runtime_depth > 0) {
      return;
    }
  } else if (t.runtime_depth > 0) {
    return;
  }
  if (enter) {
    t.enter_correlation = data.correlationId;
    on_enter(info, data);
  } else {
    on_exit(domain, info, data);
  }
}

bool Recorder::query_status(uint64_t stream, CaptureStatus& status, uint64_t& id) {
  if (stream == 0 || config_.driver.stream_get_capture_info == nullptr) return false;
  InToolScope guard;
  int raw_status = 0;
  unsigned long long raw_id = 0;
  if (config_.driver.stream_get_capture_info(reinterpret_cast<void*>(stream), &raw_status, &raw_id,
                                             nullptr, nullptr, nullptr, nullptr) != 0 ||
      raw_status < 0 || raw_status > 2) {
    return false;
  }
  status = static_cast<CaptureStatus>(raw_status);
  id = raw_id;
  return true;
}

void Recorder::on_enter(const CallbackInfo& info, const CUpti_CallbackData& data) {
  uint64_t stash = 0;
  const bool active = captures_.any();
  if (active) stash |= corr::kActiveAtEnter;
  uint64_t stream = 0;
  // The status at entry tells a stream that joins a capture during this call (an event wait)
  // from one already in it; a plain enqueue cannot join, so its status at exit suffices.
  const bool may_join = is_capture_control(info.kind) || info.has(Slot::Event);
  if ((active || is_capture_control(info.kind)) && may_join &&
      decode_stream(info, data.functionParams, stream)) {
    CaptureStatus status = CaptureStatus::None;
    uint64_t id = 0;
    if (query_status(queryable_stream(info, stream), status, id)) {
      stash |= corr::kStatusKnown | (static_cast<uint64_t>(status) << corr::kStatusShift);
      if (id < (1ull << (64 - corr::kIdShift))) stash |= id << corr::kIdShift;
    }
  }
  // The stream's flags, asked before its capture begins: cuStreamGetFlags on a capturing
  // stream invalidates the capture (seen on CUDA 13.0, driver 580). With another capture open
  // it is not asked at all; the analyzer then knows the flags from the stream's creation.
  if (info.kind == ApiKind::BeginCapture && !active && config_.driver.stream_get_flags != nullptr) {
    const uint64_t queried = queryable_stream(info, stream);
    unsigned int flags = 0;
    InToolScope guard;
    if (queried != 0 &&
        config_.driver.stream_get_flags(reinterpret_cast<void*>(queried), &flags) == 0) {
      stash |= corr::kFlagsKnown | (static_cast<uint64_t>(flags & 3) << corr::kFlagsShift);
    }
  }
  uint32_t mode = 0;
  if (info.kind == ApiKind::ExchangeMode && decode_mode_pointer(info, data.functionParams, mode)) {
    stash |= corr::kModeKnown | (static_cast<uint64_t>(mode & 3) << corr::kModeShift);
  }
  if (info.kind == ApiKind::BeginCapture) {
    startup::mark(startup::Phase::first_capture);
    try_framework_hooks();  // PyTorch has initialized its allocator before it captures
  }
  if (info.kind == ApiKind::BeginCapture && config_.gate != nullptr) {
    // Everything on before the capture begins, for this thread and all others.
    begins_in_flight_.fetch_add(1);
    stash |= corr::kBeginCounted;
    config_.gate->want_full();
  }
  // Graph lifetime: a free's size, asked before the memory goes away.
  t_state.free_size_known = false;
  if (is_free(info.memory) && config_.graph_driver.address_range != nullptr) {
    const uint64_t pointer = decode_pointer(info, data.functionParams);
    uint64_t base = 0;
    size_t size = 0;
    InToolScope guard;
    if (pointer != 0 && config_.graph_driver.address_range(&base, &size, pointer) == 0 &&
        base == pointer) {
      t_state.free_size_known = true;
      t_state.free_correlation = data.correlationId;
      t_state.free_size = size;
    }
  }
  if (data.correlationData != nullptr) *data.correlationData = stash;
}

bool Recorder::in_reduced_set(const CallbackInfo& info) const {
  return callback_needed_outside_capture(info) ||
         callback_wanted_by_graph_watch(info, graph_watch_);
}

void Recorder::reduce_callbacks_if_idle() {
  if (config_.gate == nullptr || captures_.any() || begins_in_flight_.load() != 0 || rehearsing()) {
    return;
  }
  config_.gate->allow_reduced(
      [](const void* self) {
        const auto* r = static_cast<const Recorder*>(self);
        return r->captures_.any() || r->begins_in_flight_.load() != 0 || r->rehearsing();
      },
      this, current_tid());
}

void Recorder::range_begin(uint64_t id, std::string_view domain, std::string_view name) {
  // Counted before anything is written: the range's first call must already be recorded.
  rehearsals_.fetch_add(1, std::memory_order_acq_rel);
  if (config_.gate != nullptr) config_.gate->want_full();
  if (ended_.load(std::memory_order_acquire) || !ensure_open()) return;
  writer_.write_range_begin(next_seq_.fetch_add(1, std::memory_order_relaxed),
                            now_ns(CLOCK_MONOTONIC), current_tid(), id, domain, name);
  mark_recorded(thread_state(generation_.load(std::memory_order_acquire)),
                config_.on_thread_first_record);
}

void Recorder::range_end(uint64_t id) {
  if (!ended_.load(std::memory_order_acquire) && ensure_open()) {
    writer_.write_range_end(next_seq_.fetch_add(1, std::memory_order_relaxed),
                            now_ns(CLOCK_MONOTONIC), current_tid(), id);
    mark_recorded(thread_state(generation_.load(std::memory_order_acquire)),
                  config_.on_thread_first_record);
  }
  if (rehearsals_.fetch_sub(1, std::memory_order_acq_rel) == 1) reduce_callbacks_if_idle();
}

void Recorder::on_exit(ApiDomain domain, const CallbackInfo& info, const CUpti_CallbackData& data) {
  // An EXIT whose ENTER was not delivered (its callback was enabled during the call) has no
  // stash of its own.
  const uint64_t stash =
      data.correlationData != nullptr && t_state.enter_correlation == data.correlationId
          ? *data.correlationData
          : 0;
  ApiEvent event;
  event.api = data.functionName != nullptr ? data.functionName
                                           : (info.name != nullptr ? info.name : "unknown");
  event.result = decode_result(info, data.functionReturnValue);
  event.domain = domain;
  event.set(Field::Domain);

  uint64_t stream = 0;
  const uint64_t queried =
      decode_stream(info, data.functionParams, stream) ? queryable_stream(info, stream) : 0;
  if (info.kind == ApiKind::BeginCapture && event.result == 0) captures_.add(queried);
  if (stash & corr::kBeginCounted) begins_in_flight_.fetch_sub(1);
  if (info.kind == ApiKind::StreamDestroy) captures_.remove(queried);
  const bool capturing = (stash & corr::kActiveAtEnter) || captures_.any();
  // A rehearsed range records every call as a capture would, but asks no stream's
  // status: no stream captures.
  const bool active = capturing || rehearsing();
  // Most calls that reach here are not written (outside captures while the callbacks linger
  // on, a capture's body, getters): decide before decoding anything else.
  // Outside captures the graph watch decides launches, syncs and stream-ordered allocations
  // (graph_policy.h).
  if (!records_call(info, active, event.result, decode_graph_exec(info, data.functionParams),
                    capturing && captures_.contains(queried), graph_watch_)) {
    return;
  }
  decode_params(info, data.functionParams, event.result, event);

  if (stash & corr::kStatusKnown) {
    event.status_before = static_cast<CaptureStatus>((stash >> corr::kStatusShift) & 3);
    event.set(Field::StatusBefore);
    if (const uint64_t id = stash >> corr::kIdShift; id != 0) {
      event.capture_id = id;
      event.set(Field::CaptureId);
    }
  }
  if (stash & corr::kModeKnown) {
    event.mode = static_cast<trace::CaptureMode>((stash >> corr::kModeShift) & 3);
    event.set(Field::Mode);
    uint32_t previous = 0;
    if (event.result == 0 && decode_mode_pointer(info, data.functionParams, previous) &&
        previous <= 2) {
      event.prev_mode = static_cast<trace::CaptureMode>(previous);
      event.set(Field::PrevMode);
    }
  }

  // Status after: never for a destroyed stream (its handle is gone).
  if ((capturing || is_capture_control(info.kind)) && queried != 0 &&
      info.kind != ApiKind::StreamDestroy) {
    CaptureStatus status = CaptureStatus::None;
    uint64_t id = 0;
    if (query_status(queried, status, id)) {
      event.status_after = status;
      event.set(Field::StatusAfter);
      if (id != 0) {  // CUDA gives the id of an active capture only
        event.capture_id = id;
        event.set(Field::CaptureId);
      }
    }
    if (info.kind == ApiKind::EndCapture &&
        (event.has(Field::StatusAfter) ? status == CaptureStatus::None : event.result == 0)) {
      captures_.remove(queried);
    }
  }
  if (info.kind == ApiKind::BeginCapture || info.kind == ApiKind::EndCapture ||
      info.kind == ApiKind::StreamDestroy) {
    reduce_callbacks_if_idle();
  }
  if (is_free(info.memory) && t_state.free_size_known &&
      t_state.free_correlation == data.correlationId && !event.has(Field::Size)) {
    event.size = t_state.free_size;
    event.set(Field::Size);
  }
  if (is_alloc(info.memory) && event.result == 0 && event.pointer != 0 && !event.has(Field::Size) &&
      config_.graph_driver.address_range != nullptr) {
    uint64_t base = 0;
    size_t size = 0;
    InToolScope guard;
    if (config_.graph_driver.address_range(&base, &size, event.pointer) == 0) {
      event.size = size;
      event.set(Field::Size);
    }
  }
  if (stash & corr::kFlagsKnown) {
    event.stream_flags = static_cast<uint32_t>((stash >> corr::kFlagsShift) & 3);
    event.set(Field::StreamFlags);
  }
  if (info.kind == ApiKind::EndCapture && event.result == 0 && event.has(Field::Graph) &&
      event.graph != 0 && config_.driver.graph_get_nodes) {
    InToolScope guard;
    size_t nodes = 0;
    if (config_.driver.graph_get_nodes(reinterpret_cast<void*>(event.graph), nullptr, &nodes) ==
        0) {
      event.nodes = nodes;
      event.set(Field::Nodes);
    }
  }

  // Which walked node a SetParams call re-pointed (the model forgets its old addresses).
  if (info.kind == ApiKind::GraphExecSetParams && event.result == 0) {
    uint32_t index = 0;
    const uint64_t node = decode_node(info, data.functionParams);
    if (node != 0 && graph_watch_.node_index(event.graph_exec, node, index)) {
      event.node_index = index;
      event.set(Field::NodeIndex);
    }
  }

  record(event, info.kind == ApiKind::EndCapture);
  if (info.memory != MemoryOp::None || info.kind == ApiKind::GraphInstantiate ||
      info.kind == ApiKind::GraphExecUpdate || info.kind == ApiKind::GraphExecDestroy) {
    after_graph_call(info, data, event, active);
  }
}

void Recorder::record(ApiEvent& event, bool ends_capture) {
  if (ended_.load(std::memory_order_acquire) || !ensure_open()) return;
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  ThreadState& t = thread_state(generation);
  event.seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
  event.time_ns = now_ns(CLOCK_MONOTONIC);
  event.tid = current_tid();
  uint64_t stack[trace::TraceWriter::kMaxStackDepth];
  size_t depth = 0;
  uint32_t python[trace::TraceWriter::kMaxPythonDepth];
  size_t python_depth = 0;
  bool is_new = false;
  event.stack = stack_id(generation, ends_capture, stack, depth, python, python_depth, is_new);
  if (is_new)
    writer_.write_event(event, stack, depth, python, python_depth);
  else
    writer_.write_event(event);
  startup::mark(startup::Phase::first_record);
  mark_recorded(t, config_.on_thread_first_record);
}

uint32_t Recorder::stack_id(uint64_t generation, bool ends_capture, uint64_t* stack, size_t& depth,
                            uint32_t* python, size_t& python_depth, bool& is_new) {
  ThreadState& t = thread_state(generation);
  depth = 0;
  if (config_.capture_stack != nullptr) {
    const startup::Timed timed(startup::Sum::stack_unwind);
    depth = config_.capture_stack(stack, trace::TraceWriter::kMaxStackDepth, config_.self_start,
                                  config_.self_end);
  }
  // Python programs: the calling thread's Python frames go with the native ones, and the same
  // native stack reached from another Python line is another stack.
  {
    const startup::Timed timed(startup::Sum::python_frames);
    python_depth = capture_python_frames(python, trace::TraceWriter::kMaxPythonDepth, writer_,
                                         generation, ends_capture);
  }
  uint64_t hash = depth != 0 ? hash_stack(stack, depth) : 0;
  for (size_t i = 0; i < python_depth; ++i) hash = (hash ^ python[i]) * 0x100000001b3ull;
  const bool has_stack = depth != 0 || python_depth != 0;
  uint32_t id = has_stack ? t.stacks.find(hash) : 0;
  is_new = has_stack && id == 0;
  if (!is_new) return id;
  for (size_t i = 0; i < depth; ++i) {
    if (!modules_.contains(stack[i])) {
      modules_.refresh(writer_);  // a module loaded since the last scan: write it first
      break;
    }
  }
  id = next_stack_id_.fetch_add(1, std::memory_order_relaxed);
  t.stacks.insert(hash, id);
  return id;
}

uint32_t Recorder::stack_here() {
  if (ended_.load(std::memory_order_acquire) || !ensure_open()) return 0;
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  uint64_t stack[trace::TraceWriter::kMaxStackDepth];
  size_t depth = 0;
  uint32_t python[trace::TraceWriter::kMaxPythonDepth];
  size_t python_depth = 0;
  bool is_new = false;
  const uint32_t id = stack_id(generation, false, stack, depth, python, python_depth, is_new);
  if (is_new) writer_.write_stack(id, stack, depth, python, python_depth);
  return id;
}

bool Recorder::ensure_open() {
  if (!reopen_needed_.load(std::memory_order_acquire)) return writer_.is_open();
  pthread_mutex_lock(&open_mutex_);
  if (reopen_needed_.load(std::memory_order_relaxed)) {
    if (writer_.open(config_.trace_dir, static_cast<uint32_t>(getpid()),
                     static_cast<uint32_t>(getppid()), now_ns(CLOCK_REALTIME), who_ran_host())) {
      write_preamble();
      writer_.write_attach(true, "cupti (inherited across fork)");
    }
    reopen_needed_.store(false, std::memory_order_release);
  }
  pthread_mutex_unlock(&open_mutex_);
  return writer_.is_open();
}

void Recorder::write_cupti_client(trace::CuptiClientEvent what, const char* name) {
  if (ended_.load(std::memory_order_acquire) || !ensure_open()) return;
  writer_.write_cupti_client(now_ns(CLOCK_MONOTONIC), current_tid(), what, name);
}

void Recorder::on_thread_exit() {
  ThreadState& t = t_state;
  if (!t.recorded || t.generation != generation_.load(std::memory_order_acquire) ||
      ended_.load(std::memory_order_acquire) || !writer_.is_open()) {
    return;
  }
  writer_.write_thread_exit(current_tid(), now_ns(CLOCK_MONOTONIC));
}

void Recorder::on_process_exit(int status) {
  if (ended_.exchange(true) || reopen_needed_.load() || !writer_.is_open()) return;
  if (g_launch_recorder.load(std::memory_order_acquire) == this) kernel_launches::flush_at_exit();
  writer_.write_end(now_ns(CLOCK_MONOTONIC), status);
}

void Recorder::before_fork() {
  pthread_mutex_lock(&open_mutex_);
  modules_.lock();
}

void Recorder::after_fork_parent() {
  modules_.unlock();
  pthread_mutex_unlock(&open_mutex_);
}

void Recorder::after_fork_child() {
  modules_.unlock();
  pthread_mutex_unlock(&open_mutex_);
  writer_.abandon();
  modules_.reset();
  captures_.clear();
  t_state.tid = 0;  // the child's only thread has a new id
  generation_.store(g_generations.fetch_add(1) + 1, std::memory_order_release);
  reopen_needed_.store(true, std::memory_order_release);
}

// Graph lifetime ------------------------------------------------------------------

void Recorder::after_graph_call(const CallbackInfo& info, const CUpti_CallbackData& data,
                                const ApiEvent& event, bool active) {
  InToolScope guard;
  const bool launches_before = graph_watch_.launches_wanted();
  const bool syncs_before = graph_watch_.syncs_wanted();
  note_graph_call(info, event, graph_watch_);
  const bool can_write = !ended_.load(std::memory_order_acquire) && writer_.is_open();
  const bool walk =
      event.result == 0 && event.graph_exec != 0 &&
      (info.kind == ApiKind::GraphInstantiate || info.kind == ApiKind::GraphExecUpdate);
  if (walk && can_write) {  // the exec (now) holds the graph's addresses
    try_framework_hooks();
    // Only a tracker asks which exec holds what: a program without one pays nothing for it.
    const bool hold = framework_hook_attached_.load(std::memory_order_relaxed);
    struct Walked {
      Recorder* self;
      uint64_t exec;
      bool hold;
    } context{this, event.graph_exec, hold};
    TopLevelNodes top_level;
    const startup::Timed timed(startup::Sum::graph_walk);
    walk_graph(
        config_.graph_driver, writer_, event.graph_exec, event.graph,
        [](void* ctx, uint64_t base, uint64_t, uint64_t address) {
          auto* c = static_cast<Walked*>(ctx);
          if (base != 0) c->self->graph_watch_.add_base(c->exec, base);
          if (c->hold) c->self->held_.add(c->exec, address);
        },
        &context, WalkLimits{}, &top_level);
    graph_watch_.set_nodes(event.graph_exec, top_level.pairs, top_level.count);
    if (hold) publish_held(event.graph_exec);
  }
  if (info.kind == ApiKind::GraphExecDestroy && event.result == 0 && event.graph_exec != 0 &&
      framework_hook_attached_.load(std::memory_order_relaxed))
    remove_held(event.graph_exec);
  if (info.kind == ApiKind::GraphExecUpdate && event.result != 0 && can_write) {
    const auto* result_info = static_cast<const CUgraphExecUpdateResultInfo*>(
        decode_update_info(info, data.functionParams));
    if (result_info != nullptr) {
      trace::GraphUpdateRecord update;
      update.seq = event.seq;
      update.exec = event.graph_exec;
      update.result = static_cast<uint32_t>(result_info->result);
      const char* name = nullptr;
      uint32_t type = 0;
      if (describe_node(config_.graph_driver, result_info->errorNode, type, name)) {
        update.error_type = type;
        if (name != nullptr) update.name = name;
      }
      char buffer[trace::kMaxGraphNameLength * 3 + 128];
      const size_t n = trace::format_graph_update(buffer, sizeof buffer, update);
      if (n != 0) writer_.write_record(buffer, n);
    }
  }
  // The watch wants launch or sync callbacks it did not: outside captures, the reduced set is
  // applied again with them (switching on only; the gate switches off all at once, when it
  // reduces after a capture).
  if (!active && config_.gate != nullptr &&
      ((!launches_before && graph_watch_.launches_wanted()) ||
       (!syncs_before && graph_watch_.syncs_wanted()))) {
    config_.gate->reapply_reduced_set();
  }
}

namespace {
std::atomic<Recorder*> g_hooked_recorder{nullptr};  // the recorder the allocators' hooks feed
}  // namespace

void Recorder::try_framework_hooks() {
  if (!config_.framework_hooks || torch_hook_said_.load(std::memory_order_relaxed)) return;
  g_hooked_recorder.store(this, std::memory_order_release);
  const torch_allocator::State state =
      torch_allocator::try_attach([](const torch_allocator::AllocatorEntry& entry) {
        if (Recorder* self = g_hooked_recorder.load(std::memory_order_acquire))
          self->on_allocator_entry(entry);
      });
  if (state != torch_allocator::State::Attached && state != torch_allocator::State::Refused) return;
  if (torch_hook_said_.exchange(true)) return;
  if (state == torch_allocator::State::Attached) framework_hook_attached_.store(true);
  // The trace says whether PyTorch's frees are seen (the report's "what was seen").
  ApiEvent event;
  event.api = trace::framework_memory(trace::FrameworkMemory::TorchHook).api;
  event.result = state == torch_allocator::State::Attached
                     ? 0
                     : static_cast<int32_t>(torch_allocator::refusal());
  record(event);
}

void Recorder::on_allocator_entry(const torch_allocator::AllocatorEntry& entry) {
  record_framework_block(entry.op == trace::FrameworkMemoryOp::Alloc
                             ? trace::FrameworkMemory::TorchAlloc
                             : trace::FrameworkMemory::TorchFree,
                         entry.address, entry.size, &entry.stream);
}

bool Recorder::attach_python_pool(trace::FrameworkMemory attach) {
  if (!config_.framework_hooks || ended_.load(std::memory_order_acquire)) return false;
  framework_hook_attached_.store(true);
  if (python_pool_said_.exchange(true)) return true;
  InToolScope guard;
  ApiEvent event;
  event.api = trace::framework_memory(attach).api;
  event.result = 0;
  record(event);
  return true;
}

void Recorder::on_python_pool_entry(trace::FrameworkMemory name, uint64_t address, uint64_t size) {
  record_framework_block(name, address, size, nullptr);
}

void Recorder::record_framework_block(trace::FrameworkMemory name, uint64_t address, uint64_t size,
                                      const uint64_t* stream) {
  if (!held_.any() || ended_.load(std::memory_order_acquire)) return;
  bool newly_watched = false;
  if (!records_framework_block(held_, graph_watch_, address, size, newly_watched)) return;
  InToolScope guard;
  ApiEvent event;
  event.api = trace::framework_memory(name).api;
  event.pointer = address;
  event.size = size;
  event.set(trace::Field::Pointer);
  event.set(trace::Field::Size);
  if (stream != nullptr) {  // CuPy's hook does not say it
    event.stream = *stream;
    event.set(trace::Field::Stream);
  }
  record(event);
  if (!newly_watched) return;
  // Its next launches are recorded: CUPTI back if it was let go, then the launch callbacks on.
  if (config_.needs_cupti != nullptr) config_.needs_cupti();
  if (config_.gate != nullptr) config_.gate->reapply_reduced_set();
}

std::atomic<int32_t> g_memory_held{0};
static_assert(sizeof(std::atomic<int32_t>) == sizeof(int32_t) &&
                  std::atomic<int32_t>::is_always_lock_free,
              "Python reads g_memory_held as a plain int32");

void Recorder::publish_held(uint64_t exec) {
  held_.publish(exec);
  g_memory_held.store(held_.any() ? 1 : 0, std::memory_order_relaxed);
}

void Recorder::remove_held(uint64_t exec) {
  held_.remove(exec);
  g_memory_held.store(held_.any() ? 1 : 0, std::memory_order_relaxed);
}

// Graph coverage and frozen values ----------------------------------------------------------

void Recorder::listen_to_kernel_launches(bool launches_seen) {
  g_launch_recorder.store(this, std::memory_order_release);
  kernel_launches::Listener listener;
  listener.context = this;
  listener.capturing = [](void* self) {
    auto* r = static_cast<Recorder*>(self);
    return r->captures_.any() || r->begins_in_flight_.load(std::memory_order_relaxed) != 0;
  };
  listener.stack_here = [](void* self) {
    InToolScope guard;  // unwinding and Python frames make no CUDA call, but stay unrecorded
    return static_cast<Recorder*>(self)->stack_here();
  };
  listener.next_seq = [](void* self) {
    return static_cast<Recorder*>(self)->next_seq_.fetch_add(1, std::memory_order_relaxed);
  };
  listener.tid = [] { return current_tid(); };
  listener.now_ns = [] { return now_ns(CLOCK_MONOTONIC); };
  listener.writer = &writer_;
  listener.param_info = [](void* function, size_t index, size_t* offset, size_t* size) {
    Recorder* r = g_launch_recorder.load(std::memory_order_acquire);
    if (r == nullptr) return -1;
    InToolScope guard;
    return launched_param_info(r->config_.graph_driver, function, index, offset, size);
  };
  listener.function_name = [](const char** name, void* function) {
    Recorder* r = g_launch_recorder.load(std::memory_order_acquire);
    if (r == nullptr) return -1;
    InToolScope guard;
    return launched_name(r->config_.graph_driver, name, function);
  };
  listener.function_of_kernel = [](void** function, void* kernel) {
    Recorder* r = g_launch_recorder.load(std::memory_order_acquire);
    if (r == nullptr || r->config_.graph_driver.kernel_function == nullptr) return -1;
    InToolScope guard;
    return r->config_.graph_driver.kernel_function(function, kernel);
  };
  listener.launches_seen = launches_seen;
  kernel_launches::listen(listener);
}

}  // namespace capguard::interposer
