#include "report/default_suppressions.h"

namespace capguard {

std::string_view default_suppressions_text() {
  return R"(# capguard's built-in suppressions (turn off with --no-default-suppressions).

# PyTorch's caching allocator allocates while a graph is being captured on purpose: it exchanges
# the thread's capture mode to Relaxed around cudaMalloc (cudaMallocMaybeCapturing) and keeps
# the memory alive in the graph's private pool, so the allocation is not a latent bug.
relaxed-mode-unsafe-call:fun:*cudaMallocMaybeCapturing*
# Its pinned host allocator does the same around cudaHostAlloc (e.g. for .item()).
relaxed-mode-unsafe-call:fun:*CUDACachingHostAllocatorImpl::allocate_host_memory*

# CuPy's memory pool allocates inside CuPy's own captures, which it begins in Relaxed mode for
# exactly that reason; the pool owns the memory the graph uses.
relaxed-mode-unsafe-call:fun:*cupy_backends*runtime*malloc*

# NCCL, for a collective captured in a graph, allocates the graph's persistent work buffer with
# the thread's capture mode exchanged to Relaxed (uploadWork in NCCL's enqueue.cc; buffers from
# ncclCudaCalloc are made the same way): the buffer lives as long as the graph needs it.
# NCCL from pip (torch's nvidia-nccl wheel) has no symbols: its module names it.
relaxed-mode-unsafe-call:mod:libnccl.so*
relaxed-mode-unsafe-call:fun:*uploadWork*
relaxed-mode-unsafe-call:fun:*ncclCudaCalloc*
)";
}

}  // namespace capguard
