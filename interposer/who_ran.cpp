#include "interposer/who_ran.h"

#include <cstdlib>

#include "trace/format.h"

namespace capguard::interposer {
namespace {

constexpr const char* kNames[] = {
#define CAPGUARD_LAUNCHER_VAR(name, role) #name,
#include "trace/launcher_vars.def"
};
constexpr size_t kCount = sizeof(kNames) / sizeof(kNames[0]);
static_assert(kCount <= trace::kMaxLauncherVars);

bool g_read = false;
char g_host[trace::kMaxHostLength + 1];
char g_values[kCount][trace::kMaxLauncherValueLength + 1];
const char* g_set[kCount];  // g_values[i] where the variable was set, else null

void copy(const char* from, char* to, size_t capacity) {
  size_t n = 0;
  for (; from[n] != '\0' && n + 1 < capacity; ++n) to[n] = from[n];
  to[n] = '\0';
}

}  // namespace

void read_who_ran_once() {
  if (g_read) return;
  g_read = true;
  trace::TraceWriter::read_host(g_host, sizeof(g_host));
  for (size_t i = 0; i < kCount; ++i) {
    const char* value = getenv(kNames[i]);
    if (value == nullptr) continue;
    copy(value, g_values[i], sizeof(g_values[i]));
    g_set[i] = g_values[i];
  }
}

const char* who_ran_host() { return g_host; }

void write_who_ran(trace::TraceWriter& writer) {
  writer.write_who_ran(g_host, kNames, g_set, kCount);
}

}  // namespace capguard::interposer
