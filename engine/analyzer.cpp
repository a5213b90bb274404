// analyze_trace(): the trace reader feeds a Replay; modules, process and attach records go to
// the report and the module map.
#include "engine/analyzer.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/replay.h"
#include "engine/test_marks.h"
#include "model/cupti_clients.h"
#include "model/rehearsal.h"
#include "model/report_merge.h"
#include "trace/format.h"
#include "trace/framework_memory.h"
#include "trace/parse_ahead.h"
#include "util/glob.h"

namespace capguard {
namespace {

// `final`: the read loop calls on_event() directly (trace/read_loop.h).
class ReplaySink final : public trace::TraceSink {
 public:
  ReplaySink(Analysis& analysis, const std::string& path)
      : analysis_(analysis),
        replay_(analysis.report),
        process_(analysis.report.processes.emplace_back()),
        first_finding_(analysis.report.findings.size()) {
    process_.trace_path = path;
    modules_.pid = 0;
    replay_.set_process(static_cast<uint32_t>(analysis.report.processes.size()));
    replay_.set_rehearse_mode(analysis.rehearse_mode);
    modules_.process = static_cast<uint32_t>(analysis.report.processes.size());
  }

  void on_process(const trace::ProcessRecord& p) override {
    saw_process_ = true;
    process_.pid = p.pid;
    process_.start_unix_ns = p.start_unix_ns;
    modules_.pid = p.pid;
    replay_.set_pid(p.pid);
    if (const std::string marks = test_marks_path(process_.trace_path); !marks.empty())
      tests_ = read_test_marks(marks, p.pid, p.start_unix_ns);
  }
  void on_command(std::string_view command_line) override {
    process_.command = std::string(command_line);
  }
  void on_cuda(const trace::CudaRecord& w) override {
    CudaInfo& cuda = process_.cuda;
    cuda.recorded = true;
    cuda.runtime = w.runtime, cuda.driver = w.driver, cuda.other_runtime = w.other_runtime;
    cuda.cupti_major = w.cupti_major, cuda.cupti_api = w.cupti_api;
    cuda.linkage = std::string(w.linkage);
    cuda.runtime_path = std::string(w.runtime_path);
    cuda.cupti_path = std::string(w.cupti_path);
  }
  void on_who_ran(const trace::WhoRanRecord& w) override {
    std::vector<std::pair<std::string_view, std::string_view>> vars;
    for (const trace::LauncherVar& v : w.vars) vars.emplace_back(v.name, v.value);
    process_.who = who_ran_from(w.host, vars);
  }
  void on_attach(bool ok, std::string_view message) override {
    process_.attached = ok;
    process_.attach_message = std::string(message);
  }
  void on_module(const trace::ModuleRecord& m) override {
    modules_.modules.push_back(
        {m.base, m.start, m.end, std::string(m.path), std::string(m.build_id)});
  }
  void on_python_frame(const trace::PythonFrameRecord& f) override {
    modules_.python_frames[f.id] = {std::string(f.file), std::string(f.function),
                                    static_cast<int>(f.line)};
    // The interposer may give one code location several ids; stacks name the first, so that
    // the same call site has the same stack content (graph lifecycles key on it).
    std::string content = fmt::format("{}\n{}\n{}", f.file, f.function, f.line);
    python_canonical_[f.id] = python_ids_.try_emplace(std::move(content), f.id).first->second;
  }
  void on_stack(const trace::StackRecord& s) override {
    if (s.python_frames.empty()) return replay_.define_stack(s.id, s.addresses);
    stack_.assign(s.addresses.begin(), s.addresses.end());  // then the Python frames, tagged
    for (uint32_t id : s.python_frames) {
      const auto canonical = python_canonical_.find(id);
      stack_.push_back(kPythonFrameTag |
                       (canonical != python_canonical_.end() ? canonical->second : id));
    }
    replay_.define_stack(s.id, stack_);
  }
  // Inline into the read loop (trace/read_loop.h): it runs for every event.
  [[gnu::always_inline]] void on_event(const trace::ApiEvent& ev) override {
    if (first_event_ns_ == 0) first_event_ns_ = ev.time_ns;
    last_event_ns_ = ev.time_ns;
    last_api_ = ev.api;
    if (!tests_.spans.empty()) note_test(ev);
    if (trace::may_be_framework_memory(ev.api)) note_framework_hook(ev);
    replay_.feed(ev);
  }
  void on_rehearse(std::string_view glob) override { add_rehearse_glob(analysis_, glob); }
  void on_cupti_client(const trace::CuptiClientRecord& k) override {
    using trace::CuptiClientEvent;
    if (k.what == CuptiClientEvent::Lost) return lost_cupti(k);
    if (k.what == CuptiClientEvent::Left) return;
    std::string name = describe_cupti_client(k.name);
    auto& clients = process_.cupti_clients;
    auto client = std::find_if(clients.begin(), clients.end(),
                               [&](const CuptiClientInfo& c) { return c.name == name; });
    // A finalize without a name is the last client's; a refused subscriber is counted at the
    // client that held CUPTI then.
    if (((k.what == CuptiClientEvent::Finalize && k.name.empty()) ||
         k.what == CuptiClientEvent::Refused) &&
        !clients.empty())
      client = clients.end() - 1;
    if (client == clients.end()) {
      if (clients.size() >= kCuptiClientsNamed) return;
      client = clients.insert(clients.end(), CuptiClientInfo{std::move(name)});
    }
    switch (k.what) {
      case CuptiClientEvent::Forwarding:
      case CuptiClientEvent::Beside:
        client->beside = k.what == CuptiClientEvent::Beside;
        ++client->subscriptions;
        break;
      case CuptiClientEvent::Finalize:
        ++client->finalizes;
        break;
      case CuptiClientEvent::Refused:
        ++client->refused;
        break;
      case CuptiClientEvent::Left:
      case CuptiClientEvent::Lost:
        break;
    }
  }
  void on_thread_exit(uint32_t tid, uint64_t) override { replay_.thread_exit(tid); }
  void on_end(uint64_t, int) override { replay_.process_end(); }
  void on_graph_node(const trace::GraphNodeRecord& r) override { replay_.graph_node(r); }
  void on_graph(const trace::GraphRecord& r) override { replay_.graph(r); }
  void on_graph_update(const trace::GraphUpdateRecord& r) override { replay_.graph_update(r); }
  void on_kernel_name(const trace::KernelNameRecord& r) override { replay_.kernel_name(r); }
  void on_launch_count(const trace::LaunchCountRecord& r) override { replay_.launch_count(r); }
  void on_kernel_args(const trace::KernelArgsRecord& r) override { replay_.kernel_args(r); }
  void on_range_begin(const trace::RangeRecord& r) override { replay_.range_begin(r); }
  void on_range_end(const trace::RangeRecord& r) override { replay_.range_end(r); }
  void on_skipped_line(const trace::ReadError& error) override {
    if (++skipped_ <= kSkippedLinesNamed) analysis_.skipped_lines.push_back(error);
  }
  uint64_t skipped() const { return skipped_; }

  // capguard's subscription was gone at exit: say from when on nothing was seen.
  void lost_cupti(const trace::CuptiClientRecord& k) {
    std::string who =
        k.name.empty() ? std::string("a CUPTI client") : describe_cupti_client(k.name);
    std::string since =
        last_event_ns_ == 0
            ? "no CUDA call was recorded at all"
            : fmt::format(
                  "nothing after its last recorded call ({}, {:.3f} s after the first) "
                  "was checked",
                  last_api_, static_cast<double>(last_event_ns_ - first_event_ns_) / 1e9);
    process_.cupti_lost = fmt::format(
        "capguard's CUPTI subscription had ended before the process exited: CUPTI was finalized "
        "by a call capguard could not intercept (last CUPTI client seen: {}); {}",
        who, since);
    // Fails closed like a capture analyzed in part: a gate must not pass on what was not seen.
    analysis_.incomplete.push_back(process_.trace_path + ": " + process_.cupti_lost);
  }
  const Replay& replay() const { return replay_; }

  // A framework allocator's hook attached, or why not (trace/framework_memory.def).
  void note_framework_hook(const trace::ApiEvent& ev) {
    const trace::FrameworkMemoryInfo* info = trace::find_framework_memory(ev.api);
    if (info == nullptr || info->op != trace::FrameworkMemoryOp::Attach) return;
    auto& hooks = process_.framework_hooks;
    const bool known = std::any_of(hooks.begin(), hooks.end(), [&](const FrameworkHookInfo& h) {
      return h.owner == info->owner;
    });
    if (!known)
      hooks.push_back({std::string(info->owner), ev.result == 0,
                       std::string(trace::framework_hook_result_text(ev.result))});
  }

  // Where the running test changes, by event seq: bounded by the tests' count, not the events'
  // (threads interleaving at a boundary add a few).
  void note_test(const trace::ApiEvent& ev) {
    const std::optional<uint32_t> test = tests_.test_at(ev.time_ns);
    if (!test_changes_.empty() && test_changes_.back().second == test) return;
    if (test_changes_.size() >= kMaxTestChanges) return;
    test_changes_.emplace_back(ev.seq, test);
  }

  // Each finding of this trace gets the test that was running at its call (its seq).
  void attribute_tests() {
    process_.tests = std::move(tests_.names);
    if (test_changes_.empty()) return;
    // Threads write their events at exit, so the trace's order is nearly, not quite, seq order.
    std::stable_sort(test_changes_.begin(), test_changes_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    auto& findings = analysis_.report.findings;
    for (size_t i = first_finding_; i < findings.size(); ++i) {
      const uint64_t seq = findings[i].location.seq;
      auto after =
          std::upper_bound(test_changes_.begin(), test_changes_.end(), seq,
                           [](uint64_t s, const auto& change) { return s < change.first; });
      if (after == test_changes_.begin()) continue;
      if (const auto test = (after - 1)->second) findings[i].test = process_.tests[*test];
    }
  }

  // Call once reading stopped, cleanly or not. Returns the module map.
  bool saw_process() const { return saw_process_; }
  ProcessModules finish() {
    replay_.finish();
    attribute_tests();
    return std::move(modules_);
  }

 private:
  Analysis& analysis_;
  Replay replay_;
  ProcessInfo& process_;
  ProcessModules modules_;
  std::vector<uint64_t> stack_;
  std::unordered_map<std::string, uint32_t> python_ids_;     // content -> first id
  std::unordered_map<uint32_t, uint32_t> python_canonical_;  // id -> first id of its content
  bool saw_process_ = false;
  uint64_t skipped_ = 0;
  uint64_t first_event_ns_ = 0, last_event_ns_ = 0;  // for a lost CUPTI subscription
  std::string_view last_api_;  // kept by the reader in this sink (api_names()): no copy
  size_t first_finding_;       // report.findings of this trace start here
  TestMarks tests_;            // the pytest plugin's, beside the trace
  std::vector<std::pair<uint64_t, std::optional<uint32_t>>> test_changes_;  // seq, test
  static constexpr size_t kMaxTestChanges = 4 * kMaxTests;
  // A hostile trace may name any number of clients: a report names this many.
  static constexpr size_t kCuptiClientsNamed = 16;
};

}  // namespace

void analyze_trace(const std::string& path, Analysis& analysis, trace::ReadThreads threads) {
  // The sink holds a reference into report.processes: nothing else appends to it meanwhile.
  ReplaySink sink(analysis, path);
  std::optional<trace::ReadError> error;
  try {
    error = trace::read_loop::read_file(path, sink, threads);
  } catch (const std::bad_alloc&) {
    // Unwinding freed the reader's buffers: enough to report what was found before.
    error = trace::ReadError{path, 0,
                             "out of memory while reading it; findings up to there are "
                             "reported"};
  }
  ProcessModules modules = sink.finish();
  if (error && !sink.saw_process()) {
    analysis.report.processes.pop_back();  // nothing was read: no process to speak of
  } else {
    analysis.modules.push_back(std::move(modules));
  }
  if (sink.skipped() > kSkippedLinesNamed)
    analysis.skipped_lines.push_back(
        {path, 0,
         std::to_string(sink.skipped() - kSkippedLinesNamed) + " more damaged lines skipped"});
  if (const uint64_t n = sink.replay().undefined_stacks())
    analysis.warnings.push_back(path + ": stack ids that the trace never defines, named " +
                                std::to_string(n) + " times (shown as \"no stack recorded\")");
  if (const uint64_t n = sink.replay().unheld_framework_events())
    analysis.warnings.push_back(
        path + ": " + std::to_string(n) +
        " framework allocator events for memory no live graph held (capguard records only "
        "those): the trace is damaged, or an exec was past the analysis's limits; they were "
        "ignored");
  if (const uint64_t n = sink.replay().graph_nodes_not_kept())
    analysis.warnings.push_back(
        path + ": " + std::to_string(n) + " graph node records past the analysis's limit of " +
        std::to_string(kMaxNodesPerProcess) +
        " nodes of live graph execs were not kept: the trace is damaged, or holds that many "
        "graphs at once; those execs are judged as partly walked");
  if (const uint64_t n = sink.replay().kernel_names_not_kept())
    analysis.warnings.push_back(path + ": " + std::to_string(n) +
                                " graph kernel nodes left unnamed: more than " +
                                std::to_string(kMaxKernelNames) + " distinct kernel names");
  if (const uint64_t n = sink.replay().partial_capture_count()) {
    std::string ids;
    for (uint32_t id : sink.replay().partial_captures())
      ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    if (n > sink.replay().partial_captures().size())
      ids += " and " + std::to_string(n - sink.replay().partial_captures().size()) + " more";
    analysis.incomplete.push_back(
        path + ": " + std::to_string(n) + (n == 1 ? " capture" : " captures") +
        " not analyzed in full (capture " + ids +
        "): so many streams were forked into it that their vector clocks outgrew the analysis "
        "budget (" +
        std::to_string(kClockBudget) +
        " entries); which of its forked streams were joined back is not judged");
  }
  if (const uint64_t n = sink.replay().dropped_rehearsals())
    analysis.incomplete.push_back(
        path + ": " + std::to_string(n) + " rehearsed NVTX ranges not judged: more than " +
        std::to_string(kMaxRehearsalRegions) + " distinct regions, or more than " +
        std::to_string(kMaxOpenRehearsals) + " ranges open at once (docs/security.md)");
  if (error) analysis.errors.push_back(std::move(*error));
}

void append_analysis(Analysis& into, Analysis&& from, uint32_t* last_capture) {
  const auto processes = static_cast<uint32_t>(into.report.processes.size());
  for (ProcessModules& modules : from.modules) {
    if (modules.process != 0) modules.process += processes;
    into.modules.push_back(std::move(modules));
  }
  append_report(into.report, std::move(from.report), last_capture);
  const auto move_all = [](auto& to, auto& items) {
    to.insert(to.end(), std::make_move_iterator(items.begin()),
              std::make_move_iterator(items.end()));
  };
  move_all(into.errors, from.errors);
  move_all(into.skipped_lines, from.skipped_lines);
  move_all(into.warnings, from.warnings);
  move_all(into.incomplete, from.incomplete);
  for (const std::string& glob : from.rehearse_globs) add_rehearse_glob(into, glob);
}

void analyze_trace_files(const std::vector<std::string>& paths, Analysis& analysis, unsigned jobs) {
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  // Workers beyond a few per CPU only hold memory: each reserves its stack and a trace's replay,
  // and under a memory limit (-j 1024 under ulimit -v) their out-of-memory exceptions, thrown at
  // once, emptied the C++ runtime's emergency pool, which ends the process in std::terminate.
  // The report is the same for any number of workers.
  const unsigned worth_running = std::max(2u, 4 * trace::read_loop::usable_cpus());
  jobs = static_cast<unsigned>(std::min<size_t>({jobs, paths.size(), worth_running}));
  // Each trace's analysis is appended as soon as those before it are, in path order (the same
  // report for any -j), and freed: held until the last trace was done, 100,000 small traces'
  // analyses were the report twice over.
  std::vector<std::unique_ptr<Analysis>> each(paths.size());
  std::vector<std::exception_ptr> failed(paths.size());  // rethrown here, as one thread would
  std::vector<char> done(paths.size(), 0);
  std::mutex merging;
  size_t merged = 0;  // each[0, merged) are appended to `analysis`
  uint32_t last_capture = last_capture_id(analysis.report);
  std::atomic<size_t> next{0};
  // Helper threads beside each worker only while they oversubscribe no CPU.
  const trace::ReadThreads threads = trace::ReadThreads::sharing_cpus(jobs);
  const auto work = [&] {
    for (size_t i = next.fetch_add(1); i < paths.size(); i = next.fetch_add(1)) {
      try {
        each[i] = std::make_unique<Analysis>();
        each[i]->rehearse_mode = analysis.rehearse_mode;
        analyze_trace(paths[i], *each[i], threads);
      } catch (...) {
        failed[i] = std::current_exception();
      }
      std::lock_guard lock(merging);
      done[i] = 1;
      // Past a failure nothing more is appended: its exception is what this call ends with.
      for (; merged < paths.size() && done[merged] && !failed[merged]; ++merged) {
        try {
          append_analysis(analysis, std::move(*each[merged]), &last_capture);
        } catch (...) {
          failed[merged] = std::current_exception();
          break;
        }
        each[merged].reset();
      }
    }
  };
  if (jobs <= 1) {
    work();
  } else {
    // A thread that cannot be started (-j 100000 under a memory limit ended in
    // std::terminate) leaves its share to those that did start, and to this one. Both ways it
    // fails are caught: no thread (std::system_error, EAGAIN) and no memory for its state
    // (std::bad_alloc); the vector is reserved first, so that no thread already running is
    // ever destroyed unjoined by a reallocation that throws.
    std::vector<std::thread> workers;
    workers.reserve(jobs);
    try {
      for (unsigned j = 0; j < jobs; ++j) workers.emplace_back(work);
    } catch (const std::system_error&) {
    } catch (const std::bad_alloc&) {
    }
    if (workers.size() < jobs) work();
    for (std::thread& worker : workers) worker.join();
  }
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}

void add_rehearse_glob(Analysis& analysis, std::string_view glob) {
  // As the recorder writes it (trace/writer.cpp): longer only in a forged trace.
  glob = glob.substr(0, std::min<size_t>(glob.size(), trace::kMaxRangeNameLength));
  auto& globs = analysis.rehearse_globs;
  if (globs.size() < kMaxRehearseGlobs &&
      std::find(globs.begin(), globs.end(), glob) == globs.end())
    globs.emplace_back(glob);
}

void name_regions_never_executed(Analysis& analysis) {
  auto& rehearsals = analysis.report.rehearsals;
  // Each distinct name once per glob (processes repeat their regions), cut as the recorder
  // cuts them; glob_match is linear (crafted globs took over a minute).
  std::unordered_set<std::string_view> names;
  for (const RehearsalInfo& r : rehearsals)
    names.insert(std::string_view(r.name).substr(
        0, std::min<size_t>(r.name.size(), trace::kMaxRangeNameLength)));
  std::vector<std::string> never_run;
  for (const std::string& glob : analysis.rehearse_globs)
    if (std::none_of(names.begin(), names.end(),
                     [&](std::string_view name) { return glob_match(glob, name); }))
      never_run.push_back(glob);
  for (const std::string& glob : never_run) {
    RehearsalInfo& never = rehearsals.emplace_back();
    never.name = glob;
    never.mode = analysis.rehearse_mode;
    never.verdict = RehearsalVerdict::NeverExecuted;
    analysis.incomplete.push_back(
        "--rehearse " + glob +
        ": no NVTX range with a matching message ran in any process, so nothing was rehearsed "
        "(is the range's name right, and does the program reach it?)");
  }
}

}  // namespace capguard
