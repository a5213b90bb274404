// Graph coverage after warm-up: the kernel records' text (trace/kernel_record.h), the model that
// adds them up (model/graph_coverage.h), its report section, and the gate's
// --min-graph-coverage (engine/gate.h).
#include "model/graph_coverage.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "engine/gate.h"
#include "model/report_merge.h"
#include "report/coverage_section.h"
#include "report/json_reader.h"
#include "report/json_report.h"
#include "report/render.h"
#include "trace/kernel_record.h"
#include "trace/reader.h"

using namespace capguard;

namespace {

struct KernelSink : trace::TraceSink {
  std::vector<std::string> names;
  std::vector<trace::LaunchCountKind> kinds;
  std::vector<trace::ExecLaunches> execs;
  std::vector<trace::EagerLaunches> eager;
  std::vector<trace::KernelArg> args;
  uint32_t args_order = 99;
  void on_kernel_name(const trace::KernelNameRecord& r) override { names.emplace_back(r.name); }
  void on_launch_count(const trace::LaunchCountRecord& r) override {
    kinds.push_back(r.kind);
    execs.insert(execs.end(), r.execs.begin(), r.execs.end());
    eager.insert(eager.end(), r.eager.begin(), r.eager.end());
  }
  void on_kernel_args(const trace::KernelArgsRecord& r) override {
    args.assign(r.args.begin(), r.args.end());
    args_order = r.order;
  }
};

std::string trace_of(const std::vector<std::string>& records) {
  std::string text = "v 0.1.0 9\np 1 0 0\n";
  for (const std::string& r : records) text += r;
  return text;
}

std::string formatted(size_t n, const char* buffer) { return std::string(buffer, n); }

trace::LaunchCountRecord counts(trace::LaunchCountKind kind,
                                const std::vector<trace::ExecLaunches>& execs,
                                const std::vector<trace::EagerLaunches>& eager) {
  trace::LaunchCountRecord r;
  r.kind = kind;
  r.execs = execs;
  r.eager = eager;
  return r;
}

trace::GraphNodeRecord kernel_node(uint64_t exec, uint32_t index) {
  trace::GraphNodeRecord node;
  node.exec = exec;
  node.index = index;
  node.type = trace::kNodeKernel;
  return node;
}

}  // namespace

TEST_CASE("kernel records: written, read back, and refused when damaged") {
  char buffer[trace::kKernelRecordBufferSize];
  std::vector<std::string> records;
  records.push_back(formatted(
      trace::format_kernel_name(buffer, sizeof buffer, {0xf00, "_Z3addPfi with space"}), buffer));
  const std::vector<trace::ExecLaunches> execs{{0x77, 10}};
  const std::vector<trace::EagerLaunches> eager{{0xf00, 3, 96, 5}};
  trace::LaunchCountRecord phase = counts(trace::LaunchCountKind::Phase, execs, eager);
  phase.seq = 9;
  records.push_back(formatted(trace::format_launch_count(buffer, sizeof buffer, phase), buffer));
  const std::vector<trace::KernelArg> args{{1, 4, 0xffffffff}, {2, 8, 42}};
  trace::KernelArgsRecord a;
  a.exec = 0x77;
  a.order = 2;
  a.geometry_count = 7;
  a.args = args;
  records.push_back(formatted(trace::format_kernel_args(buffer, sizeof buffer, a), buffer));
  CHECK(records[1] == "n 9 0 0 phase x77:a kf00:3:60:5\n");
  CHECK(records[2] == "a 77 0 2 x0,0,0,0,0,0,0 1:4:ffffffff 2:8:2a\n");
  KernelSink sink;
  std::istringstream in(trace_of(records));
  CHECK(!trace::read_trace(in, "t", sink));
  CHECK(sink.names == std::vector<std::string>{"_Z3addPfi with space"});
  REQUIRE(sink.kinds.size() == 1);
  CHECK(sink.execs[0].launches == 10);
  CHECK(sink.eager[0].threads == 96);
  CHECK(sink.eager[0].stack == 5);
  CHECK(sink.args == args);
  CHECK(sink.args_order == 2);

  struct Skips : trace::TraceSink {
    int skipped = 0;
    void on_skipped_line(const trace::ReadError&) override { ++skipped; }
  } skips;
  std::istringstream bad(trace_of({"n 1 0 0 sometimes\n", "n 1 0 0 phase x1\n", "a 1 0 0 1:9:0\n",
                                   "a 1 0 0 1:1:100\n", "f 1\n"}));
  CHECK(!trace::read_trace(bad, "t", skips));
  CHECK(skips.skipped == 5);
}

TEST_CASE("graph coverage: kernels of replays against eager launches after warm-up") {
  GraphCoverage model;
  for (uint32_t i = 0; i < 3; ++i) model.on_graph_node(kernel_node(0x77, i));  // 3 kernels
  model.on_graph_node(kernel_node(0x77, 2));  // a second record of the same node: counted once
  model.on_kernel_name({0xf00, "_Z3addPfi"});
  model.on_launch_count(counts(trace::LaunchCountKind::Start, {}, {}));
  const std::vector<trace::ExecLaunches> ten{{0x77, 10}};
  const std::vector<trace::EagerLaunches> one_add{{0xf00, 1, 32, 4}};
  for (int phase = 0; phase < 5; ++phase)
    model.on_launch_count(counts(trace::LaunchCountKind::Phase, ten, one_add));
  trace::GraphRecord empty;  // walked, no node: NCCL's one-rank collectives make such graphs
  empty.exec = 0x88;
  model.on_graph(empty);
  model.on_launch_count(counts(trace::LaunchCountKind::Phase, {{0x88, 3}}, {}));
  model.on_launch_count(counts(trace::LaunchCountKind::Exit, {{0x99, 2}}, {}));  // never walked
  CHECK(model.seen());
  const CoverageInfo c = model.info([](uint32_t stack) {
    Location l;
    l.stack_id = stack;
    return l;
  });
  CHECK(c.graph_kernels == 150);
  CHECK(c.unwalked_launches == 2);
  CHECK(c.eager_kernels == 5);
  CHECK(c.phases == 5);
  CHECK(c.most_in_phase == 1);
  REQUIRE(c.eager.size() == 1);
  CHECK(c.eager[0].kernel == "_Z3addPfi");
  CHECK(c.eager[0].location.stack_id == 4);
  CHECK(c.eager[0].phases == 5);
  CHECK(c.share() == doctest::Approx(150.0 * 100 / 155));

  Report report;
  report.coverage.push_back(c);
  const std::string text = coverage_text(report);
  CHECK(text.find("96.7% of 155 kernels ran inside graph replays") != std::string::npos);
  CHECK(text.find("5 eager launches of add (") != std::string::npos);
  CHECK(render_json(report).find("\"share_percent\": 96.7") != std::string::npos);
  // SARIF's note per hot spot carries a fingerprint, as code scanning needs of every result.
  const std::string sarif = render_sarif(report, RenderOptions{});
  const size_t note = sarif.find("\"ruleId\": \"eager-launch-hot-spot\"");
  REQUIRE(note != std::string::npos);
  CHECK(sarif.find("capguardFingerprint/v1", note) != std::string::npos);
}

TEST_CASE("gate: --min-graph-coverage fails below the share, with the reason") {
  CoverageInfo half;
  half.pid = 7;
  half.graph_kernels = 50;
  half.eager_kernels = 50;
  const std::vector<CoverageInfo> coverage{half};
  const std::vector<Finding> none;
  GateInput input;
  input.findings = &none;
  input.coverage = &coverage;
  GateOptions options;
  CHECK(judge_gate(input, options).status == 0);  // off by default
  options.min_graph_coverage = 95;
  const GateResult fails = judge_gate(input, options);
  CHECK(fails.status == kExitFindings);
  REQUIRE(fails.reasons.size() == 1);
  CHECK(fails.reasons[0].message.find("50.0% in process 7, below --min-graph-coverage 95.0%") !=
        std::string::npos);
  options.min_graph_coverage = 50;
  CHECK(judge_gate(input, options).status == 0);
  CHECK(judge_gate(input, options).reasons.empty());

  const std::vector<CoverageInfo> nothing;  // no process replayed a graph: nothing to show
  input.coverage = &nothing;
  CHECK(judge_gate(input, options).status == kExitFindings);
  CoverageInfo blind = half;
  blind.measured = false;
  const std::vector<CoverageInfo> unknown{blind};
  input.coverage = &unknown;
  CHECK(judge_gate(input, options).status == kExitFindings);
}

namespace {
// A node's JSON report of one process whose kernels ran `graph` in replays, `eager` eagerly.
std::string node_report(uint32_t pid, uint64_t graph, uint64_t eager, const char* kernel) {
  Report node;
  node.processes.push_back(ProcessInfo{});
  node.processes[0].pid = pid;
  node.processes[0].command = "python step.py";
  CoverageInfo c;
  c.pid = pid;
  c.process = 1;
  c.graph_launches = graph / 10;
  c.graph_kernels = graph;
  c.eager_kernels = eager;
  c.phases = 3;
  c.most_in_phase = eager / 3;
  EagerSite site;
  site.kernel = kernel;
  site.launches = eager;
  site.phases = 3;
  site.location.frames.push_back(Frame{});
  site.location.frames[0].function = "step";
  site.location.frames[0].file = "step.py";
  site.location.frames[0].line = 16;
  site.location.user_frame = 0;
  c.eager.push_back(site);
  node.coverage.push_back(c);
  node.problems.push_back({Severity::Error, "graph coverage after warm-up is ...", false, true});
  return render_json(node);
}

Report read_back(const std::string& json) {
  const JsonParseResult parsed = parse_json(json, "node.json");
  REQUIRE(parsed.value);
  Report report;
  REQUIRE_FALSE(report_from_json(*parsed.value, report));
  return report;
}
}  // namespace

TEST_CASE("graph coverage survives a merge of node reports, the job's share from the counts") {
  // A rank that ran nearly everything as graphs, and a small one that ran mostly eagerly: the job
  // is 91.0% (1001 of 1100), the average of the shares would be 55.0%.
  Report job = read_back(node_report(11, 990, 10, "_Z4normPf"));
  REQUIRE(job.coverage.size() == 1);
  CHECK(job.coverage[0].process == 1);
  CHECK(job.coverage[0].eager_kernels == 10);
  REQUIRE(job.coverage[0].eager.size() == 1);
  CHECK(job.coverage[0].eager[0].kernel == "_Z4normPf");
  CHECK(job.coverage[0].eager[0].location.frames[0].line == 16);
  REQUIRE(job.problems.size() == 1);
  CHECK(job.problems[0].coverage_gate);  // the node's own verdict, marked for the merge to drop
  append_report(job, read_back(node_report(12, 11, 89, "_Z3addPf")));
  REQUIRE(job.coverage.size() == 2);
  CHECK(job.coverage[1].process == 2);  // moved past the first report's processes
  const CoverageInfo total = job_coverage(job.coverage);
  CHECK(total.graph_kernels == 1001);
  CHECK(total.eager_kernels == 99);
  CHECK(total.phases == 6);
  CHECK(total.share() == doctest::Approx(1001.0 * 100 / 1100));
  // Each process's figure stays, then the job's.
  const std::string text = coverage_text(job);
  CHECK(text.find("process 11: 99.0% of 1000 kernels") != std::string::npos);
  CHECK(text.find("process 12: 11.0% of 100 kernels") != std::string::npos);
  CHECK(text.find("the job (2 processes, their kernels counted together): 91.0% of 1100 kernels") !=
        std::string::npos);
  const std::string json = render_json(job);
  const size_t at = json.find("\"graph_coverage_job\"");
  REQUIRE(at != std::string::npos);
  CHECK(json.find("\"share_percent\": 91.0", at) != std::string::npos);
  // Read back again, the merged report is the same report (the job's figure is derived).
  CHECK(render_json(read_back(json)) == json);

  // The gate judges the job's share: it passes at 80% (the small rank alone is 11.0%) ...
  const std::vector<Finding> none;
  GateInput input;
  input.findings = &none;
  input.coverage = &job.coverage;
  input.processes = &job.processes;
  GateOptions options;
  options.min_graph_coverage = 80;
  const GateResult passes = judge_gate(input, options);
  CHECK(passes.status == 0);
  CHECK(passes.reasons.empty());
  // ... and fails at 95%, naming the job's figure and its lowest process.
  options.min_graph_coverage = 95;
  const GateResult fails = judge_gate(input, options);
  CHECK(fails.status == kExitFindings);
  REQUIRE(fails.reasons.size() == 1);
  CHECK(fails.reasons[0].coverage_gate);
  CHECK(fails.reasons[0].message ==
        "graph coverage after warm-up is 91.0% in the job's 2 processes, their kernels counted "
        "together (the lowest: 11.0% in process 12 (python step.py)), below --min-graph-coverage "
        "95.0%: 99 of 1100 kernels ran outside graph replays");
}

TEST_CASE("graph coverage read back from JSON is bounded and never trusted for its share") {
  std::string json = node_report(5, 100, 0, "_Z1kv");
  // More eager sites than a report keeps: the rest are counted, not read.
  std::string sites;
  for (size_t i = 0; i < kEagerSitesKept + 5; ++i)
    sites += std::string(i ? ", " : "") + R"({"kernel": "k", "launches": 1, "phases": 1})";
  const size_t eager = json.find("\"eager\": [");
  REQUIRE(eager != std::string::npos);
  const size_t end = json.rfind(']', json.find("\"other_sites\"", eager));
  json.replace(eager, end + 1 - eager, "\"eager\": [" + sites + "]");
  // A share that the counts do not give, counts past any real run, a negative one.
  json.replace(json.find("\"share_percent\": 100.0"), 22, "\"share_percent\": 3.0");
  json.replace(json.find("\"graph_kernels\": 100"), 20, "\"graph_kernels\": 9000000000000000");
  json.replace(json.find("\"eager_kernels\": 0"), 18, "\"eager_kernels\": -4");
  Report report = read_back(json);
  REQUIRE(report.coverage.size() == 1);
  CHECK(report.coverage[0].eager.size() == kEagerSitesKept);
  CHECK(report.coverage[0].other_sites == 5);
  CHECK(report.coverage[0].eager_kernels == 0);
  CHECK(coverage_share_words(report.coverage[0]) == "100.0%");
  // Saturating sums: a job of such processes neither wraps nor divides by zero.
  std::vector<CoverageInfo> many(4, report.coverage[0]);
  for (CoverageInfo& c : many) c.graph_kernels = UINT64_MAX / 2, c.eager_kernels = UINT64_MAX / 2;
  const CoverageInfo total = job_coverage(many);
  CHECK(total.graph_kernels == UINT64_MAX);
  CHECK(coverage_share_words(total) == "50.0%");
  // More coverage entries than processes: not a report capguard wrote.
  const size_t array = json.find("\"graph_coverage\": [");
  const size_t first = json.find('{', array);
  std::string twice = json;
  twice.insert(first, json.substr(first, json.find("\"other_sites\"", first) - first) +
                          "\"other_sites\": 0}, ");
  const JsonParseResult parsed = parse_json(twice, "twice.json");
  REQUIRE(parsed.value);
  Report bad;
  const auto problem = report_from_json(*parsed.value, bad);
  REQUIRE(problem);
  CHECK(problem->find("graph_coverage has 2 entries for 1 processes") != std::string::npos);
}
