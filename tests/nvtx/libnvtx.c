/* NVTX's own implementation (nvtx3, header-only) built as libnvToolsExt.so.1: what PyTorch's wheels
 * ship, for tests/rehearse_nvtx_test.sh on a machine without it. NVTX_INJECTION64_PATH works as in
 * the real one: the implementation is the same header. */
#define NVTX_EXPORT_API
#include <nvtx3/nvToolsExt.h>
