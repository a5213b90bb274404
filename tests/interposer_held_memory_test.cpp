// The interposer's table of addresses live execs hold (interposer/held_memory.h), PyTorch's
// trace entries as the tracker decodes them (interposer/torch_allocator.h) and the ELF symbol
// reader that finds the tracker's hook.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "interposer/elf_symbols.h"
#include "interposer/held_memory.h"
#include "interposer/torch_allocator.h"

using namespace capguard::interposer;

namespace {
std::vector<uint64_t> holders(HeldMemory& held, uint64_t base, uint64_t size) {
  uint64_t execs[8];
  const size_t n = held.holders(base, size, execs, 8);
  return {execs, execs + n};
}
}  // namespace

TEST_CASE("held memory: the execs whose addresses lie in a block") {
  HeldMemory held;
  CHECK_FALSE(held.any());
  CHECK(holders(held, 0x1000, 0x1000).empty());
  held.add(1, 0x1800);
  held.add(1, 0x1800);  // the same address twice (two nodes): one entry
  held.add(1, 0x5000);
  CHECK(holders(held, 0x1000, 0x1000).empty());  // not published yet: its walk is under way
  held.publish(1);
  CHECK(held.any());
  held.add(2, 0x1900);
  held.publish(2);
  CHECK(holders(held, 0x1000, 0x1000) == std::vector<uint64_t>{1, 2});
  CHECK(holders(held, 0x1900, 1) == std::vector<uint64_t>{2});
  CHECK(holders(held, 0x1801, 0xff).empty());                   // [0x1801, 0x1900): neither address
  CHECK(holders(held, 0x5000, 0) == std::vector<uint64_t>{1});  // size 0: the base alone
  CHECK(holders(held, 0x2000, 0x3000).empty());                 // the end is exclusive
  // A walk again (an update): the exec's old addresses go, its new ones come.
  held.add(1, 0x9000);
  held.publish(1);
  CHECK(holders(held, 0x1000, 0x1000) == std::vector<uint64_t>{2});
  CHECK(holders(held, 0x9000, 8) == std::vector<uint64_t>{1});
  held.remove(2);
  CHECK(holders(held, 0x1000, 0x1000).empty());
  held.remove(1);
  CHECK_FALSE(held.any());
}

TEST_CASE("held memory: interleaved walks of two execs keep their own addresses") {
  HeldMemory held;
  for (uint64_t i = 0; i < 1000; ++i) {
    held.add(7, 0x100000 + i * 64);
    held.add(8, 0x900000 + i * 64);
  }
  held.publish(8);
  CHECK(holders(held, 0x100000, 1000 * 64).empty());
  CHECK(holders(held, 0x900000, 64) == std::vector<uint64_t>{8});
  held.publish(7);
  CHECK(holders(held, 0x100000 + 999 * 64, 1) == std::vector<uint64_t>{7});
  uint64_t one[1];
  CHECK(held.holders(0, ~0ull, one, 1) == 1);  // at most `capacity`
}

namespace {
// c10::CachingDeviceAllocator::TraceEntry's first 64 bytes, as PyTorch 2.11 lays them out.
struct FakeEntry {
  int action = 0;
  int8_t device = 0;
  uint64_t addr = 0;
  uint64_t context[2] = {};
  uint64_t stream = 0;
  uint64_t size = 0;
  uint64_t pool[2] = {};
  uint64_t time = 0;
};
static_assert(offsetof(FakeEntry, addr) == 8 && offsetof(FakeEntry, stream) == 32 &&
              offsetof(FakeEntry, size) == 40 && offsetof(FakeEntry, pool) == 48);
constexpr char kNewType[] = "NS_22CachingDeviceAllocator10TraceEntryEEE";
constexpr char kOldType[] = "NS1_10TraceEntryEEE";
}  // namespace

TEST_CASE("torch allocator: trace entries of the default pool, allocations and frees only") {
  using capguard::trace::FrameworkMemoryOp;
  FakeEntry e;
  e.action = 1;  // FREE_REQUESTED
  e.addr = 0x7f0000400000;
  e.size = 4 << 20;
  e.stream = 0x55;
  torch_allocator::AllocatorEntry out;
  REQUIRE(torch_allocator::decode_for_tests(kNewType, &e, out));
  CHECK(out.op == FrameworkMemoryOp::Free);
  CHECK(out.address == 0x7f0000400000);
  CHECK(out.size == (4 << 20));
  CHECK(out.stream == 0x55);
  e.action = 0;  // ALLOC
  REQUIRE(torch_allocator::decode_for_tests(kOldType, &e, out));
  CHECK(out.op == FrameworkMemoryOp::Alloc);
  for (int action : {2, 3, 4, 5, 6, 7, 8}) {  // completed frees, segments, snapshot, OOM
    e.action = action;
    CHECK_FALSE(torch_allocator::decode_for_tests(kNewType, &e, out));
  }
  e.action = 1;
  e.pool[0] = 3;  // a graph's private pool keeps it for its graphs
  CHECK_FALSE(torch_allocator::decode_for_tests(kNewType, &e, out));
  e.pool[0] = 0, e.pool[1] = 1;  // a MemPool likewise
  CHECK_FALSE(torch_allocator::decode_for_tests(kNewType, &e, out));
  e.pool[1] = 0;
  CHECK_FALSE(torch_allocator::decode_for_tests("SomeOtherTraceEntry", &e, out));
}

extern "C" int capguard_held_memory_test_symbol() { return 42; }

TEST_CASE("ELF symbols: a loaded object's symbol table, and the objects loaded") {
  char path[4096];
  uint64_t bias = 0;
  REQUIRE(find_loaded_library("/libc.so.6", path, sizeof path, bias));
  CHECK(std::strstr(path, "libc.so.6") != nullptr);
  CHECK_FALSE(find_loaded_library("/libno-such-library.so", path, sizeof path, bias));
  const uint64_t objects = loaded_object_count();  // what lets a search be skipped
  CHECK(objects != 0);
  CHECK(loaded_object_count() == objects);
  ElfSymbol symbols[] = {{"malloc"}, {"no_such_symbol_anywhere"}};
  REQUIRE(read_elf_symbols(path, symbols, 2));
  CHECK(symbols[0].value != 0);
  CHECK(bias + symbols[0].value != 0);
  CHECK(symbols[1].value == 0);
  ElfSymbol own[] = {{"capguard_held_memory_test_symbol"}};
  REQUIRE(read_elf_symbols("/proc/self/exe", own, 1));
  CHECK(own[0].value != 0);
  CHECK_FALSE(read_elf_symbols("/dev/null", own, 1));
  CHECK_FALSE(read_elf_symbols("/nonexistent", own, 1));
}

TEST_CASE("torch allocator: without libc10_cuda.so loaded nothing attaches, and asking is cheap") {
  const auto sink = [](const torch_allocator::AllocatorEntry&) {};
  CHECK(torch_allocator::try_attach(sink) == torch_allocator::State::Absent);
  CHECK(torch_allocator::try_attach(sink) == torch_allocator::State::Absent);  // no new object
}
