// The graph records of the trace (format.h, v3): what an instantiated graph's nodes reference
// ('g', 'G') and why a cudaGraphExecUpdate was rejected ('u'). The interposer formats them into
// a caller's buffer (no allocation); the reader parses them for the analyzer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace capguard::trace {

// An address a graph node uses: a kernel argument (role 'a', index = parameter), a copy's
// source ('s') or destination ('d'), a memset's destination ('d').
struct GraphRef {
  char role = 'a';
  uint32_t index = 0;
  uint64_t address = 0;
  bool operator==(const GraphRef&) const = default;
};

// What fixes a node's shape (v4): a kernel's grid x, y, z, block x, y, z and dynamic shared
// bytes; a memcpy's width in bytes, height and depth; a memset's width, height and element size.
inline constexpr size_t kMaxGeometry = 7;

struct GraphNodeRecord {
  uint64_t exec = 0;
  uint32_t index = 0;     // walk order
  uint32_t depth = 0;     // 0 top level, 1+ inside child graphs
  uint32_t type = 0;      // CUgraphNodeType
  std::string_view name;  // kernel function name; empty for other nodes
  std::span<const GraphRef> refs;
  uint64_t geometry[kMaxGeometry] = {};  // v4; geometry_count 0 when unknown
  uint32_t geometry_count = 0;
  // A kernel's arguments that are not addresses the node holds (scalars, pointers outside any
  // allocation), hashed: two captures that differ only here differ in a scalar argument (v4).
  bool has_scalars = false;
  uint64_t scalar_hash = 0;
};

struct GraphRecord {
  uint64_t exec = 0;
  uint64_t graph = 0;
  uint32_t nodes = 0;
  uint32_t edges = 0;
  uint64_t topology_hash = 0;
  bool complete = true;  // false: the walk stopped at its bounds (nodes, depth)
};

struct GraphUpdateRecord {
  uint64_t seq = 0;  // the cudaGraphExecUpdate event this explains
  uint64_t exec = 0;
  uint32_t result = 0;         // cudaGraphExecUpdateResult
  uint32_t error_type = 0xff;  // CUgraphNodeType of the error node; 0xff none
  std::string_view name;       // the error node's kernel name, when it is a kernel
};

// CUgraphNodeType values (cuda.h) the analyzer names.
enum GraphNodeType : uint32_t {
  kNodeKernel = 0,
  kNodeMemcpy = 1,
  kNodeMemset = 2,
  kNodeHost = 3,
  kNodeGraph = 4,
  kNodeEmpty = 5,
  kNodeWaitEvent = 6,
  kNodeEventRecord = 7,
  kNodeMemAlloc = 10,
  kNodeMemFree = 11,
  kNodeConditional = 13,
};
const char* graph_node_type_name(uint32_t type);  // "kernel", "memcpy", ... "node type 9"
// cudaGraphExecUpdateResult, in words: "the topology changed", ...
const char* graph_update_result_text(uint32_t result);

// Refs per 'g' record; a node with more is written as several records of the same index.
inline constexpr size_t kMaxRefsPerRecord = 1024;
inline constexpr size_t kMaxGraphNameLength = 512;  // bytes of a kernel name (escaped: x3)
// A buffer this large always holds one record.
inline constexpr size_t kGraphRecordBufferSize =
    64 + kMaxGraphNameLength * 3 + kMaxRefsPerRecord * 28;

// Each returns the record's length including its '\n' (0 if it does not fit `capacity`).
size_t format_graph_node(char* out, size_t capacity, const GraphNodeRecord& record);
size_t format_graph(char* out, size_t capacity, const GraphRecord& record);
size_t format_graph_update(char* out, size_t capacity, const GraphUpdateRecord& record);

class TraceSink;

// Parses a 'g', 'G' or 'u' line (without '\n') and hands it to the sink. False with `error`
// set when it breaks the grammar.
class GraphRecordParser {
 public:
  bool parse(std::string_view line, TraceSink& sink, std::string& error);

 private:
  std::vector<GraphRef> refs_;
  std::string name_;
};

}  // namespace capguard::trace

namespace capguard::trace {
// The interposer records each exec's first launches outside captures (and every launch of an
// exec a free hit); the analyzer knows an exec with this many recorded launches may have had
// more.
inline constexpr uint32_t kRecordedFirstLaunches = 4;
}  // namespace capguard::trace
