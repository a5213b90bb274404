// Symbol values from a loaded library's file, .symtab first (local symbols too: PyTorch's
// wheels keep theirs), then .dynsym. For hooks into a library that exports too little
// (torch_allocator.h). The file is mapped read-only and unmapped again; nothing is allocated.
#pragma once

#include <cstddef>
#include <cstdint>

namespace capguard::interposer {

struct ElfSymbol {
  const char* name = nullptr;  // mangled
  uint64_t value = 0;          // 0: not found
  uint64_t size = 0;
};

// Fills each symbol's value and size from the ELF file at `path`. False when the file cannot be
// read as a 64-bit ELF object (then nothing is filled).
bool read_elf_symbols(const char* path, ElfSymbol* symbols, size_t count);

// The loaded object whose path ends with `suffix` ("/libc10_cuda.so"): its path (in a buffer
// of `capacity` bytes) and load bias. False when none is loaded.
bool find_loaded_library(const char* suffix, char* path, size_t capacity, uint64_t& bias);

// Objects loaded and unloaded so far (the loader's counters): a search need not be repeated
// while this stays the same. One callback, not a walk of every object.
uint64_t loaded_object_count();

}  // namespace capguard::interposer
