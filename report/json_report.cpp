#include "report/json_report.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "model/enum_names.h"
#include "report/utf8.h"

namespace capguard {
namespace {

const JsonValue::Array kEmpty;

// The strings a trace never gives, which capguard names itself (a rule id, a result's name, a
// thread's, a related location's role, a rule option's): the renderers print them as they are.
// From a JSON report anyone may have written, they arrive escaped as a terminal line would show
// them (ESC, CR, NUL, U+202E and U+2028 in a node report reached stderr and the text
// report raw); capguard's own names are plain ASCII and unchanged.
std::string name_at(const JsonValue& object, std::string_view key) {
  return terminal_safe(object.get_string(key));
}

const JsonValue::Array& array_at(const JsonValue& object, std::string_view key) {
  const JsonValue* value = object.get(key);
  const JsonValue::Array* array = value != nullptr ? value->as_array() : nullptr;
  return array != nullptr ? *array : kEmpty;
}

uint32_t u32(const JsonValue& object, std::string_view key) {
  const auto value = object.get_int(key);
  return value && *value >= 0 && *value <= UINT32_MAX ? static_cast<uint32_t>(*value) : 0;
}

std::optional<uint32_t> optional_u32(const JsonValue& object, std::string_view key) {
  const auto value = object.get_int(key);
  if (!value || *value < 0 || *value > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(*value);
}

uint64_t u64(const JsonValue& object, std::string_view key) {  // get_int bounds it (9e15)
  const auto value = object.get_int(key);
  return value && *value >= 0 ? static_cast<uint64_t>(*value) : 0;
}

bool flag(const JsonValue& object, std::string_view key) {
  const JsonValue* value = object.get(key);
  return value != nullptr && value->as_bool() != nullptr && *value->as_bool();
}

Frame frame_from(const JsonValue& j) {
  Frame frame;
  frame.function = j.get_string("function");
  frame.file = j.get_string("file");
  frame.line = static_cast<int>(u32(j, "line"));
  frame.module = j.get_string("module");
  return frame;
}

// JSON lists the program's frames and, apart, the CUDA and capguard frames below them
// (report/inner_frames.h): one innermost-first stack again.
Location location_from(const JsonValue* j, uint32_t pid) {
  Location location;
  location.pid = pid;
  if (j == nullptr) return location;
  const JsonValue::Array& inner = array_at(*j, "inner_frames");
  for (const JsonValue& f : inner) location.frames.push_back(frame_from(f));
  for (const JsonValue& f : array_at(*j, "frames")) location.frames.push_back(frame_from(f));
  if (const auto user = optional_u32(*j, "user_frame"))
    location.user_frame = static_cast<int>(*user + inner.size());
  return location;
}

std::optional<CaptureState> state_named(std::string_view name) {
  for (CaptureState s :
       {CaptureState::Ok, CaptureState::Invalidated, CaptureState::Failed, CaptureState::Open})
    if (name == to_string(s)) return s;
  return std::nullopt;
}

std::optional<WhoRan> who_from(const JsonValue* j) {
  if (j == nullptr || j->as_object() == nullptr) return std::nullopt;
  WhoRan who;
  who.host = j->get_string("host");
  who.rank = optional_u32(*j, "rank");
  who.rank_from = j->get_string("rank_from");
  who.local_rank = optional_u32(*j, "local_rank");
  who.world_size = optional_u32(*j, "world_size");
  who.devices = j->get_string("cuda_visible_devices");
  who.gpu = j->get_string("gpu");
  return who;
}

// The 1-based index of a finding's or capture's process: its pid, and its host where the
// report says it. Looked up by pid in an index built once (a scan of every process
// for each finding was 20,000 x 20,000 steps).
class ProcessesByPid {
 public:
  explicit ProcessesByPid(const Report& report) {
    for (size_t i = 0; i < report.processes.size(); ++i) {
      const ProcessInfo& p = report.processes[i];
      const auto index = static_cast<uint32_t>(i + 1);
      first_.try_emplace(p.pid, index);
      if (p.who)
        on_host_.try_emplace({p.pid, p.who->host}, index);
      else
        without_host_.try_emplace(p.pid, index);  // matches whatever host a finding names
    }
  }
  uint32_t find(uint32_t pid, const std::string* host) const {
    if (host == nullptr) return at(first_, pid);
    const uint32_t named = at(on_host_, std::pair<uint32_t, std::string>{pid, *host});
    const uint32_t any = at(without_host_, pid);
    return named == 0 ? any : any == 0 ? named : std::min(named, any);  // the first, as a scan
  }

 private:
  template <class Map, class Key>
  static uint32_t at(const Map& map, const Key& key) {
    const auto found = map.find(key);
    return found != map.end() ? found->second : 0;
  }
  std::unordered_map<uint32_t, uint32_t> first_, without_host_;
  std::map<std::pair<uint32_t, std::string>, uint32_t> on_host_;
};

// Graph coverage: each process's counts, from which the job's figure and the gate are
// computed again (its "share_percent" and "graph_coverage_job" are derived, not read). One entry
// per process at most, and each process's eager sites as many as a report keeps.
std::optional<std::string> coverage_from_json(const JsonValue& root,
                                              const ProcessesByPid& processes, Report& report) {
  const JsonValue::Array& all = array_at(root, "graph_coverage");
  if (all.size() > report.processes.size())
    return "its graph_coverage has " + std::to_string(all.size()) + " entries for " +
           std::to_string(report.processes.size()) + " processes";
  for (const JsonValue& j : all) {
    CoverageInfo& c = report.coverage.emplace_back();
    c.pid = u32(j, "pid");
    c.process = processes.find(c.pid, nullptr);
    const JsonValue* measured = j.get("measured");
    c.measured = measured == nullptr || measured->as_bool() == nullptr || *measured->as_bool();
    c.graph_launches = u64(j, "graph_launches");
    c.graph_kernels = u64(j, "graph_kernels");
    c.unwalked_launches = u64(j, "unwalked_graph_launches");
    c.eager_kernels = u64(j, "eager_kernels");
    c.phases = u64(j, "eager_phases");
    c.most_in_phase = u64(j, "most_eager_in_a_phase");
    c.other_sites = u64(j, "other_sites");
    const JsonValue::Array& eager = array_at(j, "eager");
    for (const JsonValue& e : eager) {
      if (c.eager.size() >= kEagerSitesKept) {  // more than a report keeps: counted, not read
        ++c.other_sites;
        continue;
      }
      EagerSite& site = c.eager.emplace_back();
      site.kernel = e.get_string("kernel");  // the renderers escape it, as a trace's
      site.launches = u64(e, "launches");
      site.threads = u64(e, "threads");
      site.phases = u64(e, "phases");
      site.framework_call = name_at(e, "framework_call");  // capguard's words: printed as they are
      site.location = location_from(e.get("location"), c.pid);
    }
  }
  return std::nullopt;
}

// "collective_graphs": an untrusted node report's, so every count is bounded as the analyzer
// bounds its own (model/report.h's kMax...), and every index is checked.
std::optional<std::string> collectives_from(const JsonValue& root, Report& report) {
  const JsonValue::Array& ranks = array_at(root, "collective_graphs");
  if (ranks.size() > report.processes.size())
    return "collective_graphs: more entries than processes";
  for (const JsonValue& j : ranks) {
    RankCollectives rank;
    rank.process = u32(j, "process");
    if (rank.process == 0 || rank.process > report.processes.size())
      return "collective_graphs: a process index past the processes";
    rank.pid = report.processes[rank.process - 1].pid;
    const JsonValue* ended = j.get("ended");
    rank.ended = ended == nullptr || ended->as_bool() == nullptr || *ended->as_bool();
    const JsonValue::Array& graphs = array_at(j, "graphs");
    if (graphs.size() > kMaxCollectiveGraphs)
      return "collective_graphs: more than " + std::to_string(kMaxCollectiveGraphs) +
             " graphs in a process";
    for (const JsonValue& g : graphs) {
      CollectiveGraph graph;
      graph.site.pid = rank.pid;
      if (const JsonValue* site = g.get("site");
          site != nullptr && !site->get_string("file").empty()) {
        graph.site.frames.push_back(frame_from(*site));
        graph.site.user_frame = 0;
      }
      graph.key = std::strtoull(g.get_string("key", "0").c_str(), nullptr, 16);
      const JsonValue::Array& collectives = array_at(g, "collectives");
      if (collectives.size() > kMaxCollectivesPerGraph)
        return "collective_graphs: more than " + std::to_string(kMaxCollectivesPerGraph) +
               " collectives in a graph";
      for (const JsonValue& c : collectives) {
        const std::string* name = c.as_string();
        if (name == nullptr || name->empty() || name->size() > kMaxCollectiveName)
          return "collective_graphs: a collective that is not a name of at most " +
                 std::to_string(kMaxCollectiveName) + " bytes";
        graph.collectives.push_back(terminal_safe(*name));
      }
      graph.collectives_cut = flag(g, "collectives_cut");
      graph.execs = static_cast<uint64_t>(std::max<int64_t>(0, g.get_int("execs").value_or(0)));
      rank.graphs.push_back(std::move(graph));
    }
    const auto graph_index = [&](const JsonValue& v) -> std::optional<uint32_t> {
      const double* n = v.as_number();
      if (n == nullptr || !(*n >= 0) || *n >= static_cast<double>(rank.graphs.size()) ||
          *n != static_cast<double>(static_cast<uint32_t>(*n)))
        return std::nullopt;
      return static_cast<uint32_t>(*n);
    };
    const JsonValue::Array& replays = array_at(j, "replays");
    if (replays.size() > kMaxReplaysKept)
      return "collective_graphs: more than " + std::to_string(kMaxReplaysKept) + " replays";
    for (const JsonValue& r : replays) {
      const auto index = graph_index(r);
      if (!index) return "collective_graphs: a replay of a graph the process does not list";
      rank.replays.push_back(*index);
    }
    rank.replays_cut = flag(j, "replays_cut");
    const JsonValue::Array& last = array_at(j, "last_launches");
    if (last.size() > kMaxReplayStreams)
      return "collective_graphs: more than " + std::to_string(kMaxReplayStreams) + " streams";
    for (const JsonValue& l : last) {
      const JsonValue* graph = l.get("graph");
      const auto index = graph != nullptr ? graph_index(*graph) : std::nullopt;
      if (!index) return "collective_graphs: a last launch of a graph the process does not list";
      rank.last.push_back(
          {std::strtoull(l.get_string("stream", "0").c_str(), nullptr, 16), *index,
           static_cast<uint64_t>(std::max<int64_t>(0, l.get_int("seq").value_or(0)))});
    }
    report.collectives.push_back(std::move(rank));
  }
  return std::nullopt;
}

}  // namespace

bool is_capguard_json_report(const JsonValue& root) {
  return root.get_string("tool") == "capguard" && root.get("findings") != nullptr;
}

std::optional<std::string> report_from_json(const JsonValue& root, Report& report) {
  if (!is_capguard_json_report(root)) return "not a capguard JSON report";
  report.judged_fail_on = root.get_string("fail_on");
  for (const JsonValue& j : array_at(root, "processes")) {
    ProcessInfo& p = report.processes.emplace_back();
    p.pid = u32(j, "pid");
    p.command = j.get_string("command");
    p.attached = flag(j, "attached");
    p.attach_message = j.get_string("attach_message");
    p.cupti_lost = j.get_string("stopped_watching");
    p.trace_path = j.get_string("trace");
    p.start_unix_ns = std::strtoull(j.get_string("started_unix_ns", "0").c_str(), nullptr, 10);
    p.who = who_from(j.get("who"));
    for (const JsonValue& h : array_at(j, "framework_hooks"))
      p.framework_hooks.push_back(
          {h.get_string("owner"), flag(h, "attached"), h.get_string("state")});
  }
  const ProcessesByPid processes(report);
  for (const JsonValue& j : array_at(root, "captures")) {
    CaptureInfo& c = report.captures.emplace_back();
    c.id = u32(j, "id");
    c.pid = u32(j, "pid");
    c.process = processes.find(c.pid, nullptr);
    c.thread = u32(j, "thread");
    c.stream = std::strtoull(j.get_string("stream", "0").c_str(), nullptr, 16);
    c.mode = mode_named(j.get_string("mode")).value_or(trace::CaptureMode::Global);
    c.status = state_named(j.get_string("status")).value_or(CaptureState::Open);
    if (const auto nodes = j.get_int("nodes"); nodes && *nodes >= 0)
      c.nodes = static_cast<uint64_t>(*nodes);
    c.begin = location_from(j.get("begin"), c.pid);
    if (const JsonValue* end = j.get("end"); end != nullptr && !end->is_null())
      c.end = location_from(end, c.pid);
    if (const auto root_cause = j.get_int("root_cause"); root_cause && *root_cause >= 0)
      c.root_cause = static_cast<size_t>(*root_cause);
    if (const auto count = j.get_int("count"); count && *count > 1) {
      c.count = static_cast<uint64_t>(*count);
      c.last_id = u32(j, "last_id");
    }
    c.other_sites = flag(j, "other_sites");
  }
  for (const JsonValue& j : array_at(root, "findings")) {
    Finding& f = report.findings.emplace_back();
    f.rule = name_at(j, "rule");
    f.severity = severity_named(j.get_string("severity")).value_or(Severity::Error);
    f.message = j.get_string("message");
    f.api = j.get_string("api");
    f.framework_call = j.get_string("framework_call");
    f.framework_headline = j.get_string("framework_headline");
    f.framework_fix = j.get_string("framework_fix");
    f.result_name = name_at(j, "result");
    f.result = static_cast<int>(j.get_int("result_code").value_or(f.result_name.empty() ? 0 : -1));
    f.pid = u32(j, "pid");
    const JsonValue* host = j.get("host");
    f.process = processes.find(f.pid, host != nullptr ? host->as_string() : nullptr);
    f.thread = u32(j, "thread");
    f.thread_name = name_at(j, "thread_name");
    f.capturing_thread = flag(j, "capturing_thread");
    f.capture = optional_u32(j, "capture");
    f.location = location_from(j.get("location"), f.pid);
    for (const JsonValue& r : array_at(j, "related"))
      f.related.push_back(
          {name_at(r, "role"), r.get_string("detail"), location_from(r.get("location"), f.pid)});
    f.consequences = u32(j, "consequences");
    f.test = j.get_string("test");
    f.rehearsed = flag(j, "rehearsed");
    f.region = j.get_string("region");
  }
  for (const JsonValue& j : array_at(root, "rule_options")) {
    const auto value = j.get_int("value"), default_value = j.get_int("default");
    report.rule_options.push_back(
        {name_at(j, "rule"), name_at(j, "option"),
         static_cast<uint64_t>(std::max<int64_t>(value.value_or(0), 0)),
         static_cast<uint64_t>(std::max<int64_t>(default_value.value_or(0), 0))});
  }
  for (const JsonValue& j : array_at(root, "problems")) {
    report.problems.push_back({severity_named(j.get_string("level")).value_or(Severity::Error),
                               j.get_string("message"), flag(j, "unfinished"),
                               flag(j, "graph_coverage_gate")});
  }
  if (auto problem = coverage_from_json(root, processes, report)) return problem;
  if (auto why = collectives_from(root, report)) return why;
  for (const CaptureInfo& c : report.captures)
    if (c.root_cause && *c.root_cause >= report.findings.size())
      return "capture " + std::to_string(c.id) + " names a root cause past the findings";
  return std::nullopt;
}

}  // namespace capguard
