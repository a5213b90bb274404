#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "trace/graph_record.h"
#include "trace/reader.h"

using namespace capguard::trace;

namespace {

struct GraphSink : TraceSink {
  int skipped = 0;
  void on_skipped_line(const ReadError&) override { ++skipped; }
  std::vector<GraphNodeRecord> nodes;
  std::vector<std::string> names;
  std::vector<std::vector<GraphRef>> refs;
  std::vector<GraphRecord> graphs;
  std::vector<GraphUpdateRecord> updates;
  void on_graph_node(const GraphNodeRecord& r) override {
    nodes.push_back(r);
    names.emplace_back(r.name);
    refs.emplace_back(r.refs.begin(), r.refs.end());
  }
  void on_graph(const GraphRecord& r) override { graphs.push_back(r); }
  void on_graph_update(const GraphUpdateRecord& r) override {
    updates.push_back(r);
    names.emplace_back(r.name);
  }
};

}  // namespace

TEST_CASE("graph records: written, read back, rejected when damaged") {
  const GraphRef refs[] = {{'a', 0, 0x7f0000001000}, {'s', 0, 0x10000}, {'d', 0, 0xffff0000}};
  GraphNodeRecord node;
  node.exec = 0x55aa;
  node.index = 3;
  node.depth = 1;
  node.type = kNodeKernel;
  node.name = "_Z4bump Pi%";  // a space and a '%' are escaped
  node.refs = refs;
  std::vector<char> buffer(kGraphRecordBufferSize);
  std::string text = "v 0.1.0 3\np 1 1 0\n";
  text.append(buffer.data(), format_graph_node(buffer.data(), buffer.size(), node));
  GraphRecord graph{0x55aa, 0x66bb, 4, 3, 0x1234, false};
  text.append(buffer.data(), format_graph(buffer.data(), buffer.size(), graph));
  GraphUpdateRecord update{9, 0x55aa, 3, kNodeMemset, ""};
  text.append(buffer.data(), format_graph_update(buffer.data(), buffer.size(), update));
  CHECK(text.find("g 55aa 3 1 0 _Z4bump%20Pi%25 a0:7f0000001000 s0:10000 d0:ffff0000\n") !=
        std::string::npos);

  std::istringstream in(text);
  GraphSink sink;
  const auto error = read_trace(in, "t.trace", sink);
  REQUIRE_MESSAGE(!error, error->to_string());
  REQUIRE(sink.nodes.size() == 1);
  CHECK(sink.names[0] == "_Z4bump Pi%");
  CHECK(sink.refs[0] == std::vector<GraphRef>(std::begin(refs), std::end(refs)));
  CHECK(sink.nodes[0].depth == 1u);
  REQUIRE(sink.graphs.size() == 1);
  CHECK(sink.graphs[0].topology_hash == 0x1234u);
  CHECK_FALSE(sink.graphs[0].complete);
  REQUIRE(sink.updates.size() == 1);
  CHECK(sink.updates[0].error_type == kNodeMemset);

  for (const char* bad : {"g 1 0 0 0\n", "g 1 0 0 0 name x1:2\n", "g 1 0 0 0 name a1:zz\n",
                          "G 1 2 3\n", "G 1 2 3 4 5 2\n", "u 1 2 3\n", "g 1 0 0 0 %zz\n"}) {
    std::istringstream damaged(std::string("v 0.1.0 3\np 1 1 0\n") + bad);
    GraphSink s;
    // A damaged line is skipped with a message, and reading goes on (reader.h).
    CHECK_MESSAGE(!read_trace(damaged, "t.trace", s).has_value(), bad);
    CHECK_MESSAGE(s.skipped == 1, bad);
    CHECK_MESSAGE(s.nodes.size() + s.graphs.size() + s.updates.size() == 0, bad);
  }
}

TEST_CASE("graph records: a node's geometry and scalar hash (v4) round-trip; bad ones are skipped") {
  GraphNodeRecord node;
  node.exec = 0x1;
  node.type = kNodeKernel;
  node.name = "k";
  const uint64_t geometry[] = {128, 1, 1, 256, 1, 1, 0};
  std::copy(std::begin(geometry), std::end(geometry), node.geometry);
  node.geometry_count = 7;
  node.has_scalars = true;
  node.scalar_hash = 0xfeedface;
  std::vector<char> buffer(kGraphRecordBufferSize);
  std::string text = "v 0.1.0 4\np 1 1 0\n";
  text.append(buffer.data(), format_graph_node(buffer.data(), buffer.size(), node));
  CHECK(text.find("g 1 0 0 0 k x80,1,1,100,1,1,0 vfeedface\n") != std::string::npos);
  std::istringstream in(text);
  GraphSink sink;
  REQUIRE_FALSE(read_trace(in, "t.trace", sink).has_value());
  REQUIRE(sink.nodes.size() == 1);
  CHECK(sink.nodes[0].geometry_count == 7u);
  CHECK(std::vector<uint64_t>(sink.nodes[0].geometry, sink.nodes[0].geometry + 7) ==
        std::vector<uint64_t>(std::begin(geometry), std::end(geometry)));
  CHECK(sink.nodes[0].has_scalars);
  CHECK(sink.nodes[0].scalar_hash == 0xfeedfaceu);

  for (const char* bad : {"g 1 0 0 0 k x\n", "g 1 0 0 0 k x1,\n", "g 1 0 0 0 k x1,2,3,4,5,6,7,8\n",
                          "g 1 0 0 0 k x1 x2\n", "g 1 0 0 0 k v1,2\n", "g 1 0 0 0 k v\n",
                          "g 1 0 0 0 k vZ\n", "g 1 0 0 0 k x11111111111111111\n"}) {
    std::istringstream damaged(std::string("v 0.1.0 4\np 1 1 0\n") + bad);
    GraphSink s;
    CHECK_MESSAGE(!read_trace(damaged, "t.trace", s).has_value(), bad);
    CHECK_MESSAGE(s.skipped == 1, bad);
    CHECK_MESSAGE(s.nodes.empty(), bad);
  }
}

TEST_CASE("graph records: a node with more refs than one record holds is cut, never too long") {
  std::vector<GraphRef> refs(kMaxRefsPerRecord + 10, GraphRef{'a', 0xffffffff, ~0ull});
  GraphNodeRecord node;
  node.name = std::string(5000, '%');
  node.refs = refs;
  std::vector<char> buffer(kGraphRecordBufferSize);
  const size_t n = format_graph_node(buffer.data(), buffer.size(), node);
  REQUIRE(n != 0);
  CHECK(n <= kMaxLineLength);
}
