// replay-after-free: a graph launch whose nodes hold memory freed since instantiation.
#include <fmt/format.h>

#include "rules/rule.h"

namespace capguard::rules {
namespace {

std::string size_text(uint64_t size) {
  return size != 0 ? fmt::format("{} bytes", size) : std::string("size unknown");
}

// A block a framework's allocator took back (trace/framework_memory.def): no cudaFree happened;
// the allocator keeps the memory and gives it to the program's next tensor.
void word_framework_block(const GraphFacts& facts, const GraphHit& hit, Draft& draft) {
  const ExecState& exec = *facts.exec;
  draft.message = fmt::format(
      "{} replays {}: its {} holds {}, in a block of {} ({} at {}) that the program gave back "
      "after the graph was instantiated ({}: no cudaFree, the allocator keeps the memory for the "
      "program's next tensor){}. The address was baked into the graph at capture; this replay {}",
      describe_site(facts.where), describe_exec(exec), describe_node_ref(exec, hit.ref),
      hex(hit.ref.address), hit.block.owner, size_text(hit.block.size), hex(hit.block.base),
      hit.free.api,
      hit.reused_by ? fmt::format(" and since handed to another tensor ({} at {})",
                                  size_text(hit.reused_by->size), hex(hit.reused_by->base))
                    : std::string(),
      hit.reused_by ? "reads or writes that tensor's memory"
                    : "reads or writes memory the allocator may hand to any tensor");
  if (facts.more_hits != 0)
    draft.message += fmt::format(" ({} more released address(es) in this graph)", facts.more_hits);
  draft.related.push_back({"free",
                           fmt::format("given back to {}: {} at {}", hit.block.owner,
                                       size_text(hit.block.size), hex(hit.block.base)),
                           hit.free});
  if (hit.reused_by && hit.reused_by->alloc.known) {
    draft.related.push_back({"reallocation",
                             fmt::format("handed to a new tensor: {} at {}",
                                         size_text(hit.reused_by->size), hex(hit.reused_by->base)),
                             hit.reused_by->alloc});
  }
  add_exec_sites(draft, exec);
}

bool check(const GraphFacts& facts, Draft& draft) {
  if (facts.kind != GraphFactKind::ReplayAfterFree || facts.exec == nullptr || !facts.hit)
    return false;
  const ExecState& exec = *facts.exec;
  const GraphHit& hit = *facts.hit;
  if (!hit.block.owner.empty()) {
    word_framework_block(facts, hit, draft);
    return true;
  }
  const char* memory = hit.block.host ? "pinned host memory" : "device memory";
  draft.message = fmt::format(
      "{} replays {}: its {} holds {}, {} freed by {} after the graph was instantiated{}. "
      "The address was baked into the graph at capture; this replay {}",
      describe_site(facts.where), describe_exec(exec), describe_node_ref(exec, hit.ref),
      hex(hit.ref.address), memory, hit.free.api,
      hit.reused_by ? fmt::format(" and since handed to another allocation ({} of {} at {})",
                                  hit.reused_by->alloc.api, size_text(hit.reused_by->size),
                                  hex(hit.reused_by->base))
                    : std::string(),
      hit.reused_by ? "reads or writes memory that now belongs to another allocation"
                    : "reads or writes freed memory");
  if (facts.more_hits != 0)
    draft.message += fmt::format(" ({} more freed address(es) in this graph)", facts.more_hits);
  draft.related.push_back({"free",
                           fmt::format("{} of {} at {} ({})", hit.free.api, memory,
                                       hex(hit.block.base), size_text(hit.block.size)),
                           hit.free});
  if (hit.block.alloc.known) {
    draft.related.push_back({"allocation",
                             fmt::format("{} allocated {} at {}", hit.block.alloc.api,
                                         size_text(hit.block.size), hex(hit.block.base)),
                             hit.block.alloc});
  }
  if (hit.reused_by && hit.reused_by->alloc.known) {
    draft.related.push_back({"reallocation",
                             fmt::format("{} reused the address", hit.reused_by->alloc.api),
                             hit.reused_by->alloc});
  }
  add_exec_sites(draft, exec);
  return true;
}

}  // namespace

extern const Rule kReplayAfterFree;
constinit const Rule kReplayAfterFree{
    RuleId::kReplayAfterFree,
    {"Kernel arguments, memcpy and memset addresses are baked into a CUDA graph when it is\n"
     "captured (or built). Freeing such a buffer - cudaFree, cudaFreeAsync, cuMemFree[Async],\n"
     "cuMemUnmap, cudaFreeHost, cuMemFreeHost, cudaHostUnregister - while an exec made from the\n"
     "graph is still launched makes every later replay read or write freed memory, or memory\n"
     "that now belongs to another allocation (cudaMalloc often hands the same address back).\n"
     "CUDA does not refuse the launch; the replay corrupts data silently, or faults with 700/719\n"
     "at a later synchronize (see graph-replay-failed).\n"
     "\n"
     "    cudaStreamBeginCapture(s, mode); kernel<<<g, b, 0, s>>>(tmp); cudaStreamEndCapture(s, "
     "&g);\n"
     "    cudaGraphInstantiate(&exec, g, 0);\n"
     "    cudaFree(tmp);\n"
     "    cudaGraphLaunch(exec, s);          // replays the write into freed tmp\n"
     "\n"
     "capguard reports the launch, the node that holds the address (kernel and argument, or\n"
     "memcpy/memset), the free, the allocation, and where the graph was captured and\n"
     "instantiated.\n"
     "\n"
     "PyTorch's caching allocator keeps a freed tensor's memory and hands it to the next tensor\n"
     "without any CUDA call. capguard attaches a tracker to that allocator (its own trace hook,\n"
     "the one its memory snapshots use; PyTorch 2.8 to 2.14 measured) and records a block given\n"
     "back to the default pool, or handed out again, only when a live graph holds an address in\n"
     "it: a dropped input (`del x`), Tensor.resize_(), cuBLAS's workspace released by\n"
     "torch._C._cuda_clearCublasWorkspaces(), a tensor freed by a thread that exits. A graph's\n"
     "private pool (torch.cuda.graph, graph_pool_handle(), MemPool) keeps its memory for its\n"
     "graphs and is not judged: PyTorch allows graphs that share a pool (pytorch#166975).\n"
     "CuPy's memory pool does the same with a dropped array: `capguard run` gives it a\n"
     "cupy.cuda.MemoryHook (CuPy's public hook API) in the thread that imports CuPy, and records\n"
     "a chunk given back or handed out while a live graph holds an address in it; frees on other\n"
     "threads are not seen (CuPy's hooks are per thread), nor are a capture's own temporaries,\n"
     "freed before the graph existed. Not seen: RMM and other allocators that never call CUDA to\n"
     "free, and PyTorch with another allocator backend (cudaMallocAsync, a pluggable allocator),\n"
     "which the JSON report's processes[].framework_hooks says.\n"
     "A node given new parameters with cudaGraphExecKernelNodeSetParams (or the memcpy,\n"
     "memset, child-graph and generic variants) stops holding its old addresses; its new ones\n"
     "are not known (an exec's parameters cannot be read back), so that node is not checked.\n"
     "\n"
     "Fix: keep every buffer a graph uses alive until its last exec is destroyed\n"
     "(cudaGraphExecDestroy before cudaFree), or point the exec at new buffers with\n"
     "cudaGraphExecUpdate / cudaGraphExecKernelNodeSetParams before replaying it.",
     "free the buffer after cudaGraphExecDestroy, or update the exec to new buffers first"},
    nullptr,
    nullptr,
    &check};

}  // namespace capguard::rules
