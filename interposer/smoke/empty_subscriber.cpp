// A baseline for cost measurements: subscribes to CUPTI's runtime and driver API domains with
// a callback that does nothing. What libcapguard.so costs beyond this is the interposer's own.
#include <cupti.h>

static void CUPTIAPI nothing(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

extern "C" int InitializeInjection(void) {
  CUpti_SubscriberHandle subscriber;
  if (cuptiSubscribe(&subscriber, &nothing, nullptr) != CUPTI_SUCCESS) return 1;
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  return 1;
}
