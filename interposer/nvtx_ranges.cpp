#include "interposer/nvtx_ranges.h"

#define NVTX_NO_IMPL  // types and callback ids only: libcapguard.so must not define nvtx* itself
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>

#include "util/glob.h"  // glob_match: header-only, allocates nothing

namespace capguard::interposer {
namespace {

char g_glob[1024];  // the --rehearse globs, one per line
RangeHooks g_hooks;
std::atomic<uint64_t> g_next_id{1};

// The ranges a thread pushed, innermost last, rehearsed or not (a pop must know which range it
// ends). Deeper pushes are only counted: their pops end nothing rehearsed.
struct Pushed {
  const void* domain = nullptr;  // null: the default domain
  uint64_t id = 0;               // 0: not rehearsed
};
struct PushStack {
  static constexpr int kDepth = 64;
  Pushed entries[kDepth];
  int depth = 0;
  uint32_t overflow = 0;
};
thread_local PushStack t_pushed;

// Open rehearsed start/end ranges (ended from any thread). A start that finds no free slot is
// not rehearsed: its end could not be recognized.
constexpr size_t kOpenStarts = 64;
std::atomic<uint64_t> g_open_starts[kOpenStarts];

// Domains created through nvtxDomainCreateA/W: the handle NVTX hands back is a slot here, so a
// range names its domain. Past the table, domains share an unnamed slot.
struct DomainSlot {
  char name[64];
};
constexpr size_t kDomains = 128;
DomainSlot g_domains[kDomains + 1];
std::atomic<size_t> g_domain_count{0};

std::string_view domain_name(const void* domain) {
  if (domain == nullptr) return {};
  const auto* slot = static_cast<const DomainSlot*>(domain);
  if (slot < g_domains || slot >= g_domains + kDomains) return {};
  return {slot->name, strnlen(slot->name, sizeof slot->name)};
}

// Strings registered through nvtxDomainRegisterStringA/W (the `nvtx` Python package, nvtx3.hpp's
// registered_string): the handle is a slot here, so a message of type REGISTERED can be read.
// Past the table, strings share an empty slot (their ranges are not rehearsed).
struct StringSlot {
  char text[128];
};
constexpr size_t kStrings = 512;
StringSlot g_strings[kStrings + 1];
std::atomic<size_t> g_string_count{0};

// A message as bytes: ASCII as is; wide characters outside ASCII become '?'.
struct Message {
  char text[256];
  std::string_view view;
};
void from_ascii(const char* s, Message& out) {
  out.view = s != nullptr ? std::string_view(s, strnlen(s, sizeof out.text)) : std::string_view();
}
void from_wide(const wchar_t* s, Message& out) {
  size_t n = 0;
  for (; s != nullptr && s[n] != 0 && n < sizeof out.text; ++n)
    out.text[n] = s[n] > 0 && s[n] < 0x80 ? static_cast<char>(s[n]) : '?';
  out.view = std::string_view(out.text, n);
}
void from_registered(const void* handle, Message& out) {
  const auto* slot = static_cast<const StringSlot*>(handle);
  out.view = {};
  if (slot >= g_strings && slot < g_strings + kStrings)
    out.view = std::string_view(slot->text, strnlen(slot->text, sizeof slot->text));
}
void from_attributes(const void* attributes, Message& out) {
  out.view = {};
  const auto* a = static_cast<const nvtxEventAttributes_t*>(attributes);
  if (a == nullptr ||
      a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(nvtxMessageValue_t)) {
    return;
  }
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) from_ascii(a->message.ascii, out);
  if (a->messageType == NVTX_MESSAGE_TYPE_UNICODE) from_wide(a->message.unicode, out);
  if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) from_registered(a->message.registered, out);
}

bool rehearsed(std::string_view name) {
  return g_glob[0] != '\0' && g_hooks.begin != nullptr && rehearse_patterns_match(g_glob, name);
}

uint64_t open_range(const void* domain, std::string_view name) {
  const uint64_t id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  g_hooks.begin(id, domain_name(domain), name);
  return id;
}

int push(const void* domain, const Message& message) {
  PushStack& s = t_pushed;
  int level = 0;
  for (int i = 0; i < s.depth; ++i) level += s.entries[i].domain == domain;
  if (s.depth == PushStack::kDepth) {
    ++s.overflow;
    return level;
  }
  Pushed& top = s.entries[s.depth++];
  top.domain = domain;
  top.id = rehearsed(message.view) ? open_range(domain, message.view) : 0;
  return level;
}

int pop(const void* domain) {
  PushStack& s = t_pushed;
  if (s.overflow > 0) {
    --s.overflow;
    return s.depth;
  }
  for (int i = s.depth - 1; i >= 0; --i) {
    if (s.entries[i].domain != domain) continue;
    const uint64_t id = s.entries[i].id;
    for (int j = i; j + 1 < s.depth; ++j) s.entries[j] = s.entries[j + 1];
    --s.depth;
    if (id != 0 && g_hooks.end != nullptr) g_hooks.end(id);
    int level = 0;
    for (int j = 0; j < i; ++j) level += s.entries[j].domain == domain;
    return level;
  }
  return -1;  // NVTX's answer to a pop without a push
}

uint64_t start(const void* domain, const Message& message) {
  if (!rehearsed(message.view)) return g_next_id.fetch_add(1, std::memory_order_relaxed);
  const uint64_t id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  for (auto& slot : g_open_starts) {
    uint64_t expected = 0;
    if (slot.compare_exchange_strong(expected, id, std::memory_order_acq_rel)) {
      g_hooks.begin(id, domain_name(domain), message.view);
      return id;
    }
  }
  return id;
}

void end(uint64_t id) {
  if (id == 0) return;
  for (auto& slot : g_open_starts) {
    uint64_t expected = id;
    if (slot.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) {
      if (g_hooks.end != nullptr) g_hooks.end(id);
      return;
    }
  }
}

const void* create_domain(const Message& name) {
  const size_t index = g_domain_count.fetch_add(1, std::memory_order_relaxed);
  if (index >= kDomains) return &g_domains[kDomains];
  DomainSlot& slot = g_domains[index];
  const size_t n =
      name.view.size() < sizeof slot.name - 1 ? name.view.size() : sizeof slot.name - 1;
  memcpy(slot.name, name.view.data(), n);
  slot.name[n] = '\0';
  return &slot;
}

const void* register_string(const Message& text) {
  const size_t index = g_string_count.fetch_add(1, std::memory_order_relaxed);
  if (index >= kStrings) return &g_strings[kStrings];
  StringSlot& slot = g_strings[index];
  const size_t n = std::min(text.view.size(), sizeof slot.text - 1);
  memcpy(slot.text, text.view.data(), n);
  slot.text[n] = '\0';
  return &slot;
}

}  // namespace

void set_rehearse(const char* glob, const RangeHooks& hooks) {
  const size_t n = glob != nullptr ? strnlen(glob, sizeof g_glob - 1) : 0;
  if (n != 0) memcpy(g_glob, glob, n);
  g_glob[n] = '\0';
  g_hooks = hooks;
}

bool rehearse_glob_match(std::string_view pattern, std::string_view text) {
  return glob_match(pattern, text);  // util/glob.h: header-only, allocates nothing
}

bool rehearse_patterns_match(std::string_view patterns, std::string_view text) {
  while (!patterns.empty()) {
    const size_t end = std::min(patterns.find('\n'), patterns.size());
    if (end != 0 && glob_match(patterns.substr(0, end), text)) return true;
    patterns.remove_prefix(std::min(end + 1, patterns.size()));
  }
  return false;
}

std::string_view rehearse_patterns() { return g_glob; }

namespace nvtx_callbacks {
int push_a(const char* message) {
  Message m;
  from_ascii(message, m);
  return push(nullptr, m);
}
int push_w(const wchar_t* message) {
  Message m;
  from_wide(message, m);
  return push(nullptr, m);
}
int push_ex(const void* attributes) {
  Message m;
  from_attributes(attributes, m);
  return push(nullptr, m);
}
int pop() { return interposer::pop(nullptr); }
uint64_t start_a(const char* message) {
  Message m;
  from_ascii(message, m);
  return start(nullptr, m);
}
uint64_t start_w(const wchar_t* message) {
  Message m;
  from_wide(message, m);
  return start(nullptr, m);
}
uint64_t start_ex(const void* attributes) {
  Message m;
  from_attributes(attributes, m);
  return start(nullptr, m);
}
void end(uint64_t id) { interposer::end(id); }
int domain_push_ex(const void* domain, const void* attributes) {
  Message m;
  from_attributes(attributes, m);
  return push(domain, m);
}
int domain_pop(const void* domain) { return interposer::pop(domain); }
uint64_t domain_start_ex(const void* domain, const void* attributes) {
  Message m;
  from_attributes(attributes, m);
  return start(domain, m);
}
void domain_end(const void*, uint64_t id) { interposer::end(id); }
const void* domain_create_a(const char* name) {
  Message m;
  from_ascii(name, m);
  return create_domain(m);
}
const void* domain_create_w(const wchar_t* name) {
  Message m;
  from_wide(name, m);
  return create_domain(m);
}
const void* register_string_a(const void*, const char* text) {
  Message m;
  from_ascii(text, m);
  return register_string(m);
}
const void* register_string_w(const void*, const wchar_t* text) {
  Message m;
  from_wide(text, m);
  return register_string(m);
}
}  // namespace nvtx_callbacks

namespace {

// NVTX's own signatures, which the table's slots are called through.
namespace c = nvtx_callbacks;
int NVTX_API push_a_abi(const char* m) { return c::push_a(m); }
int NVTX_API push_w_abi(const wchar_t* m) { return c::push_w(m); }
int NVTX_API push_ex_abi(const nvtxEventAttributes_t* a) { return c::push_ex(a); }
int NVTX_API pop_abi() { return c::pop(); }
nvtxRangeId_t NVTX_API start_a_abi(const char* m) { return c::start_a(m); }
nvtxRangeId_t NVTX_API start_w_abi(const wchar_t* m) { return c::start_w(m); }
nvtxRangeId_t NVTX_API start_ex_abi(const nvtxEventAttributes_t* a) { return c::start_ex(a); }
void NVTX_API end_abi(nvtxRangeId_t id) { c::end(id); }
int NVTX_API domain_push_ex_abi(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return c::domain_push_ex(d, a);
}
int NVTX_API domain_pop_abi(nvtxDomainHandle_t d) { return c::domain_pop(d); }
nvtxRangeId_t NVTX_API domain_start_ex_abi(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return c::domain_start_ex(d, a);
}
void NVTX_API domain_end_abi(nvtxDomainHandle_t d, nvtxRangeId_t id) { c::domain_end(d, id); }
nvtxDomainHandle_t NVTX_API domain_create_a_abi(const char* n) {
  return static_cast<nvtxDomainHandle_t>(const_cast<void*>(c::domain_create_a(n)));
}
nvtxStringHandle_t NVTX_API register_string_a_abi(nvtxDomainHandle_t d, const char* s) {
  return static_cast<nvtxStringHandle_t>(const_cast<void*>(c::register_string_a(d, s)));
}
nvtxStringHandle_t NVTX_API register_string_w_abi(nvtxDomainHandle_t d, const wchar_t* s) {
  return static_cast<nvtxStringHandle_t>(const_cast<void*>(c::register_string_w(d, s)));
}
nvtxDomainHandle_t NVTX_API domain_create_w_abi(const wchar_t* n) {
  return static_cast<nvtxDomainHandle_t>(const_cast<void*>(c::domain_create_w(n)));
}

template <class F>
void fill(NvtxFunctionTable table, unsigned size, unsigned id, F function) {
  if (id < size && table[id] != nullptr)
    *table[id] = reinterpret_cast<NvtxFunctionPointer>(function);
}

bool module_table(const NvtxExportTableCallbacks* callbacks, NvtxCallbackModule module,
                  NvtxFunctionTable& table, unsigned& size) {
  table = nullptr;
  size = 0;
  return callbacks->GetModuleFunctionTable(module, &table, &size) != 0 && table != nullptr;
}

}  // namespace

bool install_nvtx_callbacks(const void* (*get_export_table)(uint32_t)) {
  if (get_export_table == nullptr) return false;
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
      callbacks->GetModuleFunctionTable == nullptr) {
    return false;
  }
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned core_size = 0, core2_size = 0;
  if (!module_table(callbacks, NVTX_CB_MODULE_CORE, core, core_size)) return false;
  fill(core, core_size, NVTX_CBID_CORE_RangePushA, &push_a_abi);
  fill(core, core_size, NVTX_CBID_CORE_RangePushW, &push_w_abi);
  fill(core, core_size, NVTX_CBID_CORE_RangePushEx, &push_ex_abi);
  fill(core, core_size, NVTX_CBID_CORE_RangePop, &pop_abi);
  fill(core, core_size, NVTX_CBID_CORE_RangeStartA, &start_a_abi);
  fill(core, core_size, NVTX_CBID_CORE_RangeStartW, &start_w_abi);
  fill(core, core_size, NVTX_CBID_CORE_RangeStartEx, &start_ex_abi);
  fill(core, core_size, NVTX_CBID_CORE_RangeEnd, &end_abi);
  if (module_table(callbacks, NVTX_CB_MODULE_CORE2, core2, core2_size)) {
    fill(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &domain_push_ex_abi);
    fill(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &domain_pop_abi);
    fill(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &domain_start_ex_abi);
    fill(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &domain_end_abi);
    fill(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &domain_create_a_abi);
    fill(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &domain_create_w_abi);
    fill(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &register_string_a_abi);
    fill(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, &register_string_w_abi);
  }
  return true;
}

}  // namespace capguard::interposer
