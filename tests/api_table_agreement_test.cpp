// The interposer's per-callback table and the analyzer's catalog are made from one list
// (trace/api_catalog.def): these tests hold the two sides to it, so that what the analyzer
// reads is what the interposer writes.
#include <doctest/doctest.h>

#include <string>

#include "model/api_catalog.h"
#include "model/capture_model.h"
#include "interposer/api_table.h"

namespace capguard {
namespace {

TEST_CASE("every callback id has the kind the analyzer gives its name") {
  int named = 0;
  for (auto domain : {trace::ApiDomain::Runtime, trace::ApiDomain::Driver}) {
    for (uint32_t cbid = 1; cbid < interposer::api_table_size(domain); ++cbid) {
      const interposer::CallbackInfo& info = interposer::api_info(domain, cbid);
      if (info.name == nullptr) continue;
      ++named;
      INFO(std::string(info.name));
      const ApiInfo analyzer_side = classify_api(info.name);
      CHECK(analyzer_side.kind == info.kind);
      CHECK(analyzer_side.per_thread == info.per_thread);
      CHECK(analyzer_side.memory == info.memory);  // graph lifetime: the memory column
    }
  }
  CHECK(named > 1000);
}

TEST_CASE("every kind the model reads outside a capture is recorded outside one") {
  for (int k = 0; k <= static_cast<int>(ApiKind::ErrorReport); ++k) {
    const auto kind = static_cast<ApiKind>(k);
    INFO(to_string(kind));
    if (reads_when_idle(kind)) CHECK(recorded_outside_capture(kind));
  }
}

TEST_CASE("the catalog's stream column agrees with the parameters CUPTI passes") {
  for (auto domain : {trace::ApiDomain::Runtime, trace::ApiDomain::Driver}) {
    for (uint32_t cbid = 1; cbid < interposer::api_table_size(domain); ++cbid) {
      const interposer::CallbackInfo& info = interposer::api_info(domain, cbid);
      if (info.name == nullptr || info.kind == ApiKind::Other || !info.has_params) continue;
      INFO(std::string(info.name));
      const bool names_stream = info.names_stream() || info.has(interposer::Slot::OutStream);
      CHECK(classify_api(info.name).takes_stream == names_stream);
    }
  }
}

}  // namespace
}  // namespace capguard
