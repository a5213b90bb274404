// Capture rehearsal: the NVTX callbacks of interposer/nvtx_ranges.h, driven directly.
#include <doctest/doctest.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <string>
#include <thread>
#include <vector>

#include "interposer/nvtx_ranges.h"
#include "util/glob.h"

using namespace capguard::interposer;
namespace cb = capguard::interposer::nvtx_callbacks;

namespace {

struct Seen {
  bool begin;
  uint64_t id;
  std::string domain, name;
};
std::vector<Seen> g_seen;

void rehearse(const char* glob) {
  g_seen.clear();
  RangeHooks hooks;
  hooks.begin = [](uint64_t id, std::string_view domain, std::string_view name) {
    g_seen.push_back({true, id, std::string(domain), std::string(name)});
  };
  hooks.end = [](uint64_t id) { g_seen.push_back({false, id, {}, {}}); };
  set_rehearse(glob, hooks);
}

nvtxEventAttributes_t ascii_attributes(const char* message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

}  // namespace

TEST_SUITE("interposer_nvtx_ranges_test") {
  TEST_CASE("only matching push/pop ranges are reported, with nesting levels as NVTX gives") {
    rehearse("capguard:*");
    CHECK(cb::push_a("outer") == 0);
    CHECK(cb::push_a("capguard:decode") == 1);
    CHECK(cb::push_w(L"inner") == 2);
    CHECK(cb::pop() == 2);
    CHECK(g_seen.size() == 1);
    CHECK(cb::pop() == 1);  // ends the rehearsed range
    CHECK(cb::pop() == 0);
    CHECK(cb::pop() == -1);  // a pop without a push
    REQUIRE(g_seen.size() == 2);
    CHECK(g_seen[0].begin);
    CHECK(g_seen[0].name == "capguard:decode");
    CHECK(g_seen[0].domain.empty());
    CHECK_FALSE(g_seen[1].begin);
    CHECK(g_seen[1].id == g_seen[0].id);
  }

  TEST_CASE("Ex and wide messages match; domains are named and keep their own stacks") {
    rehearse("step");
    const void* domain = cb::domain_create_a("my.domain");
    const nvtxEventAttributes_t step = ascii_attributes("step");
    cb::domain_push_ex(domain, &step);
    cb::push_w(L"step");                 // the default domain's range
    CHECK(cb::domain_pop(domain) == 0);  // ends the domain's, not the inner default one
    REQUIRE(g_seen.size() == 3);
    CHECK(g_seen[0].domain == "my.domain");
    CHECK(g_seen[1].domain.empty());
    CHECK_FALSE(g_seen[2].begin);
    CHECK(g_seen[2].id == g_seen[0].id);
    cb::pop();
    CHECK(g_seen.size() == 4);
  }

  TEST_CASE("a registered string's message matches") {
    rehearse("decode");
    const void* domain = cb::domain_create_a("nvtx.py");
    nvtxEventAttributes_t a = ascii_attributes(nullptr);
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered =
        static_cast<nvtxStringHandle_t>(const_cast<void*>(cb::register_string_a(domain, "decode")));
    cb::domain_push_ex(domain, &a);
    cb::domain_pop(domain);
    REQUIRE(g_seen.size() == 2);
    CHECK(g_seen[0].name == "decode");
    CHECK(g_seen[0].domain == "nvtx.py");
  }

  TEST_CASE("start/end ranges may end on another thread; unknown ids end nothing") {
    rehearse("step*");
    const nvtxEventAttributes_t a = ascii_attributes("step 3");
    const uint64_t id = cb::start_ex(&a);
    const uint64_t other = cb::start_a("other");
    CHECK(id != other);
    std::thread([&] { cb::end(id); }).join();
    cb::end(other);
    cb::end(12345);
    REQUIRE(g_seen.size() == 2);
    CHECK(g_seen[0].name == "step 3");
    CHECK_FALSE(g_seen[1].begin);
    CHECK(g_seen[1].id == id);
  }

  TEST_CASE("deeper than the per-thread stack: counted, never written past") {
    rehearse("deep");
    for (int i = 0; i < 100; ++i) cb::push_a("x");
    cb::push_a("deep");  // beyond the stack: not rehearsed
    for (int i = 0; i < 101; ++i) cb::pop();
    CHECK(g_seen.empty());
    cb::push_a("deep");
    cb::pop();
    CHECK(g_seen.size() == 2);
  }

  TEST_CASE("without a glob nothing is rehearsed") {
    rehearse("");
    cb::push_a("step");
    cb::pop();
    CHECK(g_seen.empty());
  }
  TEST_CASE("the interposer's glob agrees with util/glob.h") {
    for (const auto& [pattern, text] :
         std::vector<std::pair<std::string, std::string>>{{"step", "step"},
                                                          {"step", "steps"},
                                                          {"capguard:*", "capguard:decode"},
                                                          {"*decode*", "model.decode.1"},
                                                          {"?tep", "step"},
                                                          {"a*b*c", "abxbxc"},
                                                          {"", ""},
                                                          {"*", ""},
                                                          {"a", ""}}) {
      CAPTURE(pattern);
      CAPTURE(text);
      CHECK(rehearse_glob_match(pattern, text) == capguard::glob_match(pattern, text));
    }
  }

  TEST_CASE("several --rehearse globs, one per line: any of them matches") {
    CHECK(rehearse_patterns_match("decode\nprefill*", "prefill.7"));
    CHECK(rehearse_patterns_match("decode\nprefill*", "decode"));
    CHECK_FALSE(rehearse_patterns_match("decode\nprefill*", "train"));
    CHECK_FALSE(rehearse_patterns_match("\n\n", ""));  // empty lines match nothing
    CHECK(rehearse_patterns_match("a\n", "a"));
    CHECK_FALSE(rehearse_patterns_match("", "a"));
  }
}
