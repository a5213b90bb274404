#include "interposer/modules.h"

#include <elf.h>
#include <unistd.h>

#include <cstring>

#include "interposer/startup_times.h"
#include "trace/writer.h"

namespace capguard::interposer {
namespace {

constexpr char kHex[] = "0123456789abcdef";

size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

// Finds NT_GNU_BUILD_ID in one note segment.
size_t build_id_in_notes(const char* p, size_t size, char* out, size_t capacity) {
  size_t pos = 0;
  while (pos + sizeof(ElfW(Nhdr)) <= size) {
    ElfW(Nhdr) note;
    std::memcpy(&note, p + pos, sizeof(note));
    const size_t name_at = pos + sizeof(note);
    const size_t desc_at = name_at + align4(note.n_namesz);
    const size_t next = desc_at + align4(note.n_descsz);
    if (next > size || next <= pos) return 0;
    if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
        std::memcmp(p + name_at, "GNU", 4) == 0) {
      size_t n = 0;
      for (size_t i = 0; i < note.n_descsz && n + 2 < capacity; ++i) {
        const auto byte = static_cast<unsigned char>(p[desc_at + i]);
        out[n++] = kHex[byte >> 4];
        out[n++] = kHex[byte & 0xf];
      }
      out[n] = '\0';
      return n;
    }
    pos = next;
  }
  return 0;
}

}  // namespace

size_t read_build_id(const dl_phdr_info& info, char* out, size_t capacity) {
  if (capacity == 0) return 0;
  out[0] = '\0';
  for (ElfW(Half) i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* notes = reinterpret_cast<const char*>(info.dlpi_addr + ph.p_vaddr);
    if (const size_t n = build_id_in_notes(notes, ph.p_memsz, out, capacity)) return n;
  }
  return 0;
}

int ModuleMap::visit(dl_phdr_info* info, size_t, void* self_ptr) {
  auto& self = *static_cast<ModuleMap*>(self_ptr);
  uint64_t start = UINT64_MAX, end = 0;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uint64_t lo = info->dlpi_addr + ph.p_vaddr;
    if (lo < start) start = lo;
    if (lo + ph.p_memsz > end) end = lo + ph.p_memsz;
  }
  if (end == 0 || self.known(start, end)) return 0;
  const size_t n = self.count_.load(std::memory_order_relaxed);
  if (n == kMaxModules) return 1;

  static char exe[4096];  // under mutex_
  const char* path = info->dlpi_name;
  if (path == nullptr || path[0] == '\0') {
    const ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[len > 0 ? len : 0] = '\0';
    path = exe;
  }
  char build_id[128];
  read_build_id(*info, build_id, sizeof(build_id));
  self.writer_->write_module(info->dlpi_addr, start, end, path, build_id);

  self.ranges_[n].start.store(start, std::memory_order_relaxed);
  self.ranges_[n].end.store(end, std::memory_order_relaxed);
  self.count_.store(n + 1, std::memory_order_release);
  return 0;
}

void ModuleMap::refresh(trace::TraceWriter& writer) {
  const startup::Timed timed(startup::Sum::module_scan);
  lock();
  writer_ = &writer;
  // dl_iterate_phdr reports how many objects were ever loaded and unloaded: when that has
  // not moved since the last scan there is nothing new to write.
  struct Probe {
    unsigned long long adds = 0, subs = 0;
  } probe;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t size, void* p) {
        auto* out = static_cast<Probe*>(p);
        if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
          out->adds = info->dlpi_adds;
          out->subs = info->dlpi_subs;
        }
        return 1;
      },
      &probe);
  if (!scanned_ || probe.adds != last_adds_ || probe.subs != last_subs_) {
    dl_iterate_phdr(&ModuleMap::visit, this);
    last_adds_ = probe.adds;
    last_subs_ = probe.subs;
    scanned_ = true;
  }
  writer_ = nullptr;
  unlock();
}

bool ModuleMap::known(uint64_t start, uint64_t end) const {
  const size_t n = count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    if (ranges_[i].start.load(std::memory_order_relaxed) == start &&
        ranges_[i].end.load(std::memory_order_relaxed) == end) {
      return true;
    }
  }
  return false;
}

bool ModuleMap::contains(uint64_t address) const {
  const size_t n = count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    if (address >= ranges_[i].start.load(std::memory_order_relaxed) &&
        address < ranges_[i].end.load(std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

void ModuleMap::reset() {
  count_.store(0, std::memory_order_release);
  scanned_ = false;
}

}  // namespace capguard::interposer
