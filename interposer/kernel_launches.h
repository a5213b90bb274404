// What the launch hooks and the graph-launch guard note per kernel function, for the trace's
// kernel records (trace/kernel_record.h, format v9):
// - graph coverage: from the first graph launch on, eager launches per function (and the stack
//   of its first launch in each phase) and graph launches per exec, written as an 'n' record at
//   the graph launch that ends a phase of eager launches, and at exit;
// - frozen values: each function's last few eager launches' scalar arguments (at most 8 of at
//   most 8 bytes each, the layout asked once per function), kept in memory only and written
//   beside a kernel node of that function when a graph is walked ('a' records).
// Fixed tables, no lock on the launch path, no allocation, nothing judged; a launch made while
// a capture is open is not eager and is not noted. A function or exec past a table's bound is
// not noted (the coverage then undercounts; the trace says nothing false).
#pragma once

#include <cstddef>
#include <cstdint>

#include "trace/kernel_record.h"
#include "trace/writer.h"

namespace capguard::interposer::kernel_launches {

struct Listener {
  void* context = nullptr;
  bool (*capturing)(void* context) = nullptr;       // a capture is open in the process
  uint32_t (*stack_here)(void* context) = nullptr;  // the caller's stack id (0: none)
  uint64_t (*next_seq)(void* context) = nullptr;    // the next record's seq
  uint32_t (*tid)() = nullptr;
  uint64_t (*now_ns)() = nullptr;
  trace::TraceWriter* writer = nullptr;
  // The driver's answers, asked with the recorder's own calls unrecorded (in tool). A launch's
  // handle is a CUfunction or, from the runtime (cuLibraryGetKernel), a CUkernel: each answer
  // takes either.
  int (*param_info)(void* function, size_t index, size_t* offset, size_t* size) = nullptr;
  int (*function_name)(const char** name, void* function) = nullptr;
  // A CUkernel's CUfunction in the current context (nonzero: the handle is no CUkernel). A
  // graph's kernel node may name the CUfunction of the CUkernel its capture launched.
  int (*function_of_kernel)(void** function, void* kernel) = nullptr;
  bool launches_seen = true;  // false: launches bypass the hooks ('blind')
};
void listen(const Listener& listener);

// From the launch hooks, for every kernel launch outside the gate's observed path and inside it.
void on_launch(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
               unsigned bz, unsigned shared, void** params);
// From the graph-launch guard, after the launch.
void on_graph_launch(uint64_t exec);
// At exit: what was counted since the last record.
void flush_at_exit();

// From the graph walk, after a kernel node's 'g' record: its own scalar arguments (`node_args`,
// order 0, with its geometry) and the function's last eager launches (order 1...). The node's
// `function` and `kernel` (either may be null) are matched against the launches' handles and
// their CUfunctions.
void write_node_args(trace::TraceWriter& writer, uint64_t exec, uint32_t index, void* function,
                     void* kernel, const uint64_t geometry[7], const trace::KernelArg* node_args,
                     size_t node_arg_count);

void reset_for_tests();

}  // namespace capguard::interposer::kernel_launches
