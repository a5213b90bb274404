#include "interposer/cuda_versions.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace capguard::interposer {
namespace {

const char* base_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

// Reads exactly size bytes at offset; false on a short read.
bool read_at(int fd, void* out, size_t size, off_t offset) {
  auto* bytes = static_cast<unsigned char*>(out);
  while (size > 0) {
    const ssize_t n = pread(fd, bytes, size, offset);
    if (n <= 0) return false;
    bytes += n, size -= static_cast<size_t>(n), offset += n;
  }
  return true;
}

// The toolkit the first cubin of an executable's .nv_fatbin section was built with, or 0. The
// fatbin (magic 0xba55ed50) holds entries of a 16-byte header then payload; a cubin entry (kind
// 2) that is not compressed starts with an ELF header whose e_version is the toolkit version.
int toolkit_of_executable(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return 0;
  int toolkit = 0;
  Elf64_Ehdr eh;
  if (read_at(fd, &eh, sizeof(eh), 0) && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
      eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_shentsize == sizeof(Elf64_Shdr) &&
      eh.e_shstrndx < eh.e_shnum && eh.e_shnum < 4096) {
    Elf64_Shdr names;
    char name[16];
    if (read_at(fd, &names, sizeof(names),
                static_cast<off_t>(eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr)))) {
      for (unsigned i = 0; i < eh.e_shnum && toolkit == 0; ++i) {
        Elf64_Shdr sh;
        if (!read_at(fd, &sh, sizeof(sh), static_cast<off_t>(eh.e_shoff + i * sizeof(sh)))) break;
        if (!read_at(fd, name, sizeof(name), static_cast<off_t>(names.sh_offset + sh.sh_name)))
          continue;
        name[sizeof(name) - 1] = '\0';
        if (strcmp(name, ".nv_fatbin") != 0) continue;
        // Entries, bounded: a fatbin may start with PTX or compressed entries.
        uint64_t at = sh.sh_offset + 16, end = sh.sh_offset + sh.sh_size;
        for (int entries = 0; entries < 64 && at + 72 <= end; ++entries) {
          unsigned char header[72];
          if (!read_at(fd, header, sizeof(header), static_cast<off_t>(at))) break;
          uint16_t kind;
          uint32_t header_size;
          uint64_t padded, flags;
          memcpy(&kind, header, 2);
          memcpy(&header_size, header + 4, 4);
          memcpy(&padded, header + 8, 8);
          memcpy(&flags, header + 40, 8);
          if (header_size < 16 || header_size > 4096) break;
          const bool compressed = (flags & 0x2000) != 0;
          if (kind == 2 && !compressed) {
            unsigned char cubin[sizeof(Elf64_Ehdr)];
            if (read_at(fd, cubin, sizeof(cubin), static_cast<off_t>(at + header_size)))
              toolkit = toolkit_of_cubin_header(cubin, sizeof(cubin));
            if (toolkit != 0) break;
          }
          at += header_size + padded;
        }
      }
    }
  }
  close(fd);
  return toolkit;
}

struct Found {
  CudaVersions* versions;
};

int visit(dl_phdr_info* object, size_t, void* data) {
  CudaVersions& v = *static_cast<Found*>(data)->versions;
  const char* path = object->dlpi_name;
  if (path == nullptr || path[0] == '\0') return 0;
  const int runtime = runtime_of_library_name(path);
  if (runtime == 0) return 0;
  // A symlinked soname (libcudart.so.12) says less than the file it points to.
  char real[PATH_MAX];  // realpath needs PATH_MAX: under _FORTIFY_SOURCE a smaller buffer aborts
  bool precise_minor = false;  // libcudart.so.13.0.96 names its minor, 0; a bare soname none
  const int precise =
      realpath(path, real) != nullptr ? runtime_of_library_name(real, &precise_minor) : 0;
  const bool same_major = precise != 0 && precise / 1000 == runtime / 1000;
  int found = same_major ? precise : runtime;
  const bool minor_named = same_major && precise_minor;
  // The soname alone (PyPI's libcudart.so.12) says no minor. The runtime itself is not asked:
  // this runs inside its initialization (cuInit), and CUDA 11.8's cudaRuntimeGetVersion waits
  // there for the initialization to finish, forever (seen on the H200). PyPI's wheel says it in
  // its dist-info folder's name; else the minor stays unknown.
  if (found % 1000 == 0 && !minor_named) {
    const int wheel = runtime_of_wheel(path, found / 1000);
    found = wheel != 0 ? wheel : found + kMinorUnknown;
  }
  // Two majors in one process (a CUDA 12 library in a CUDA 13 program): the newer one is the
  // runtime whose CUPTI is loaded, the older one is named beside it.
  if (v.runtime == 0 || found / 1000 > v.runtime / 1000) {
    if (v.runtime != 0) v.other_runtime = v.runtime;
    v.runtime = found;
    v.linkage = RuntimeLinkage::shared;
    snprintf(v.runtime_path, sizeof(v.runtime_path), "%s", path);
  } else if (found / 1000 != v.runtime / 1000 && v.other_runtime == 0) {
    v.other_runtime = found;
  }
  return 0;
}

}  // namespace

int toolkit_of_cubin_header(const unsigned char* elf_header, size_t size) {
  if (size < sizeof(Elf64_Ehdr) || memcmp(elf_header, ELFMAG, SELFMAG) != 0) return 0;
  Elf64_Ehdr eh;
  memcpy(&eh, elf_header, sizeof(eh));
  if (eh.e_machine != 190 /* EM_CUDA */) return 0;
  const unsigned version = eh.e_version;  // 124: 12.4, 130: 13.0
  if (version < 80 || version > 999) return 0;
  return static_cast<int>(version / 10 * 1000 + version % 10 * 10);
}

int runtime_of_wheel(const char* library, int major) {
  char dir[512];
  snprintf(dir, sizeof(dir), "%s", library);
  for (int up = 0; up < 4; ++up) {  // lib, cuda_runtime, nvidia: site-packages is above them
    char* slash = strrchr(dir, '/');
    if (slash == nullptr) return 0;
    *slash = '\0';
  }
  char prefix[64];
  snprintf(prefix, sizeof(prefix), "nvidia_cuda_runtime_cu%d-", major);
  DIR* packages = opendir(dir[0] != '\0' ? dir : "/");
  if (packages == nullptr) return 0;
  int version = 0;
  for (int entries = 0; entries < 100000 && version == 0; ++entries) {
    const dirent* entry = readdir(packages);
    if (entry == nullptr) break;
    if (strncmp(entry->d_name, prefix, strlen(prefix)) != 0) continue;
    char* end = nullptr;
    const long wheel_major = strtol(entry->d_name + strlen(prefix), &end, 10);
    if (wheel_major != major || end == nullptr || *end != '.') continue;
    const long minor = strtol(end + 1, nullptr, 10);
    if (minor >= 0 && minor < 100) version = static_cast<int>(major * 1000 + minor * 10);
  }
  closedir(packages);
  return version;
}

int runtime_of_library_name(const char* path, bool* minor_named) {
  if (minor_named != nullptr) *minor_named = false;
  const char* name = base_name(path);
  static constexpr char kPrefix[] = "libcudart.so.";
  if (strncmp(name, kPrefix, sizeof(kPrefix) - 1) != 0) return 0;
  const char* p = name + sizeof(kPrefix) - 1;
  char* end = nullptr;
  const long major = strtol(p, &end, 10);
  if (end == p || major <= 0 || major > 99) return 0;
  long minor = 0;
  if (*end == '.') {
    p = end + 1;
    minor = strtol(p, &end, 10);
    if (end == p || minor < 0 || minor > 99)
      minor = 0;
    else if (minor_named != nullptr)
      *minor_named = true;
  }
  return static_cast<int>(major * 1000 + minor * 10);
}

void probe_loaded_runtimes(CudaVersions& versions) {
  Found found{&versions};
  dl_iterate_phdr(&visit, &found);
}

void probe_cuda_runtime(CudaVersions& versions) {
  probe_loaded_runtimes(versions);
  if (versions.runtime == 0) {
    const int toolkit = toolkit_of_executable("/proc/self/exe");
    if (toolkit != 0) {
      versions.runtime = toolkit;
      versions.linkage = RuntimeLinkage::static_;
      ssize_t n =
          readlink("/proc/self/exe", versions.runtime_path, sizeof(versions.runtime_path) - 1);
      versions.runtime_path[n > 0 ? n : 0] = '\0';
    }
  }
  if (void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD)) {
    using GetVersion = int (*)(int*);
    if (auto get = reinterpret_cast<GetVersion>(dlsym(cuda, "cuDriverGetVersion"))) {
      int driver = 0;
      if (get(&driver) == 0) versions.driver = driver;
    }
    dlclose(cuda);
  }
}

}  // namespace capguard::interposer
