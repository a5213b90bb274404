// Who ran a process: the 'h' record written and read back, and the words for it.
#include "model/who_ran.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "trace/reader.h"
#include "trace/writer.h"

namespace capguard {
namespace {

using Vars = std::vector<std::pair<std::string_view, std::string_view>>;

struct WhoSink : trace::TraceSink {
  std::string host;
  std::vector<std::pair<std::string, std::string>> vars;
  int records = 0;
  void on_who_ran(const trace::WhoRanRecord& w) override {
    ++records;
    host = std::string(w.host);
    for (const auto& v : w.vars) vars.emplace_back(v.name, v.value);
  }
};

}  // namespace

TEST_CASE("torchrun's variables: rank, local rank, world size; the local rank's GPU") {
  const WhoRan who =
      who_ran_from("a17", Vars{{"RANK", "3"}, {"LOCAL_RANK", "3"}, {"WORLD_SIZE", "8"}});
  CHECK(who.rank == 3u);
  CHECK(who.rank_from == "RANK");
  CHECK(who.world_size == 8u);
  CHECK(who.gpu == "3");
  CHECK(who_label(who) == "rank 3 (node a17, GPU 3)");
}

TEST_CASE("torchrun under srun: torchrun's RANK wins over SLURM_PROCID, whatever the order") {
  const WhoRan who =
      who_ran_from("n1", Vars{{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"RANK", "9"}});
  CHECK(who.rank == 9u);
  CHECK(who.world_size == 2u);  // torchrun's WORLD_SIZE is not set: Slurm's
}

TEST_CASE("MPI and CUDA_VISIBLE_DEVICES: one visible device is the GPU; a list is indexed") {
  WhoRan who = who_ran_from("h", Vars{{"OMPI_COMM_WORLD_RANK", "5"},
                                      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                      {"CUDA_VISIBLE_DEVICES", "6"}});
  CHECK(who.rank == 5u);
  CHECK(who.gpu == "6");
  who = who_ran_from(
      "h", Vars{{"PMI_RANK", "2"}, {"MPI_LOCALRANKID", "1"}, {"CUDA_VISIBLE_DEVICES", "4,5"}});
  CHECK(who.gpu == "5");
  who =
      who_ran_from("h", Vars{{"RANK", "x"}, {"LOCAL_RANK", "7"}, {"CUDA_VISIBLE_DEVICES", "0,1"}});
  CHECK_FALSE(who.rank);   // not a number: no rank
  CHECK(who.gpu.empty());  // the local rank is past the visible devices
  CHECK(who_label(who) == "node h");
  CHECK(who_label(who_ran_from("", Vars{})).empty());
}

TEST_CASE("the 'h' record: host and variables written once, read back; unknown names skipped") {
  const char* names[] = {"RANK", "CUDA_VISIBLE_DEVICES", "LOCAL_RANK"};
  const char* values[] = {"3", "GPU-1 2,3", nullptr};  // LOCAL_RANK unset: left out
  char dir_template[] = "/tmp/capguard-who-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  std::string path;
  {
    trace::TraceWriter writer;
    REQUIRE(writer.open(dir_template, 77, 1, 0, "a17.cluster"));
    path = writer.path();
    CHECK(path == std::string(dir_template) + "/capguard.77.a17.cluster.trace");  // dots kept
    writer.write_command("python train.py");
    writer.write_who_ran("a17.cluster", names, values, 3);
  }
  WhoSink sink;
  CHECK_FALSE(trace::read_trace(path, sink).has_value());
  CHECK(sink.records == 1);
  CHECK(sink.host == "a17.cluster");
  CHECK(sink.vars == std::vector<std::pair<std::string, std::string>>{
                         {"RANK", "3"}, {"CUDA_VISIBLE_DEVICES", "GPU-1 2,3"}});
  std::remove(path.c_str());
  std::remove(dir_template);

  std::istringstream in("v 0.1.0 8\np 1 1 0\nh h NOT_A_LAUNCHER=1 RANK=2\n");
  WhoSink other;
  CHECK_FALSE(trace::read_trace(in, "t.trace", other).has_value());
  CHECK(other.vars == std::vector<std::pair<std::string, std::string>>{{"RANK", "2"}});
}

TEST_CASE("the host in a trace's name: only [A-Za-z0-9._-], no leading dot, at most 64 bytes") {
  char out[128];
  CHECK(trace::TraceWriter::file_name_host("a17.example/x y", out, sizeof out) == 15);
  CHECK(std::string(out) == "a17.example_x_y");  // as $(hostname) names it
  CHECK(trace::TraceWriter::file_name_host("..", out, sizeof out) == 2);
  CHECK(std::string(out) == "_.");
  CHECK(trace::TraceWriter::file_name_host("gpu1_a", out, sizeof out) == 6);
  CHECK(std::string(out) == "gpu1_a");
  const std::string long_host(100, 'h');
  CHECK(trace::TraceWriter::file_name_host(long_host.c_str(), out, sizeof out) == 64);
  CHECK(trace::TraceWriter::file_name_host(nullptr, out, sizeof out) == 0);
}

TEST_CASE(
    "the host a trace names: CAPGUARD_HOST where set, cut to the buffer; else the machine's") {
  const char* before = std::getenv("CAPGUARD_HOST");
  const std::string saved = before != nullptr ? before : "";
  char out[8];
  setenv("CAPGUARD_HOST", "nodeA-with-a-long-name", 1);
  trace::TraceWriter::read_host(out, sizeof out);
  CHECK(std::string(out) == "nodeA-w");
  unsetenv("CAPGUARD_HOST");
  char machine[256] = {};
  REQUIRE(gethostname(machine, sizeof machine - 1) == 0);
  char host[256];
  trace::TraceWriter::read_host(host, sizeof host);
  CHECK(std::string(host) == machine);
  if (before != nullptr) setenv("CAPGUARD_HOST", saved.c_str(), 1);
}

}  // namespace capguard
