// Capture rehearsal: libcapguard.so as NVTX's injection library. `capguard run
// --rehearse GLOB` sets NVTX_INJECTION64_PATH to libcapguard.so and CAPGUARD_REHEARSE to the
// glob; NVTX then calls InitializeInjectionNvtx2 (injection.cpp), which hands its export table
// to install_nvtx_callbacks. Only range push/pop and start/end (and domain creation and string
// registration, to read a range's domain and registered message) are filled: every other NVTX
// call stays a no-op, and without --rehearse NVTX never loads capguard at all.
//
// A range whose message matches the glob is "rehearsed": the hooks tell the recorder, which
// records every call while one is open. The callbacks never allocate, lock or throw: a
// fixed-size stack per thread of the ranges it pushed, a fixed table of open start/end ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace capguard::interposer {

struct RangeHooks {
  // A rehearsed range opened (id: process-unique, never 0) or closed.
  void (*begin)(uint64_t id, std::string_view domain, std::string_view name) = nullptr;
  void (*end)(uint64_t id) = nullptr;
};

// The globs, one per line (copied, cut at 1023 bytes in all), and the hooks; before NVTX can
// call in.
void set_rehearse(const char* glob, const RangeHooks& hooks);
// The globs as set (one per line), for the trace's 'q' records.
std::string_view rehearse_patterns();
// '*' any run, '?' one byte: util/glob.h's semantics (the interposer may not use util/;
// tests/interposer_nvtx_ranges_test.cpp checks that both agree).
bool rehearse_glob_match(std::string_view pattern, std::string_view text);
// Whether any of the globs (one per line; empty lines match nothing) matches.
bool rehearse_patterns_match(std::string_view patterns, std::string_view text);

// Fills NVTX's callback table from its export-table getter (NvtxGetExportTableFunc_t). False
// when the table is missing or too old; NVTX then leaves every call a no-op.
bool install_nvtx_callbacks(const void* (*get_export_table)(uint32_t));

// The callbacks themselves, for the unit tests (NVTX's own types are opaque pointers here).
namespace nvtx_callbacks {
int push_a(const char* message);
int push_w(const wchar_t* message);
int push_ex(const void* attributes);
int pop();
uint64_t start_a(const char* message);
uint64_t start_w(const wchar_t* message);
uint64_t start_ex(const void* attributes);
void end(uint64_t id);
int domain_push_ex(const void* domain, const void* attributes);
int domain_pop(const void* domain);
uint64_t domain_start_ex(const void* domain, const void* attributes);
void domain_end(const void* domain, uint64_t id);
const void* domain_create_a(const char* name);
const void* domain_create_w(const wchar_t* name);
const void* register_string_a(const void* domain, const char* text);
const void* register_string_w(const void* domain, const wchar_t* text);
}  // namespace nvtx_callbacks

}  // namespace capguard::interposer
