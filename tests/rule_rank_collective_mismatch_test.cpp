// rank-collective-mismatch: ranks of one job whose graphs hold other NCCL collectives, replay
// them in another order, or were killed replaying other graphs; the model that reads the
// collectives from the walk's records, and the facts' way through a JSON node report.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>

#include "model/rank_collectives.h"
#include "model/report_merge.h"
#include "report/json_report.h"
#include "report/render.h"
#include "rules/rank_collective_mismatch.h"

namespace capguard {
namespace {

constexpr const char* kAllReduce = "AllReduce_Sum_f32_RING_LL";
constexpr const char* kAllGather = "AllGather_RING_LL";

Location at_line(int line) {
  Location site;
  site.frames.push_back({0, "capture", "/job/train.py", line, "", 0});
  site.user_frame = 0;
  return site;
}

CollectiveGraph graph(int line, uint64_t key, std::vector<std::string> collectives) {
  return {at_line(line), key, std::move(collectives), false, 1};
}

// A job of `world` ranks, each holding `graphs` and replaying `replays` (indexes into them).
struct JobBuilder {
  Report report;
  RankCollectives& add_rank(uint32_t rank, uint32_t world, std::vector<CollectiveGraph> graphs,
                            std::vector<uint32_t> replays = {}) {
    ProcessInfo p;
    p.pid = 1000 + rank;
    p.who = WhoRan{"node" + std::to_string(rank / 8), rank, rank % 8, world, "RANK", "", ""};
    report.processes.push_back(p);
    RankCollectives c;
    c.pid = p.pid;
    c.process = static_cast<uint32_t>(report.processes.size());
    c.graphs = std::move(graphs);
    c.replays = std::move(replays);
    report.collectives.push_back(std::move(c));
    return report.collectives.back();
  }
};

std::vector<const Finding*> findings(const Report& report) {
  std::vector<const Finding*> out;
  for (const Finding& f : report.findings)
    if (f.rule == "rank-collective-mismatch") out.push_back(&f);
  return out;
}

}  // namespace

TEST_CASE("NCCL's kernels are read as their collectives, from mangled and plain names") {
  CHECK(nccl_collective(
            "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE") ==
        "AllReduce_Sum_f32_RING_LL");
  CHECK(nccl_collective("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)") == "SendRecv");
  CHECK(nccl_collective("ncclKernel_AllReduce_RING_LL_Sum_float") == "AllReduce_RING_LL_Sum_float");
  CHECK_FALSE(nccl_collective("_ZN2at6native29vectorized_elementwise_kernelILi4EEEvv"));
  CHECK_FALSE(nccl_collective("_Z999ncclDevKernel_AllReduce"));  // a length past the name
  CHECK_FALSE(nccl_collective("ncclDevKernel_"));
  CHECK_FALSE(nccl_collective(""));
}

TEST_CASE("the model keeps each graph's collectives in walk order and each exec's first launches") {
  RankCollectiveModel model;
  const auto node = [&](uint64_t exec, uint32_t index, std::string_view name, uint64_t grid) {
    trace::GraphNodeRecord r;
    r.exec = exec;
    r.index = index;
    r.type = trace::kNodeKernel;
    r.name = name;
    r.geometry[0] = grid;
    r.geometry_count = 1;
    model.on_graph_node(r);
  };
  Site site;
  site.known = true;
  site.stack = 7;
  // Two execs of one graph (the same content at one site), a third of another batch size.
  for (uint64_t exec : {0xa0, 0xa1, 0xb0}) {
    model.on_instantiate(exec);
    node(exec, 0, "_Z4gemmv", exec == 0xb0 ? 8 : 16);
    node(exec, 1, "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
         exec == 0xa0 ? 16 : 32);  // NCCL's grid is its channels: not the graph's shape
    node(exec, 2, "ncclDevKernel_AllGather_RING_LL", 16);
    model.on_walked(exec, 0x1234, site, 7);
  }
  model.on_instantiate(0xc0);  // no NCCL: not kept
  node(0xc0, 0, "_Z4gemmv", 16);
  model.on_walked(0xc0, 0x1234, site, 7);
  for (int i = 0; i < 6; ++i) model.on_launch(0xa0, 0x55, 10 + i);
  model.on_launch(0xb0, 0x66, 20);
  model.on_launch(0xc0, 0x55, 21);
  const RankCollectives facts = model.info([](const Site&) { return Location{}; });
  REQUIRE(facts.graphs.size() == 2);
  CHECK(facts.graphs[0].execs == 2);
  CHECK(facts.graphs[0].collectives == std::vector<std::string>{kAllReduce, kAllGather});
  CHECK(facts.graphs[0].key != facts.graphs[1].key);
  // The first kRecordedFirstLaunches of exec a0, then b0's; c0 holds no collective.
  CHECK(facts.replays == std::vector<uint32_t>{0, 0, 0, 0, 1});
  REQUIRE(facts.last.size() == 2);
  CHECK(facts.last[0].stream == 0x55);
  CHECK(facts.last[0].launch == 15);
  CHECK_FALSE(facts.ended);
}

TEST_CASE("ranks that captured and replayed the same graphs give no finding") {
  JobBuilder job;
  for (uint32_t r = 0; r < 2; ++r) job.add_rank(r, 2, {graph(12, 0x16, {kAllReduce})}, {0, 0, 0});
  rules::find_rank_collective_mismatches(job.report);
  CHECK(findings(job.report).empty());
}

TEST_CASE("a rank that captured a graph the others never did is named, with its collectives") {
  JobBuilder job;
  job.add_rank(0, 2, {graph(12, 0x16, {kAllReduce})});
  job.add_rank(1, 2, {graph(12, 0x16, {kAllReduce}), graph(12, 0x08, {kAllReduce})});
  rules::find_rank_collective_mismatches(job.report);
  const auto found = findings(job.report);
  REQUIRE(found.size() == 1);
  CHECK(found[0]->process == 2);
  CHECK(found[0]->severity == Severity::Error);
  CHECK(found[0]->message ==
        "rank 1 captured a graph at /job/train.py:12 that rank 0 never captured (1 collective: "
        "AllReduce_Sum_f32_RING_LL): replaying it, it would wait for collectives the other ranks "
        "never run, and the job hangs");
  REQUIRE(found[0]->related.size() == 1);
  CHECK(found[0]->related[0].role == "other-rank");
}

TEST_CASE("the same graph with other collectives names the first collective that differs") {
  JobBuilder job;
  job.add_rank(0, 3, {graph(12, 0x16, {kAllReduce, kAllReduce})});
  job.add_rank(1, 3, {graph(12, 0x16, {kAllReduce, kAllGather})});
  job.add_rank(2, 3, {graph(12, 0x16, {kAllReduce, kAllReduce})});
  rules::find_rank_collective_mismatches(job.report);
  const auto found = findings(job.report);
  REQUIRE(found.size() == 1);
  CHECK(found[0]->process == 2);
  CHECK(found[0]->message ==
        "rank 1 captured the graph at /job/train.py:12 with other NCCL collectives than ranks "
        "0, 2: replayed together, the ranks wait on each other's collectives and the job hangs; "
        "the first collective that differs is collective 2: AllGather_RING_LL on rank 1, "
        "AllReduce_Sum_f32_RING_LL on ranks 0, 2");
}

TEST_CASE("replays that part name the first step and what each rank replayed") {
  JobBuilder job;
  const std::vector<CollectiveGraph> both = {graph(12, 0x16, {kAllReduce}),
                                             graph(12, 0x08, {kAllReduce})};
  job.add_rank(0, 2, both, {0, 0, 1, 0});
  job.add_rank(1, 2, both, {0, 0, 0, 1});
  rules::find_rank_collective_mismatches(job.report);
  const auto found = findings(job.report);
  REQUIRE(found.size() == 1);
  CHECK(found[0]->api == "cudaGraphLaunch");
  CHECK(found[0]->message.starts_with("the ranks' graph replays part at replay 3 "));
  // One rank against one: the lower rank is the reference.
  CHECK(found[0]->process == 2);
  CHECK(found[0]->message.find("rank 1 replays the graph captured at /job/train.py:12 (1 "
                               "collective: AllReduce_Sum_f32_RING_LL) while rank 0 replays") !=
        std::string::npos);
  CHECK(found[0]->message.find("the element counts, which capguard does not record") !=
        std::string::npos);
}

TEST_CASE("a job killed while replaying says which graph each rank launched last") {
  JobBuilder job;
  const std::vector<CollectiveGraph> both = {graph(12, 0x16, {kAllReduce}),
                                             graph(12, 0x08, {kAllReduce})};
  for (uint32_t r = 0; r < 4; ++r) {
    RankCollectives& c = job.add_rank(r, 4, both);
    c.ended = false;
    c.last = {{0x55, r == 3 ? 1u : 0u, 40}, {0x66, 0, 12}};
  }
  rules::find_rank_collective_mismatches(job.report);
  const auto found = findings(job.report);
  REQUIRE(found.size() == 1);
  CHECK(found[0]->process == 4);
  CHECK(found[0]->message.starts_with(
      "the job ended while replaying (4 of its traces have no end: killed, by a timeout or "
      "NCCL's watchdog): rank 3 last launched the graph captured at /job/train.py:12"));
  CHECK(found[0]->message.find("while ranks 0-2 last launched") != std::string::npos);
  // The same job ended normally: what was launched last says nothing.
  for (RankCollectives& c : job.report.collectives) c.ended = true;
  job.report.findings.clear();
  rules::find_rank_collective_mismatches(job.report);
  CHECK(findings(job.report).empty());
}

TEST_CASE("no finding for one process, ranks without NCCL graphs, or unranked processes") {
  JobBuilder one;
  one.add_rank(0, 1, {graph(12, 0x16, {kAllReduce})});
  rules::find_rank_collective_mismatches(one.report);
  CHECK(one.report.findings.empty());
  JobBuilder unranked;
  unranked.add_rank(0, 2, {graph(12, 0x16, {kAllReduce})});
  unranked.add_rank(1, 2, {graph(12, 0x08, {kAllReduce})});
  for (ProcessInfo& p : unranked.report.processes) p.who->rank.reset();
  rules::find_rank_collective_mismatches(unranked.report);
  CHECK(unranked.report.findings.empty());
  JobBuilder pipeline;  // stages capturing at their own lines are not compared
  pipeline.add_rank(0, 2, {graph(12, 0x16, {kAllReduce})});
  pipeline.add_rank(1, 2, {graph(40, 0x08, {"SendRecv"})});
  rules::find_rank_collective_mismatches(pipeline.report);
  CHECK(pipeline.report.findings.empty());
}

TEST_CASE("1,024 ranks: none when they match, one finding naming the rank that differs") {
  const auto build = [](std::optional<uint32_t> odd) {
    JobBuilder job;
    for (uint32_t r = 0; r < 1024; ++r) {
      std::vector<CollectiveGraph> graphs = {graph(12, 0x16, {kAllReduce}),
                                             graph(12, 0x20, {kAllReduce, kAllGather})};
      if (odd && r == *odd) graphs.push_back(graph(12, 0x08, {kAllReduce}));
      std::vector<uint32_t> replays(64, 0);
      if (odd && r == *odd) replays[40] = 2;
      job.add_rank(r, 1024, std::move(graphs), std::move(replays));
    }
    return job;
  };
  JobBuilder matching = build(std::nullopt);
  const auto start = std::chrono::steady_clock::now();
  rules::find_rank_collective_mismatches(matching.report);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  CHECK(matching.report.findings.empty());
  std::printf("rank-collective-mismatch: 1,024 matching ranks judged in %.1f ms\n", ms);
  JobBuilder odd = build(517);
  rules::find_rank_collective_mismatches(odd.report);
  const auto found = findings(odd.report);
  REQUIRE(found.size() == 2);  // the graph only it captured, and the replay where it parts
  CHECK(
      found[0]->message.starts_with("rank 517 captured a graph at /job/train.py:12 that ranks "
                                    "0-516, 518-1023 never captured"));
  CHECK(found[1]->message.starts_with("the ranks' graph replays part at replay 41 "));
  CHECK(found[1]->process == 518);
}

TEST_CASE("a merge of node reports judges the job's ranks together, from the JSON") {
  // Two nodes of one rank each: neither can see the mismatch alone.
  const auto node = [](uint32_t rank, std::vector<CollectiveGraph> graphs) {
    JobBuilder job;
    job.add_rank(rank, 2, std::move(graphs));
    rules::find_rank_collective_mismatches(job.report);
    CHECK(job.report.findings.empty());
    const JsonParseResult parsed = parse_json(render_json(job.report), "node.json");
    REQUIRE(parsed.value);
    Report back;
    REQUIRE_FALSE(report_from_json(*parsed.value, back));
    return back;
  };
  Report merged = node(0, {graph(12, 0x16, {kAllReduce})});
  append_report(merged, node(1, {graph(12, 0x16, {kAllReduce}), graph(12, 0x08, {kAllReduce})}));
  REQUIRE(merged.collectives.size() == 2);
  CHECK(merged.collectives[1].process == 2);
  CHECK(merged.collectives[1].graphs[1].key == 0x08);
  CHECK(merged.collectives[1].graphs[1].site.frames.at(0).line == 12);
  rules::find_rank_collective_mismatches(merged);
  const auto found = findings(merged);
  REQUIRE(found.size() == 1);
  CHECK(found[0]->message.starts_with("rank 1 captured a graph at /job/train.py:12"));
}

TEST_CASE("a node report's collective facts are untrusted: bad indexes and sizes are refused") {
  const auto refused = [](const std::string& collectives) {
    const std::string text =
        R"({"tool": "capguard", "processes": [{"pid": 7}], "findings": [], "collective_graphs": )" +
        collectives + "}";
    const JsonParseResult parsed = parse_json(text, "node.json");
    REQUIRE(parsed.value);
    Report report;
    return report_from_json(*parsed.value, report).value_or("");
  };
  CHECK(refused(R"([{"process": 2, "graphs": []}])").find("process index") != std::string::npos);
  CHECK(refused(R"([{"process": 1, "graphs": [], "replays": [0]}])").find("replay") !=
        std::string::npos);
  CHECK(refused(R"([{"process": 1, "graphs": [{"collectives": [""]}]}])").find("collective") !=
        std::string::npos);
  std::string many = R"([{"process": 1, "graphs": [{"collectives": ["A"]}], "replays": [)";
  for (size_t i = 0; i <= kMaxReplaysKept; ++i) many += i == 0 ? "0" : ",0";
  CHECK(refused(many + "]}]").find("more than") != std::string::npos);
  CHECK(refused(R"([{"process": 1, "graphs": [{"collectives": ["A"]}], "replays": [0]}])").empty());
}

}  // namespace capguard
