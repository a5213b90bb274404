/* NVTX ranges for tests/rehearse_nvtx_test.sh: "step" pushed three times inside an "outer" range,
 * a "step-4" start/end range, and a range in a domain of its own. No CUDA. */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

int main(void) {
  for (int i = 0; i < 3; ++i) {
    nvtxRangePushA("outer");
    nvtxRangePushA("step");
    nvtxRangePop();
    nvtxRangePop();
  }
  nvtxRangeEnd(nvtxRangeStartA("step-4"));
  nvtxDomainHandle_t domain = nvtxDomainCreateA("mylib");
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "step-in-domain";
  nvtxDomainRangePushEx(domain, &a);
  nvtxDomainRangePop(domain);
  puts("ranges: done");
  return 0;
}
