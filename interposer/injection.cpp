// How libcapguard.so gets into the program and out again: the LD_PRELOAD constructor, the
// CUDA_INJECTION64_PATH entry point, fork, thread exit and process exit. Inactive unless
// CAPGUARD_TRACE_DIR is set.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "interposer/attach_guards.h"
#include "interposer/cupti_loader.h"
#include "interposer/cupti_share.h"
#include "interposer/driver.h"
#include "interposer/graph_walker.h"
#include "interposer/idle_detach.h"
#include "interposer/launch_hooks.h"
#include "interposer/nvtx_ranges.h"
#include "interposer/recorder.h"
#include "interposer/stack.h"
#include "interposer/startup_times.h"

namespace capguard::interposer {
namespace {

char g_trace_dir[4096];
char g_self_path[4096];
uint64_t g_self_start = 0, g_self_end = 0;
bool g_enabled = false;            // CAPGUARD_TRACE_DIR was set when the library loaded
const char* g_conflict = nullptr;  // why injection cannot work, found by the constructor
pthread_key_t g_thread_key;
std::atomic<Recorder*> g_recorder{nullptr};
alignas(Recorder) unsigned char g_recorder_storage[sizeof(Recorder)];
CallbackGate g_gate;
}  // namespace

bool launch_hooks_reach_program();  // driver_exports.cpp

Recorder* live_recorder() { return g_recorder.load(std::memory_order_acquire); }

namespace {
std::atomic<bool> g_python_pool_requested{false};  // the recorder attaches it when it starts

bool framework_hooks_enabled() {
  const char* hooks = getenv("CAPGUARD_FRAMEWORK_HOOKS");
  return hooks == nullptr || strcmp(hooks, "0") != 0;
}
}  // namespace

// CuPy is imported before it initializes CUDA: the request waits for the recorder.
bool request_python_pool_hook() {
  if (!g_enabled || !framework_hooks_enabled()) return false;
  g_python_pool_requested.store(true, std::memory_order_release);
  if (Recorder* r = live_recorder()) r->attach_python_pool(trace::FrameworkMemory::CupyHook);
  return true;
}

namespace {

void marker() {}

// The address range of this library's own code, to leave its frames out of stacks.
void find_self() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&marker), &info) == 0) return;
  if (info.dli_fname != nullptr) snprintf(g_self_path, sizeof(g_self_path), "%s", info.dli_fname);
  dl_iterate_phdr(
      [](dl_phdr_info* object, size_t, void* base) {
        if (reinterpret_cast<void*>(object->dlpi_addr) != base) return 0;
        for (ElfW(Half) i = 0; i < object->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = object->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
          g_self_start = object->dlpi_addr + ph.p_vaddr;
          g_self_end = g_self_start + ph.p_memsz;
        }
        return 1;
      },
      info.dli_fbase);
}

bool same_file(const char* a, const char* b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void mark_thread_recorded() { pthread_setspecific(g_thread_key, reinterpret_cast<void*>(1)); }

void on_thread_exit(void*) {
  if (Recorder* r = g_recorder.load(std::memory_order_acquire)) r->on_thread_exit();
}

CudaVersions g_versions;  // what attach found
bool g_versions_written = false;

// A runtime of another major loaded after attach (a CUDA 12 library dlopened by a CUDA 13
// program) is named at exit: the trace's last 'w' record is the one the report shows.
void note_runtimes_loaded_since_attach(Recorder& recorder) {
  if (!g_versions_written || g_versions.other_runtime != 0) return;
  CudaVersions now;
  probe_loaded_runtimes(now);
  for (int runtime : {now.runtime, now.other_runtime}) {
    if (runtime != 0 && runtime / 1000 != g_versions.runtime / 1000) {
      if (g_versions.runtime == 0) {
        g_versions.runtime = runtime;
        g_versions.linkage = RuntimeLinkage::shared;
      } else {
        g_versions.other_runtime = runtime;
      }
      recorder.write_cuda(g_versions);
      return;
    }
  }
}

void on_process_exit(int status, void*) {
  if (Recorder* r = g_recorder.load(std::memory_order_acquire)) {
    note_runtimes_loaded_since_attach(*r);
    // Before the end record: a lost subscription is said in the trace. Detached while idle,
    // capguard has none to lose.
    if (attach_guards::state().load() == attach_guards::State::Attached) share_check_alive();
    idle_detach::say_at_exit();
    r->on_process_exit(status);
  }
  if (startup::enabled()) {  // CAPGUARD_STARTUP_TIMES: the table, beside the trace
    startup::mark(startup::Phase::exit);
    startup::write_table(g_trace_dir, static_cast<uint32_t>(getpid()));
  }
}

void note_cupti_client(trace::CuptiClientEvent what, const char* name) {
  if (Recorder* r = g_recorder.load(std::memory_order_acquire)) r->write_cupti_client(what, name);
}

void before_fork() {
  if (Recorder* r = g_recorder.load(std::memory_order_acquire)) r->before_fork();
}
void after_fork_parent() {
  if (Recorder* r = g_recorder.load(std::memory_order_acquire)) r->after_fork_parent();
}
void after_fork_child() {
  startup::reset_after_fork();
  if (Recorder* r = g_recorder.load(std::memory_order_acquire)) r->after_fork_child();
}

Recorder* make_recorder() {
  RecorderConfig config;
  config.trace_dir = g_trace_dir;
  load_driver_api(config.driver);
  load_graph_driver(config.graph_driver);  // graph lifetime
  startup::mark(startup::Phase::driver_symbols);
  config.capture_stack = &capture_stack;
  config.self_start = g_self_start;
  config.self_end = g_self_end;
  config.on_thread_first_record = &mark_thread_recorded;
  config.gate = &g_gate;
  config.needs_cupti = [] { idle_detach::ensure_attached(); };
  // CAPGUARD_FRAMEWORK_HOOKS=0: no tracker in PyTorch's allocator (torch_allocator.h; to compare).
  config.framework_hooks = framework_hooks_enabled();
  // Static storage, never destroyed: threads may still record while the process exits.
  return new (g_recorder_storage) Recorder(config);
}

// Launches reach the recorder from launch_hooks.h instead of CUPTI where every way to them passes
// through this library (LD_PRELOAD put it first, nothing looked them up before its constructor).
bool hand_launches_to_hooks() {
  if (!launch_hooks::enabled() || !launch_hooks_reach_program() || launch_hooks::unwrapped() != 0)
    return false;
  Recorder* recorder = g_recorder.load(std::memory_order_acquire);
  launch_hooks::deliver_to(&Recorder::hooked_switchboard, recorder, &Recorder::on_open_origin);
  launch_hooks::set_owning(true);
  CallbackGate::HandOff hand_off;
  hand_off.runtime_ids = launch_hooks::runtime_callback_ids(hand_off.runtime_count);
  hand_off.driver_ids = launch_hooks::driver_callback_ids(hand_off.driver_count);
  hand_off.delivering = &launch_hooks::delivering();
  hand_off.given_back = [] { launch_hooks::set_owning(false); };
  g_gate.hand_off(hand_off);
  return true;
}

// CUPTI detached while idle (idle_detach.h): what may stop it, and how it goes and comes back.
CuptiApi g_cupti_api;

const char* why_not_detach() {
  Recorder* r = g_recorder.load(std::memory_order_acquire);
  if (r == nullptr) return "not attached";
  if (g_gate.full()) return "every callback is on (a capture, or its linger)";
  if (r->captures().any() || r->rehearsing()) return "a capture or rehearsal is open";
  const GraphWatch& watch = r->graph_watch();
  if (watch.launches_wanted()) return "the graph watch wants launches";
  if (watch.launches_pending()) return "a recorded launch awaits its sync";
  if (share_program_uses_cupti()) return "the program uses CUPTI itself";
  if (launch_hooks::unwrapped() != 0 || attach_guards::unwrapped() != 0)
    return "an entry point reached the program unwrapped";
  return nullptr;
}

bool detach_now() {
  return detach_cupti(&Recorder::switchboard, g_recorder.load(), g_cupti_api, g_gate);
}

std::atomic<bool> g_sticky_error_detached{false};  // CUDA is unusable: no attach will succeed

bool attach_again() {
  Recorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (reattach_cupti(&Recorder::switchboard, recorder, g_cupti_api, g_gate)) return true;
  // After a sticky error every CUDA call fails: nothing is missed that the program could do.
  if (!g_sticky_error_detached.load()) {
    recorder->write_attach(false,
                           "cuptiSubscribe failed when attaching again after an idle detach");
  }
  return false;
}

// A synchronize that failed while detached, delivered after attaching again as CUPTI's callback
// would have delivered it: the graph watch records a failed sync (a replay's sticky error).
void deliver_failed_sync(int guard, bool runtime_named, uintptr_t arg, int result) {
  struct SyncGuard {
    int guard;
    uint32_t driver_cbid, runtime_cbid;
    const char *driver_name, *runtime_name;
  };
  static constexpr SyncGuard kSyncs[] = {
#define CAPGUARD_ATTACH_GUARD(exported, resolver, per_thread)
#define CAPGUARD_HEARTBEAT_GUARD(exported, resolver, per_thread)
#define CAPGUARD_SYNC_GUARD(exported, resolver, per_thread, runtime, runtime_cupti) \
  {attach_guards::k_##exported, CUPTI_DRIVER_TRACE_CBID_##exported,                 \
   CUPTI_RUNTIME_TRACE_CBID_##runtime_cupti, #exported, #runtime},
#include "interposer/attach_guards.def"
  };
  if (trace::is_sticky_error(result)) g_sticky_error_detached.store(true);
  for (const SyncGuard& sync : kSyncs) {
    if (sync.guard != guard) continue;
    const trace::ApiDomain domain =
        runtime_named ? trace::ApiDomain::Runtime : trace::ApiDomain::Driver;
    const uint32_t cbid = runtime_named ? sync.runtime_cbid : sync.driver_cbid;
    // A synchronize's params are its one handle (stream, event, context), or it has none.
    const uintptr_t params[1] = {arg};
    launch_hooks::deliver_made_call(
        runtime_named ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, cbid,
        runtime_named ? sync.runtime_name : sync.driver_name,
        api_info(domain, cbid).has_params ? params : nullptr, result);
    return;
  }
}

void start_idle_detach(const CudaVersions& versions, bool all_callbacks) {
  idle_detach::Config config;
  const bool configured = idle_detach::configure_from_environment(config);
  // Before CUPTI 13 (12.6 by NVIDIA's notes), tearing CUPTI down with graphs alive crashed.
  const char* never = !configured                 ? "CAPGUARD_DETACH_IDLE_MS says off"
                      : all_callbacks             ? "CAPGUARD_CALLBACKS=all"
                      : versions.cupti_major < 13 ? "CUPTI older than 13"
                      : !launch_hooks::enabled() || !launch_hooks_reach_program()
                          ? "the launch hooks do not reach the program"
                      : !rehearse_patterns().empty() ? "a range is rehearsed"
                                                     : nullptr;
  if (never != nullptr) {
    if (config.log) fprintf(stderr, "capguard: CUPTI is never detached here: %s\n", never);
    return;
  }
  config.why_not = &why_not_detach;
  config.activity = [] { return g_recorder.load(std::memory_order_acquire)->records_written(); };
  config.detach = &detach_now;
  config.attach = &attach_again;
  config.sync_failed = &deliver_failed_sync;
  idle_detach::start(config);
}

int initialize_once() {
  Recorder* recorder = make_recorder();
  if (!recorder->start()) return 1;  // the trace cannot be written: stay passive
  g_recorder.store(recorder, std::memory_order_release);  // from here on: 'x' and 'z'
  if (g_conflict != nullptr) {
    recorder->write_attach(false, g_conflict);
    return 1;
  }
  char why[2048];
  CuptiApi& api = g_cupti_api;
  CudaVersions& versions = g_versions;
  // CAPGUARD_CALLBACKS=all keeps every callback on outside captures too (the behaviour before
  // the reduced set, for comparing traces).
  const char* callbacks = getenv("CAPGUARD_CALLBACKS");
  const bool all = callbacks != nullptr && strcmp(callbacks, "all") == 0;
  // Graph coverage counts eager launches in the hooks: without them it can say only that.
  recorder->listen_to_kernel_launches(hand_launches_to_hooks());
  const bool attached =
      attach_cupti(&Recorder::switchboard, recorder, api, g_gate, all, versions, why, sizeof(why));
  recorder->write_cuda(versions);
  g_versions_written = true;
  if (!attached) {
    launch_hooks::set_owning(false);
    recorder->write_attach(false, why);
    return 1;
  }
  recorder->write_attach(true, "cupti");
  if (g_python_pool_requested.load(std::memory_order_acquire))
    recorder->attach_python_pool(trace::FrameworkMemory::CupyHook);
  start_idle_detach(versions, all);
  // Which --rehearse globs this process was given: a region that never ran is named offline.
  std::string_view patterns = rehearse_patterns();
  while (!patterns.empty()) {
    const size_t end = std::min(patterns.find('\n'), patterns.size());
    if (end != 0) recorder->write_rehearse(patterns.substr(0, end));
    patterns.remove_prefix(std::min(end + 1, patterns.size()));
  }
  return 1;
}

// From cuInit (InitializeInjection), or earlier from the program's own cuptiSubscribe
// (cupti_share.h), whichever comes first. A second thread waits until capguard has subscribed,
// so that its client cannot take CUPTI first; the subscribing thread itself may come back
// (CUPTI initializing CUDA from inside cuptiSubscribe) and must not wait for itself.
std::atomic<int> g_init_state{0};  // 0: not begun, 1: subscribing, 2: done
pthread_t g_init_thread;

int initialize() {
  if (!g_enabled) return 1;
  int state = 0;
  if (!g_init_state.compare_exchange_strong(state, 1)) {
    if (state == 1 && !pthread_equal(g_init_thread, pthread_self())) {
      while (g_init_state.load(std::memory_order_acquire) == 1) sched_yield();
    }
    return 1;
  }
  g_init_thread = pthread_self();
  startup::mark(startup::Phase::init_begin);
  initialize_once();
  startup::mark(startup::Phase::init_done);
  g_init_state.store(2, std::memory_order_release);
  return 1;
}

void attach_now() { initialize(); }

// Capture rehearsal: a rehearsed range may open before the program's first cuInit
// (a Python step whose first CUDA call is inside it): capguard attaches then, as it does for the
// program's own cuptiSubscribe.
void rehearsed_range_begin(uint64_t id, std::string_view domain, std::string_view name) {
  if (g_recorder.load(std::memory_order_acquire) == nullptr) initialize();
  if (Recorder* r = g_recorder.load(std::memory_order_acquire)) r->range_begin(id, domain, name);
}
void rehearsed_range_end(uint64_t id) {
  if (Recorder* r = g_recorder.load(std::memory_order_acquire)) r->range_end(id);
}

// Cheap setup only: nothing here loads CUDA.
__attribute__((constructor)) void on_load() {
  ShareHooks hooks;  // the program's CUPTI calls come here whether capguard is active or not
  hooks.note = &note_cupti_client;
  const char* dir = getenv("CAPGUARD_TRACE_DIR");
  if (dir != nullptr && dir[0] != '\0') {
    hooks.attach_now = &attach_now;
    hooks.attach_if_detached = &idle_detach::ensure_attached;
  }
  share_set_hooks(hooks);
  if (dir == nullptr || dir[0] == '\0') return;
  startup::configure_from_environment();
  if (startup::enabled()) {
    startup::mark(startup::Phase::constructor);
    startup::mark_at(startup::Phase::process_start, startup::process_start_ns());
  }
  snprintf(g_trace_dir, sizeof(g_trace_dir), "%s", dir);
  find_self();
  g_enabled = true;
  // CAPGUARD_LAUNCH_HOOKS=0: launches stay on CUPTI's callbacks (to compare).
  const char* launch_hooks_setting = getenv("CAPGUARD_LAUNCH_HOOKS");
  if (launch_hooks_setting == nullptr || strcmp(launch_hooks_setting, "0") != 0) {
    launch_hooks::enable(g_self_start, g_self_end);
  }
  pthread_key_create(&g_thread_key, &on_thread_exit);
  pthread_atfork(&before_fork, &after_fork_parent, &after_fork_child);
  on_exit(&on_process_exit, nullptr);
  // NVTX calls InitializeInjectionNvtx2 only where `capguard run --rehearse` named this library
  // in NVTX_INJECTION64_PATH.
  RangeHooks ranges;
  ranges.begin = &rehearsed_range_begin;
  ranges.end = &rehearsed_range_end;
  set_rehearse(getenv("CAPGUARD_REHEARSE"), ranges);
  // cuInit calls InitializeInjection from the library this variable names.
  const char* injection = getenv("CUDA_INJECTION64_PATH");
  if (injection == nullptr || injection[0] == '\0') {
    if (g_self_path[0] != '\0') setenv("CUDA_INJECTION64_PATH", g_self_path, 1);
  } else if (g_self_path[0] != '\0' && !same_file(injection, g_self_path)) {
    // Another tool owns the injection hook, so cuInit will never call us: say so now.
    static char conflict[4200];
    snprintf(conflict, sizeof(conflict),
             "CUDA_INJECTION64_PATH names another library (%s): another CUDA tool is injected "
             "into this program",
             injection);
    g_conflict = conflict;
    initialize();
  }
  startup::mark(startup::Phase::constructor_done);
}

}  // namespace
}  // namespace capguard::interposer

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  capguard::interposer::startup::mark(capguard::interposer::startup::Phase::injection_entry);
  return capguard::interposer::initialize();
}

// NVTX's injection entry point (nvtx3/nvtxDetail/nvtxInit.h): nonzero when the callbacks are
// in place. Inactive, NVTX's calls stay no-ops.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* (*get_export_table)(uint32_t)) {
  if (!capguard::interposer::g_enabled) return 0;
  return capguard::interposer::install_nvtx_callbacks(get_export_table) ? 1 : 0;
}
