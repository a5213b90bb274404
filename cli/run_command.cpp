// capguard run -- PROGRAM [ARGS...]: runs the program with libcapguard.so injected (see the
// environment contract in ARCHITECTURE.md), then analyzes the traces it wrote.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/preflight.h"
#include "cli/process.h"
#include "cli/trace_ending.h"
#include "model/who_ran.h"
#include "trace/process_clock.h"
#include "trace/writer.h"

namespace capguard::cli {
namespace {

namespace fs = std::filesystem;

std::string directory_of_executable() {
  char path[PATH_MAX] = {};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  return fs::path(std::string(path, static_cast<size_t>(n))).parent_path().string();
}

// libcapguard.so sits next to capguard in the build tree and in ../lib/capguard/ once installed
// (../lib/ in installs before 0.1.0's packaging).
std::string find_interposer() {
  const fs::path bin = directory_of_executable();
  for (const fs::path& candidate :
       {bin / "libcapguard.so", bin / ".." / "lib" / "capguard" / "libcapguard.so",
        bin / ".." / "lib" / "libcapguard.so"}) {
    std::error_code error;
    if (fs::is_regular_file(candidate, error)) return fs::canonical(candidate, error).string();
  }
  return {};
}

// The folder of capguard's Python start-up module, beside libcapguard.so (build tree and
// installs alike); empty when absent or when CAPGUARD_FRAMEWORK_HOOKS=0 turns the hooks off.
std::string python_startup_dir(const std::string& interposer) {
  const char* hooks = std::getenv("CAPGUARD_FRAMEWORK_HOOKS");
  if (hooks != nullptr && std::string_view(hooks) == "0") return {};
  const fs::path dir = fs::path(interposer).parent_path() / "capguard_python_startup";
  std::error_code error;
  return fs::is_regular_file(dir / "sitecustomize.py", error) ? dir.string() : std::string();
}

// Under a launcher (torchrun, srun, mpirun start one `capguard run` per rank, all given one
// --trace-dir): this rank's own directory inside it, <host>/rank<R>, so that each run reports
// on its own processes and the node's report finds them. Empty outside a launcher.
std::string rank_subdirectory() {
  std::vector<std::pair<std::string_view, std::string_view>> vars;
  static constexpr const char* kNames[] = {
#define CAPGUARD_LAUNCHER_VAR(name, role) #name,
#include "trace/launcher_vars.def"
  };
  for (const char* name : kNames)
    if (const char* value = std::getenv(name)) vars.emplace_back(name, value);
  const WhoRan who = who_ran_from("", vars);
  if (!who.rank) return {};
  char host[trace::kMaxHostLength + 1];
  trace::TraceWriter::read_host(host, sizeof host);  // as the interposer reads it
  char file_host[trace::TraceWriter::kMaxFileNameHost + 1];
  trace::TraceWriter::file_name_host(host, file_host, sizeof file_host);
  return std::string(file_host[0] != '\0' ? file_host : "host") + "/rank" +
         std::to_string(*who.rank);
}

std::set<std::string> traces_in(const std::string& dir) {
  std::set<std::string> traces;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error))
    if (entry.path().extension() == ".trace") traces.insert(entry.path().string());
  return traces;
}

// The pid in a trace's name: capguard.<pid>.trace or capguard.<pid>.<n>.trace
// (trace/writer.cpp); 0 when the name is not one of those.
pid_t pid_of_trace(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  if (!name.starts_with("capguard.")) return 0;
  uint64_t pid = 0;
  size_t i = 9;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && pid <= INT_MAX; ++i)
    pid = pid * 10 + static_cast<uint64_t>(name[i] - '0');
  if (i == 9 || pid == 0 || pid > INT_MAX || i >= name.size() || name[i] != '.') return 0;
  return static_cast<pid_t>(pid);
}

// Alive and not a zombie waiting to be reaped.
bool process_running(pid_t pid) {
  if (kill(pid, 0) != 0 && errno != EPERM) return false;
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  FILE* stat = std::fopen(path, "re");
  if (stat == nullptr) return true;  // no /proc: trust kill()
  char line[512];
  const size_t n = std::fread(line, 1, sizeof(line) - 1, stat);
  std::fclose(stat);
  line[n] = '\0';
  const char* close = std::strrchr(line, ')');  // the command name may hold anything
  return close == nullptr || close[1] == '\0' || close[2] != 'Z';
}

// Reaps the program's descendants that have exited (capguard is their subreaper: orphans of
// the program are reparented to it); true while some still run.
bool descendants_running() {
  for (;;) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) continue;  // one more reaped
    if (pid < 0 && errno == EINTR) continue;
    return pid == 0;  // 0: children remain; -1 (ECHILD): none
  }
}

// After the direct child exited, its background processes may still be running (and writing
// findings): waits, up to kTracedGracePeriod, for every descendant of the program, traced or
// not yet (`(sleep 0.8; cuda_program) & exit 0` wrote its finding after run had
// passed), and for every process that left a new trace without its end record and is still
// running. Returns the traces of those that had not ended by then; `untraced` tells whether
// descendants without such a trace were still running.
constexpr auto kTracedGracePeriod = std::chrono::seconds(5);
std::vector<std::string> wait_for_traced_processes(const std::string& dir,
                                                   const std::set<std::string>& old_traces,
                                                   bool& untraced) {
  const auto deadline = std::chrono::steady_clock::now() + kTracedGracePeriod;
  std::vector<std::string> running;
  for (;;) {
    const bool descendants = descendants_running();
    untraced = false;
    running.clear();
    for (const auto& trace : traces_in(dir)) {
      if (old_traces.contains(trace)) continue;
      const pid_t pid = pid_of_trace(trace);
      // Whether it runs first: the scan reads the whole trace, which only a process still
      // running needs (the program itself has been reaped by now).
      if (pid == 0 || !process_running(pid) || scan_trace_ending(trace).has_end) continue;
      running.push_back(trace);
    }
    if (running.empty() && !descendants) return running;
    if (std::chrono::steady_clock::now() >= deadline) {
      untraced = running.empty() && descendants;
      return running;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// CAPGUARD_STARTUP_TIMES: where `capguard run`'s own time goes before the program
// starts and after it exits, as CLOCK_MONOTONIC points (the scale of the interposer's
// capguard.<pid>.startup files), written to <trace dir>/capguard-run.<pid>.startup, or to
// stderr when the trace directory is removed (docs/performance.md).
class RunTimes {
 public:
  RunTimes() {
    const char* value = std::getenv("CAPGUARD_STARTUP_TIMES");
    on_ = value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
    if (!on_) return;
    mark("run_command", trace::clock_ns(CLOCK_MONOTONIC));
    mark("process_start", trace::process_start_ns());
  }
  bool on() const { return on_; }
  void mark(const char* name, uint64_t ns = 0) {
    if (on_) points_.emplace_back(name, ns != 0 ? ns : trace::clock_ns(CLOCK_MONOTONIC));
  }
  void write(const std::string& dir, bool to_stderr, int child_pid) const {
    if (!on_) return;
    std::string text = "# capguard run startup times, pid " + std::to_string(getpid()) +
                       ", CLOCK_MONOTONIC ns\nchild " + std::to_string(child_pid) + "\n";
    for (const auto& [name, ns] : points_)
      text += "point " + name + " " + std::to_string(ns) + "\n";
    if (to_stderr) {
      std::fputs(text.c_str(), stderr);
      return;
    }
    const std::string path = dir + "/capguard-run." + std::to_string(getpid()) + ".startup";
    // A new file only: a symlink planted there is not followed (its target is not
    // overwritten), a FIFO there is not waited on.
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
      say("not writing " + path + ": " + std::strerror(errno));
      return;
    }
    std::string_view rest = text;
    while (!rest.empty()) {
      const ssize_t n = ::write(fd, rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      rest.remove_prefix(static_cast<size_t>(n));
    }
    close(fd);
  }

 private:
  bool on_ = false;
  std::vector<std::pair<std::string, uint64_t>> points_;
};

bool cuda_driver_loadable() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return false;
  dlclose(driver);
  return true;
}

// Why capguard saw nothing of the program, when no process says why itself (the gate names each
// that does); one line for the user, empty when some process was watched.
std::string why_nothing_attached(const Report& report) {
  for (const auto& process : report.processes)
    if (process.attached || !process.attach_message.empty()) return {};
  if (!cuda_driver_loadable())
    return "cannot attach: no CUDA driver on this machine (libcuda.so.1 not found)";
  return "cannot attach: the program never initialized CUDA";
}

GateOptions gate_options_of(const RunOptions& options) {
  GateOptions gate;
  gate.fail_on = options.report.fail_on;
  gate.require_attach = options.require_attach;
  gate.findings_status = options.error_exitcode;
  gate.min_graph_coverage = options.report.min_graph_coverage;
  return gate;
}

// The gate a report of run says it was judged with (Report::judged_fail_on): a merge vouches
// only for node reports judged as it judges.
std::string judged_with(const RunOptions& options) {
  std::string fail_on = options.report.fail_on ? to_string(*options.report.fail_on) : "never";
  return options.require_attach ? fail_on : fail_on + ", --no-require-attach";
}

// capguard cannot watch the program at all: fail closed, or (--no-require-attach) run it as it
// would run without capguard and return its status. Either way every report is written.
int run_unwatched(const std::string& program, const RunOptions& options,
                  const std::vector<OutputTarget>& targets, const std::string& why) {
  GateInput gate;
  gate.nothing_attached = why;
  if (!options.require_attach) {
    const ChildResult child = run_child(program, options.command, ChildEnvironment{});
    if (!child.exec_error.empty()) {
      say("cannot execute " + program + ": " + child.exec_error);
      return kExitUsage;
    }
    gate.program_status = child.status;
  }
  const GateResult verdict = judge_gate(gate, gate_options_of(options));
  Report report;
  report.problems = verdict.reasons;
  report.judged_fail_on = judged_with(options);
  return status_after_writing(verdict, write_report(report, targets, options.report));
}

}  // namespace

int run_command(const RunOptions& options) {
  RunTimes times;
  std::vector<OutputTarget> targets;
  if (auto message = resolve_outputs(options.report, targets)) {
    say(*message);
    return kExitUsage;
  }
  if (auto message = check_post_process_files(options.report)) {
    say(*message);
    return kExitUsage;
  }
  std::string rehearse_globs;  // one per line: CAPGUARD_REHEARSE (interposer/nvtx_ranges.h)
  for (const std::string& glob : options.rehearse) {
    if (glob.empty() || glob.find('\n') != std::string::npos || glob.size() > 255) {
      say("--rehearse: a glob must be 1 to 255 bytes on one line");
      return kExitUsage;
    }
    rehearse_globs += (rehearse_globs.empty() ? "" : "\n") + glob;
  }
  if (rehearse_globs.size() > 1023) {
    say("--rehearse: the globs take more than 1023 bytes in all");
    return kExitUsage;
  }
  if (!options.rehearse.empty()) {
    // NVTX loads one tool: another's (Nsight Systems) would never hand capguard the ranges.
    const char* nvtx_tool = std::getenv("NVTX_INJECTION64_PATH");
    if (nvtx_tool != nullptr && *nvtx_tool != '\0') {
      say(std::string("--rehearse: NVTX_INJECTION64_PATH already names another tool (") +
          nvtx_tool +
          "); NVTX loads only one, so capguard cannot see the ranges: unset it or "
          "run without that tool");
      return kExitUsage;
    }
  }
  std::string program;
  if (auto message = resolve_program(options.command.front(), program)) {
    say(*message);
    return kExitUsage;
  }
  if (auto status = preflight(options, targets)) return *status;  // first: driver, CUPTI
  const std::string interposer = find_interposer();
  if (interposer.empty()) {
    const std::string why = "cannot attach: libcapguard.so not found next to " +
                            directory_of_executable() + "/capguard or in its ../lib/capguard/";
    return run_unwatched(program, options, targets, why);
  }

  std::string trace_dir = options.trace_dir;
  const bool temporary = trace_dir.empty();
  std::error_code error;
  if (temporary) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/capguard.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      say("cannot create a trace directory " + pattern + ": " + std::strerror(errno));
      return kExitCannotRead;
    }
    trace_dir = pattern;
  } else {
    if (const std::string rank = rank_subdirectory(); !rank.empty()) trace_dir += "/" + rank;
    if (fs::create_directories(trace_dir, error); error) {
      say("cannot create --trace-dir " + trace_dir + ": " + error.message());
      return kExitUsage;
    }
  }
  trace_dir = fs::absolute(trace_dir).string();
  std::set<std::string> old_traces = traces_in(trace_dir);
  // The pytest plugin's companions of an earlier run count too: a capguard.<pid>.tests
  // left there would name the tests of this run's process of the same pid.
  bool old_companions = false;
  for (const auto& entry : fs::directory_iterator(trace_dir, error))
    old_companions |= entry.path().extension() == ".tests";
  if (!old_traces.empty() || old_companions) {
    // Traces of earlier runs: this run's go to a fresh directory inside, so that they are told
    // apart, and so that a pid that earlier runs used many times is still traced (the
    // interposer tries capguard.<pid>.trace, then .1 to .999, and gives up after those).
    std::string pattern = trace_dir + "/run.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      say("cannot create a trace directory " + pattern + ": " + std::strerror(errno));
      return kExitCannotRead;
    }
    say("--trace-dir " + trace_dir + " holds traces of earlier runs: this run's go to " + pattern);
    trace_dir = pattern;
    old_traces.clear();
  }

  ChildEnvironment environment;
  environment.prepend_path_list("LD_PRELOAD", interposer);
  // capguard's Python start-up module (CuPy's pool hook): first on PYTHONPATH, it takes itself
  // off sys.path again and imports the sitecustomize it shadows.
  if (const std::string startup = python_startup_dir(interposer); !startup.empty())
    environment.prepend_path_list("PYTHONPATH", startup);
  environment.set("CUDA_INJECTION64_PATH", interposer);
  environment.set("CAPGUARD_TRACE_DIR", trace_dir);
  if (!options.rehearse.empty()) {  // capture rehearsal: NVTX loads libcapguard.so only then
    environment.set("NVTX_INJECTION64_PATH", interposer);
    environment.set("CAPGUARD_REHEARSE", rehearse_globs);
  }
  // The program's orphans come to capguard (not to init), so that run can wait for all of its
  // processes, not only those that have written a trace yet.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const ChildResult child = run_child(program, options.command, environment);
  if (!child.exec_error.empty()) {
    say("cannot execute " + program + ": " + child.exec_error);
    if (temporary) fs::remove_all(trace_dir, error);
    return kExitUsage;
  }

  times.mark("fork", child.fork_ns);
  times.mark("child_exited", child.exited_ns);
  bool untraced_running = false;
  const std::vector<std::string> still_running =
      wait_for_traced_processes(trace_dir, old_traces, untraced_running);
  times.mark("traces_waited");
  std::vector<std::string> traces;
  for (const auto& trace : traces_in(trace_dir))
    if (!old_traces.contains(trace)) traces.push_back(trace);
  Analysis analysis;
  // The globs are known here even where no process wrote a trace (none reached CUDA).
  for (const std::string& glob : options.rehearse) add_rehearse_glob(analysis, glob);
  GateInput gate;
  // With symbol caches, so that kept traces re-analyze where the program's binaries are not.
  if (!traces.empty())
    gate.unreadable = analyze_traces(traces, options.report, analysis, true);
  else
    name_regions_never_executed(analysis);
  times.mark("analysis_done");
  Report& report = analysis.report;
  gate.findings = &report.findings;
  gate.coverage = &report.coverage;
  gate.processes = &report.processes;
  gate.traces =
      scan_trace_facts(report, still_running, static_cast<int>(kTracedGracePeriod.count()));
  gate.incomplete = analysis.incomplete;
  if (untraced_running)  // processes without a trace are waited for too
    gate.incomplete.push_back("processes the program started were still running " +
                              std::to_string(kTracedGracePeriod.count()) +
                              " s after it exited: what they do later is not analyzed");
  gate.nothing_attached = why_nothing_attached(report);
  gate.program_status = child.status;
  const GateResult verdict = judge_gate(gate, gate_options_of(options));
  for (const ToolProblem& reason : verdict.reasons) report.problems.push_back(reason);
  report.judged_fail_on = judged_with(options);

  // A temporary directory is kept only when there is something in it worth a second look.
  const bool clean = verdict.status != kExitCannotRead && report.findings.empty();
  std::string kept;
  if (temporary && (clean || traces.empty()))
    fs::remove_all(trace_dir, error);
  else if (temporary)
    kept = "traces kept in " + trace_dir + " (capguard report " + trace_dir + ")";
  const bool written = write_report(report, targets, options.report, kept);
  times.mark("report_written");
  times.write(trace_dir, temporary && kept.empty(), child.pid);

  return status_after_writing(verdict, written);
}

}  // namespace capguard::cli
