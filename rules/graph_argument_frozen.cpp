// graph-argument-frozen: a kernel argument that changed on every eager run before the capture is
// one value in every replay (a step counter, a length, a random generator's seed or offset
// passed by value: Megatron-LM#5697, burn#5779, TensorRT-LLM#18207).
//
// Judged from the model's NodeArgsFacts when the exec's life ends: the node's own scalar
// arguments against the same kernel's last eager launches of the same geometry before the walk;
// a counter's shape only (each run moved it the same way, and the capture took the next value).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "rules/rule.h"
#include "rules/rule_options.h"

namespace capguard::rules {
namespace {

const trace::KernelArg* find_arg(const ArgLaunch& launch, uint32_t param) {
  for (const trace::KernelArg& arg : launch.args)
    if (arg.param == param) return &arg;
  return nullptr;
}

// An 8-byte value in user space: a pointer the walk did not find in a live allocation (a freed
// temporary, host memory), whose eager values differ because allocations do; not a counter.
bool looks_like_address(const trace::KernelArg& arg) {
  return arg.size == 8 && arg.value >= 0x10000 && arg.value < (uint64_t{1} << 47) &&
         arg.value % 4 == 0;
}

std::string value_text(const trace::KernelArg& arg) {
  // Signed for the sizes of int and long, as a counter or a length is written in code.
  if (arg.size == 4) return std::to_string(static_cast<int32_t>(static_cast<uint32_t>(arg.value)));
  if (arg.size == 8 && arg.value < (uint64_t{1} << 48)) return std::to_string(arg.value);
  return hex(arg.value);
}

// The value as code compares it: signed for 4 and 8 bytes (an int, a long, or a float's bits,
// whose order they keep for values of one sign).
int64_t ordered(const trace::KernelArg& arg) {
  if (arg.size == 4) return static_cast<int32_t>(static_cast<uint32_t>(arg.value));
  return static_cast<int64_t>(arg.value);  // 8 bytes signed; 1 and 2 are zero-extended
}

// A counter moves one way and the capture took its next value: the eager values (oldest first)
// and then the captured one are strictly monotonic. Sizes of a serving loop's warm-up (256, 512,
// 1024, then a graph for 128; or a graph for a size warmed up before) are not: each graph is
// specialized for its size on purpose.
bool continues_one_way(const std::vector<const trace::KernelArg*>& oldest_first,
                       const trace::KernelArg& captured) {
  int direction = 0;
  int64_t previous = ordered(*oldest_first.front());
  auto step = [&](int64_t next) {
    const int d = next > previous ? 1 : next < previous ? -1 : 0;
    if (d == 0 || (direction != 0 && d != direction)) return false;
    direction = d;
    previous = next;
    return true;
  };
  for (size_t i = 1; i < oldest_first.size(); ++i)
    if (!step(ordered(*oldest_first[i]))) return false;
  return step(ordered(captured));
}

struct Frozen {
  uint32_t param = 0;
  std::vector<std::string> eager;  // oldest first
  std::string graph;
};

bool check(const GraphFacts& facts, Draft& draft) {
  if (facts.kind != GraphFactKind::NodeArguments || facts.node_args == nullptr) return false;
  const NodeArgsFacts& f = *facts.node_args;
  // Refreshed in place (cudaGraphExecKernelNodeSetParams, cudaGraphExecUpdate) or replayed at
  // most once: nothing is replayed frozen.
  if (f.updated || f.launches < 2) return false;
  std::vector<const ArgLaunch*> runs;  // the same code: the node's kernel at the node's geometry
  for (const ArgLaunch& eager : f.args.eager)
    if (eager.same_geometry(f.args.graph)) runs.push_back(&eager);
  const uint64_t needed = option(OptionId::kFrozenEagerRuns);
  if (needed < 2 || runs.size() < needed) return false;
  runs.resize(needed);  // the most recent ones
  std::vector<Frozen> frozen;
  for (const trace::KernelArg& arg : f.args.graph.args) {
    if (looks_like_address(arg)) continue;
    Frozen found{arg.param, {}, value_text(arg)};
    std::vector<const trace::KernelArg*> oldest_first;
    for (const ArgLaunch* run : runs) {  // most recent first
      const trace::KernelArg* older = find_arg(*run, arg.param);
      if (older == nullptr || older->size != arg.size || looks_like_address(*older)) break;
      oldest_first.insert(oldest_first.begin(), older);
      found.eager.insert(found.eager.begin(), value_text(*older));
    }
    if (oldest_first.size() == runs.size() && continues_one_way(oldest_first, arg))
      frozen.push_back(std::move(found));
  }
  if (frozen.empty()) return false;
  std::string which;
  for (const Frozen& one : frozen) {
    if (!which.empty()) which += "; ";
    which += fmt::format("argument #{} was {} in its last {} eager runs and is {} in every replay",
                         one.param, fmt::join(one.eager, ", "), one.eager.size(), one.graph);
  }
  draft.message = fmt::format(
      "{} in graph exec #{} was captured with a value that kept changing before the capture: {}. "
      "The graph replays the captured value {} times",
      kernel_name(f.kernel), f.exec_serial, which,
      f.launches >= trace::kRecordedFirstLaunches ? fmt::format("at least {}", f.launches)
                                                  : std::to_string(f.launches));
  if (f.capture != nullptr) {
    draft.capture = f.capture.get();
    add_capture_begin(draft, *f.capture, "capture-begin");
  }
  draft.related.push_back({"instantiate",
                           fmt::format("graph exec #{} instantiated here", f.exec_serial),
                           f.instantiate});
  return true;
}

}  // namespace

extern const Rule kGraphArgumentFrozen;
constinit const Rule kGraphArgumentFrozen{
    RuleId::kGraphArgumentFrozen,  // its rules/rules.def row: id, severity, summary
    {"A graph keeps the kernel arguments it was captured with: a value passed by value (a step\n"
     "counter, a sequence length, a learning rate in a host float, a random generator's seed or\n"
     "offset read on the host) is the same in every replay. The graph runs and the numbers are\n"
     "wrong: every replay draws the same random numbers (Megatron-LM#5697: a private\n"
     "torch.Generator not registered with the graph), or steps with a stale counter.\n"
     "\n"
     "capguard compares each captured kernel's scalar arguments with the same kernel's last\n"
     "eager launches at the same launch geometry before the capture (warm-up iterations, a\n"
     "--rehearse region): an argument that moved one way on every one of them (eager-runs,\n"
     "default 3: 1, 2, 3) and was captured at its next value (4), in a graph replayed more than\n"
     "once, is reported at the capture. Sizes a serving loop warmed up and captured one graph\n"
     "each for (256, 512, 1024, then a graph for 128 or for 512) are not a counter. Values\n"
     "that did not change during warm-up, pointers, struct arguments (PyTorch's graph-safe\n"
     "PhiloxCudaState, which its RNG fills before each replay) and nodes the program sets again\n"
     "(cudaGraphExecKernelNodeSetParams, cudaGraphExecUpdate) are not.\n"
     "\n"
     "    for (int step = 0; step < 3; ++step) k<<<1, 32, 0, s>>>(x, step);  // warm-up\n"
     "    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);\n"
     "    k<<<1, 32, 0, s>>>(x, step);                  // step is 3 in every replay\n"
     "\n"
     "Fix: pass the value in device memory and update it before each replay (a cudaMemcpyAsync\n"
     "node in the graph, or a copy before cudaGraphLaunch); or set the node's parameters per\n"
     "replay with cudaGraphExecKernelNodeSetParams; for PyTorch, a device tensor updated with\n"
     "fill_/copy_ before g.replay(), and g.register_generator_state(gen) for a private\n"
     "generator.",
     "pass the value in device memory updated before each replay, or set it per replay with "
     "cudaGraphExecKernelNodeSetParams"},
    nullptr,  // on_call
    nullptr,  // on_open
    &check,   // on_graph
    Accepts::AnyCall,
    nullptr};  // on_rehearsal: judged from graphs, not calls

}  // namespace capguard::rules
