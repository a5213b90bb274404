// A graph kernel node's scalar arguments beside the same kernel's last eager launches before
// the graph was walked ('a' records, format.h v9): the facts the frozen-value rule
// (rules/graph_argument_frozen.cpp) judges when the exec's life ends. No judgement here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/capture_model.h"
#include "trace/kernel_record.h"

namespace capguard {

struct ArgLaunch {  // one set of arguments: the node's own, or an eager launch's
  uint64_t geometry[7] = {};
  bool has_geometry = false;
  std::vector<trace::KernelArg> args;
  bool same_geometry(const ArgLaunch& other) const {
    if (!has_geometry || !other.has_geometry) return true;  // unknown: not told apart
    for (int i = 0; i < 7; ++i)
      if (geometry[i] != other.geometry[i]) return false;
    return true;
  }
};

struct NodeArgs {
  uint32_t node = 0;  // walk index
  ArgLaunch graph;
  std::vector<ArgLaunch> eager;  // most recent first
};

// What the rule is handed, at the exec's destroy or the process's end.
struct NodeArgsFacts {
  NodeArgs args;
  std::string kernel;  // the node's kernel (mangled)
  uint64_t exec = 0;
  uint32_t exec_serial = 0;
  uint64_t launches = 0;  // recorded launches of the exec (the interposer records its first few)
  bool updated = false;   // the node's parameters were set again (…NodeSetParams, an update)
  Site instantiate;
  std::shared_ptr<const Capture> capture;  // the capture that made the graph, when known
};

// Per exec: at most this many nodes with arguments, and eager launches per node.
inline constexpr size_t kMaxNodeArgsPerExec = 4096;
inline constexpr size_t kMaxEagerArgLaunches = 8;

}  // namespace capguard
