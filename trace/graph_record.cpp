#include "trace/graph_record.h"

#include "trace/reader.h"
#include "trace/record_text.h"

namespace capguard::trace {
namespace {
using record_text::Fields;
using record_text::Out;
using record_text::unescape;

// A node's 'x' (geometry: up to kMaxGeometry hex numbers, comma-separated) or 'v' (scalar
// hash) token, each at most once.
bool parse_shape(std::string_view field, GraphNodeRecord& r) {
  const bool geometry = field[0] == 'x';
  if (geometry ? r.geometry_count != 0 : r.has_scalars) return false;
  uint64_t values[kMaxGeometry] = {};
  uint32_t count = 0;
  size_t digits = 0;
  uint64_t v = 0;
  for (size_t i = 1; i <= field.size(); ++i) {
    if (i == field.size() || field[i] == ',') {
      if (digits == 0 || count >= kMaxGeometry) return false;
      values[count++] = v;
      v = 0;
      digits = 0;
      continue;
    }
    const char c = field[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0 || ++digits > 16) return false;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  if (!geometry) {
    if (count != 1) return false;
    r.has_scalars = true;
    r.scalar_hash = values[0];
    return true;
  }
  for (uint32_t i = 0; i < count; ++i) r.geometry[i] = values[i];
  r.geometry_count = count;
  return true;
}

}  // namespace

const char* graph_node_type_name(uint32_t type) {
  switch (type) {
    case kNodeKernel:
      return "kernel";
    case kNodeMemcpy:
      return "memcpy";
    case kNodeMemset:
      return "memset";
    case kNodeHost:
      return "host function";
    case kNodeGraph:
      return "child graph";
    case kNodeEmpty:
      return "empty";
    case kNodeWaitEvent:
      return "event wait";
    case kNodeEventRecord:
      return "event record";
    case 8:
      return "external semaphore signal";
    case 9:
      return "external semaphore wait";
    case kNodeMemAlloc:
      return "memory allocation";
    case kNodeMemFree:
      return "memory free";
    case 12:
      return "batch memory operation";
    case kNodeConditional:
      return "conditional";
    default:
      return "node of an unknown type";
  }
}

const char* graph_update_result_text(uint32_t result) {
  switch (result) {
    case 0:
      return "the update succeeded";
    case 1:
      return "the update failed for a reason CUDA does not name";
    case 2:
      return "the topology changed (nodes or edges added or removed)";
    case 3:
      return "a node's type changed";
    case 4:
      return "a kernel node's function changed in a way the update cannot take (e.g. another "
             "context, or dynamic parallelism)";
    case 5:
      return "a node's parameters changed in a way the update cannot take";
    case 6:
      return "something changed that the update does not support (e.g. a memset or memcpy of "
             "a different shape, an unsupported node type)";
    case 7:
      return "a kernel node's function changed to one with different attributes "
             "(cudaFuncSetAttribute)";
    case 8:
      return "the exec was instantiated with flags the update cannot honour";
    default:
      return "an update failure this capguard does not know";
  }
}

size_t format_graph_node(char* out, size_t capacity, const GraphNodeRecord& r) {
  Out o(out, capacity);
  o.put('g');
  o.space_hex(r.exec);
  o.space_hex(r.index);
  o.space_hex(r.depth);
  o.space_hex(r.type);
  o.escaped(r.name);
  size_t n = 0;
  for (const GraphRef& ref : r.refs) {
    if (++n > kMaxRefsPerRecord) break;
    o.put(' ');
    o.put(ref.role);
    o.hex(ref.index);
    o.put(':');
    o.hex(ref.address);
  }
  if (r.geometry_count != 0) {
    o.put(' ');
    o.put('x');
    for (uint32_t i = 0; i < r.geometry_count && i < kMaxGeometry; ++i) {
      if (i != 0) o.put(',');
      o.hex(r.geometry[i]);
    }
  }
  if (r.has_scalars) {
    o.put(' ');
    o.put('v');
    o.hex(r.scalar_hash);
  }
  return o.finish();
}

size_t format_graph(char* out, size_t capacity, const GraphRecord& r) {
  Out o(out, capacity);
  o.put('G');
  o.space_hex(r.exec);
  o.space_hex(r.graph);
  o.space_hex(r.nodes);
  o.space_hex(r.edges);
  o.space_hex(r.topology_hash);
  o.space_hex(r.complete ? 1 : 0);
  return o.finish();
}

size_t format_graph_update(char* out, size_t capacity, const GraphUpdateRecord& r) {
  Out o(out, capacity);
  o.put('u');
  o.space_hex(r.seq);
  o.space_hex(r.exec);
  o.space_hex(r.result);
  o.space_hex(r.error_type);
  o.escaped(r.name);
  return o.finish();
}

bool GraphRecordParser::parse(std::string_view line, TraceSink& sink, std::string& error) {
  const char type = line.empty() ? '\0' : line[0];
  Fields in(line);
  std::string_view field;
  if (type == 'g') {
    GraphNodeRecord r;
    if (!in.hex(r.exec) || !in.hex(r.index) || !in.hex(r.depth) || !in.hex(r.type)) {
      error = "graph-node record: exec, index, depth and type must be hex numbers";
      return false;
    }
    if (!in.next(field) || !unescape(field, name_)) {
      error = "graph-node record: the name is missing or badly escaped";
      return false;
    }
    refs_.clear();
    while (in.next(field)) {
      if (!field.empty() && (field[0] == 'x' || field[0] == 'v')) {
        if (!parse_shape(field, r)) {
          error = "graph-node record: bad geometry or scalar hash '" +
                  std::string(field.substr(0, 40)) + "'";
          return false;
        }
        continue;
      }
      GraphRef ref;
      const size_t colon = field.find(':');
      if (field.size() < 3 || (field[0] != 'a' && field[0] != 's' && field[0] != 'd') ||
          colon == std::string_view::npos || colon < 2 || colon + 1 >= field.size() ||
          field.size() - colon - 1 > 16 || colon - 1 > 8 || refs_.size() >= kMaxRefsPerRecord) {
        error =
            "graph-node record: bad address reference '" + std::string(field.substr(0, 40)) + "'";
        return false;
      }
      ref.role = field[0];
      uint64_t v = 0;
      bool ok = true;
      for (size_t i = 1; i < field.size(); ++i) {
        if (i == colon) {
          ref.index = static_cast<uint32_t>(v);
          v = 0;
          continue;
        }
        const char c = field[i];
        const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) ok = false;
        v = v << 4 | static_cast<uint64_t>(d < 0 ? 0 : d);
      }
      if (!ok) {
        error = "graph-node record: an address reference is not lower-case hex";
        return false;
      }
      ref.address = v;
      refs_.push_back(ref);
    }
    r.name = name_;
    r.refs = refs_;
    sink.on_graph_node(r);
    return true;
  }
  if (type == 'G') {
    GraphRecord r;
    uint32_t complete = 0;
    if (!in.hex(r.exec) || !in.hex(r.graph) || !in.hex(r.nodes) || !in.hex(r.edges) ||
        !in.hex(r.topology_hash) || !in.hex(complete) || complete > 1 || !in.at_end()) {
      error = "graph record: expected exec graph nodes edges topology-hash complete";
      return false;
    }
    r.complete = complete == 1;
    sink.on_graph(r);
    return true;
  }
  if (type == 'u') {
    GraphUpdateRecord r;
    if (!in.hex(r.seq) || !in.hex(r.exec) || !in.hex(r.result) || !in.hex(r.error_type) ||
        !in.next(field) || !unescape(field, name_) || !in.at_end()) {
      error = "graph-update record: expected seq exec result error-type name";
      return false;
    }
    r.name = name_;
    sink.on_graph_update(r);
    return true;
  }
  error = "not a graph record";
  return false;
}

}  // namespace capguard::trace
