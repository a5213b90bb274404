#include "interposer/elf_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <initializer_list>

namespace capguard::interposer {
namespace {

// Scans one symbol table (with its string table) for the names still unfound.
void scan(const unsigned char* file, size_t file_size, const Elf64_Shdr& table,
          const Elf64_Shdr& strings, ElfSymbol* symbols, size_t count) {
  if (table.sh_entsize != sizeof(Elf64_Sym) || table.sh_offset > file_size ||
      table.sh_size > file_size - table.sh_offset || strings.sh_offset > file_size ||
      strings.sh_size > file_size - strings.sh_offset)
    return;
  const auto* syms = reinterpret_cast<const Elf64_Sym*>(file + table.sh_offset);
  const char* names = reinterpret_cast<const char*>(file + strings.sh_offset);
  const size_t n = table.sh_size / sizeof(Elf64_Sym);
  for (size_t i = 0; i < n; ++i) {
    const Elf64_Sym& sym = syms[i];
    if (sym.st_name >= strings.sh_size || sym.st_value == 0) continue;
    const char* name = names + sym.st_name;
    const size_t room = strings.sh_size - sym.st_name;
    for (size_t k = 0; k < count; ++k) {
      if (symbols[k].value != 0) continue;
      const size_t length = strlen(symbols[k].name);
      if (length < room && memcmp(name, symbols[k].name, length + 1) == 0) {
        symbols[k].value = sym.st_value;
        symbols[k].size = sym.st_size;
      }
    }
  }
}

}  // namespace

bool read_elf_symbols(const char* path, ElfSymbol* symbols, size_t count) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<size_t>(st.st_size) < sizeof(Elf64_Ehdr)) {
    close(fd);
    return false;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* mapped = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (mapped == MAP_FAILED) return false;
  const auto* file = static_cast<const unsigned char*>(mapped);
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(file);
  bool ok = memcmp(header->e_ident, ELFMAG, SELFMAG) == 0 &&
            header->e_ident[EI_CLASS] == ELFCLASS64 && header->e_shentsize == sizeof(Elf64_Shdr) &&
            header->e_shoff <= size &&
            header->e_shnum <= (size - header->e_shoff) / sizeof(Elf64_Shdr);
  if (ok) {
    const auto* sections = reinterpret_cast<const Elf64_Shdr*>(file + header->e_shoff);
    for (const uint32_t type : {SHT_SYMTAB, SHT_DYNSYM}) {
      for (size_t i = 0; i < header->e_shnum; ++i) {
        if (sections[i].sh_type != type || sections[i].sh_link >= header->e_shnum) continue;
        scan(file, size, sections[i], sections[sections[i].sh_link], symbols, count);
      }
    }
  }
  munmap(mapped, size);
  return ok;
}

bool find_loaded_library(const char* suffix, char* path, size_t capacity, uint64_t& bias) {
  struct Search {
    const char* suffix;
    char* path;
    size_t capacity;
    uint64_t bias = 0;
    bool found = false;
  } search{suffix, path, capacity};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        const char* name = info->dlpi_name;
        if (name == nullptr) return 0;
        const size_t length = strlen(name), want = strlen(s->suffix);
        if (length < want || strcmp(name + length - want, s->suffix) != 0 || length >= s->capacity)
          return 0;
        memcpy(s->path, name, length + 1);
        s->bias = info->dlpi_addr;
        s->found = true;
        return 1;
      },
      &search);
  bias = search.bias;
  return search.found;
}

uint64_t loaded_object_count() {
  uint64_t count = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t size, void* data) {
        // dlpi_adds and dlpi_subs exist when the structure reaches them (glibc 2.4 on).
        if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
          *static_cast<uint64_t*>(data) = info->dlpi_adds + (info->dlpi_subs << 32);
        return 1;
      },
      &count);
  return count;
}

}  // namespace capguard::interposer
