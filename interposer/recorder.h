// The switchboard: turns CUPTI API callbacks into trace events. One static callback receives
// every runtime and driver API callback and dispatches with plain branches; the hot path takes
// no lock and allocates nothing. Everything CUDA-facing comes through RecorderConfig, so unit
// tests drive the switchboard with fabricated callbacks and a fake driver.
#pragma once

#include <cupti.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "interposer/api_table.h"
#include "interposer/callback_gate.h"
#include "interposer/capture_set.h"
#include "interposer/cuda_versions.h"
#include "interposer/driver.h"
#include "interposer/graph_walker.h"
#include "interposer/graph_watch.h"
#include "interposer/held_memory.h"
#include "interposer/modules.h"
#include "interposer/torch_allocator.h"
#include "trace/writer.h"

namespace capguard::interposer {

// Nonzero while a live exec holds addresses for the framework hooks (held_memory.h). Its address
// is exported (python_pool_exports.cpp), so that a Python hook asks capguard about a free only
// then, at the cost of reading one integer otherwise.
extern std::atomic<int32_t> g_memory_held;

struct RecorderConfig {
  const char* trace_dir = nullptr;
  DriverApi driver;
  size_t (*capture_stack)(uint64_t* out, size_t capacity, uint64_t skip_start,
                          uint64_t skip_end) = nullptr;
  uint64_t self_start = 0, self_end = 0;       // the interposer's own code: left out of stacks
  void (*on_thread_first_record)() = nullptr;  // arms the thread-exit record
  CallbackGate* gate = nullptr;  // null: every callback stays enabled (the unit tests)
  GraphDriver graph_driver;      // graph lifetime: the graph walk's driver calls
  // A framework free hit a live exec outside any CUDA call: its launches must be seen from now
  // on, so CUPTI is attached again if the idle detach let it go (idle_detach.h).
  void (*needs_cupti)() = nullptr;
  bool framework_hooks = true;  // the allocators' trace hooks (torch_allocator.h)
};

// capguard's Python start-up module asks for CuPy's pool (python_pool_exports.cpp): false when
// capguard is not recording here or CAPGUARD_FRAMEWORK_HOOKS=0. The recorder, now or once cuInit
// starts it, writes the hook's attach event and keeps the held addresses (injection.cpp).
bool request_python_pool_hook();
class Recorder;
Recorder* live_recorder();  // the process's recorder once cuInit started it, else null

class Recorder {
 public:
  explicit Recorder(const RecorderConfig& config);
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Opens the trace and writes the command line and the module map. False if it cannot open.
  bool start();
  void write_attach(bool ok, const char* message);
  void write_cuda(const CudaVersions& versions);  // the 'w' record
  void write_rehearse(std::string_view glob) { writer_.write_rehearse(glob); }
  // The program's own CUPTI client (cupti_share.h) did `what`.
  void write_cupti_client(trace::CuptiClientEvent what, const char* name);

  // The CUPTI callback (userdata is the Recorder).
  static void CUPTIAPI switchboard(void* userdata, CUpti_CallbackDomain domain,
                                   CUpti_CallbackId cbid, const void* data);
  // The same for the launches launch_hooks.h delivers in CUPTI's stead (CUPTI's own callbacks
  // for them, should one come while a domain is switched on whole, are dropped by switchboard).
  static void CUPTIAPI hooked_switchboard(void* userdata, CUpti_CallbackDomain domain,
                                          CUpti_CallbackId cbid, const void* data);
  // Whether a call goes to the origin stream of an open capture, where on_exit drops it when it
  // succeeds and only adds work (records_call's capture body): the launch hooks then deliver
  // nothing for it.
  static bool on_open_origin(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const void* params);
  void on_api(trace::ApiDomain domain, uint32_t cbid, const CUpti_CallbackData& data);

  // Capture rehearsal: a rehearsed NVTX range opened or closed (nvtx_ranges.h).
  // While one is open, every call of every thread is recorded as during a capture.
  void range_begin(uint64_t id, std::string_view domain, std::string_view name);
  void range_end(uint64_t id);
  bool rehearsing() const { return rehearsals_.load(std::memory_order_acquire) > 0; }

  void on_thread_exit();             // 'x' for a thread that recorded something
  void on_process_exit(int status);  // 'z'; nothing is recorded after it
  void before_fork();
  void after_fork_parent();
  void after_fork_child();  // stop writing the parent's trace; open an own one when needed

  const trace::TraceWriter& writer() const { return writer_; }
  // Records written so far (the next seq): the idle detach's measure of activity.
  uint64_t records_written() const { return next_seq_.load(std::memory_order_relaxed); }
  const CaptureSet& captures() const { return captures_; }
  const GraphWatch& graph_watch() const { return graph_watch_; }

  // A framework allocator's entry (torch_allocator.h): recorded, with its stack, when its block
  // holds an address a live exec holds; that exec's launches are recorded from then on.
  void on_allocator_entry(const torch_allocator::AllocatorEntry& entry);
  // CuPy's pool, from capguard's Python start-up module (python_pool_exports.cpp): `attach`
  // writes the hook's attach event and keeps held_ from then on (false when the hooks are off:
  // the module then installs nothing); `entry` is judged as a tracker's is.
  bool attach_python_pool(trace::FrameworkMemory attach);  // once; false if hooks are off
  void on_python_pool_entry(trace::FrameworkMemory name, uint64_t address, uint64_t size);

  // Graph coverage and frozen values (kernel_launches.h): hands the launch hooks what they
  // write with. `launches_seen`: the hooks own the launches (else the coverage is 'blind').
  void listen_to_kernel_launches(bool launches_seen);
  // The calling thread's stack id, its 's' record written when new (0: none).
  uint32_t stack_here();

 private:
  static void dispatch(Recorder* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                       const void* data);
  // The switchboard under CAPGUARD_STARTUP_TIMES (startup_times.h): stamps and sums the callback.
  static void timed_switchboard(Recorder* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void* data);
  void on_enter(const CallbackInfo& info, const CUpti_CallbackData& data);
  void on_exit(trace::ApiDomain domain, const CallbackInfo& info, const CUpti_CallbackData& data);
  bool query_status(uint64_t stream, trace::CaptureStatus& status, uint64_t& id);
  // `ends_capture`: a call ending a capture, whose Python stack also says which exception the
  // thread was handling, if any (python_frames.h).
  void record(trace::ApiEvent& event, bool ends_capture = false);
  // The stack of the calling thread: its id, and whether it is new (then the caller writes it).
  uint32_t stack_id(uint64_t generation, bool ends_capture, uint64_t* stack, size_t& depth,
                    uint32_t* python, size_t& python_depth, bool& is_new);
  void reduce_callbacks_if_idle();
  // Graph lifetime.
  bool in_reduced_set(const CallbackInfo& info) const;
  void after_graph_call(const CallbackInfo& info, const CUpti_CallbackData& data,
                        const trace::ApiEvent& event, bool active);
  bool ensure_open();
  void write_preamble();

  RecorderConfig config_;
  trace::TraceWriter writer_;
  ModuleMap modules_;
  CaptureSet captures_;
  GraphWatch graph_watch_;
  HeldMemory held_;
  void try_framework_hooks();  // never with a lock of capguard's held
  // Records `name`'s entry when its block holds memory a live exec holds.
  void record_framework_block(trace::FrameworkMemory name, uint64_t address, uint64_t size,
                              const uint64_t* stream);
  void publish_held(uint64_t exec);  // held_.publish, and says so to the Python hooks
  void remove_held(uint64_t exec);
  std::atomic<bool> torch_hook_said_{false};          // its attach event is written
  std::atomic<bool> framework_hook_attached_{false};  // held_ is kept from then on
  std::atomic<bool> python_pool_said_{false};         // CuPy's attach event is written
  std::atomic<uint64_t> next_seq_{1};
  std::atomic<uint32_t> next_stack_id_{1};
  std::atomic<uint64_t> generation_;  // changes per trace file; thread caches follow it
  std::atomic<bool> reopen_needed_{false};
  std::atomic<bool> ended_{false};
  std::atomic<int> begins_in_flight_{0};  // BeginCapture calls between their ENTER and EXIT
  std::atomic<int> rehearsals_{0};        // rehearsed ranges open
  pthread_mutex_t open_mutex_ = PTHREAD_MUTEX_INITIALIZER;
};

}  // namespace capguard::interposer
