#include "symbolize/debug_files.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "util/regular_file.h"

namespace capguard {
namespace {

constexpr std::string_view kDebugRoot = "/usr/lib/debug";

std::string to_hex(const unsigned char* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (size_t i = 0; i < size; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 0xf];
  }
  return hex;
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The build-id of the ELF file open at `fd`, as hex; empty when none or not ELF.
std::string build_id_of(int fd) {
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return {};
  const void* bits = nullptr;
  const ssize_t size = dwelf_elf_gnu_build_id(elf, &bits);
  std::string hex = size > 0 ? to_hex(static_cast<const unsigned char*>(bits), size) : "";
  elf_end(elf);
  return hex;
}

// `path` opened without blocking and without a controlling terminal, kept only when it is a
// regular file whose build-id is `want`: a FIFO, device or socket there is passed over.
int open_if_debug_file(const std::string& path, const std::string& want) {
  if (want.empty()) return -1;
  OpenRegular why;
  const int fd = open_regular(path, why);
  if (fd < 0) return -1;
  if (build_id_of(fd) != want) {
    close(fd);
    return -1;
  }
  return fd;
}

// The .gnu_debugaltlink of the file at `path` (dwz's shared debug data): the name it gives
// and the build-id the named file must have.
bool alt_link_of(const std::string& path, std::string& name, std::string& build_id) {
  OpenRegular why;
  const int fd = open_regular(path, why);
  if (fd < 0) return false;
  bool found = false;
  {
    elf_version(EV_CURRENT);
    if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
      size_t names = 0;
      if (elf_getshdrstrndx(elf, &names) == 0)
        for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr && !found;
             scn = elf_nextscn(elf, scn)) {
          GElf_Shdr shdr;
          const char* section =
              gelf_getshdr(scn, &shdr) != nullptr ? elf_strptr(elf, names, shdr.sh_name) : nullptr;
          if (section == nullptr || std::strcmp(section, ".gnu_debugaltlink") != 0) continue;
          const Elf_Data* data = elf_getdata(scn, nullptr);
          if (data == nullptr || data->d_buf == nullptr) break;
          const char* bytes = static_cast<const char*>(data->d_buf);
          const size_t end = strnlen(bytes, data->d_size);
          if (end + 1 >= data->d_size) break;
          name.assign(bytes, end);
          build_id = to_hex(reinterpret_cast<const unsigned char*>(bytes) + end + 1,
                            data->d_size - end - 1);
          found = true;
        }
      elf_end(elf);
    }
  }
  close(fd);
  return found;
}

std::string build_id_path(const std::string& hex) {
  return std::string(kDebugRoot) + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) +
         ".debug";
}

// Takes `fd` and its path as the answer libdwfl wants (it owns both afterwards).
int found(int fd, const std::string& path, char** debuginfo_file_name) {
  *debuginfo_file_name = strdup(path.c_str());
  return fd;
}

// The module's own build-id, as libdwfl read it from the module.
std::string module_build_id(Dwfl_Module* module) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int size = dwfl_module_build_id(module, &bits, &vaddr);
  return size > 0 ? to_hex(bits, static_cast<size_t>(size)) : "";
}

// The module's own .gnu_debuglink name, empty when none.
std::string module_debuglink(Dwfl_Module* module) {
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module, &bias);
  GElf_Word crc = 0;
  const char* link = elf == nullptr ? nullptr : dwelf_elf_gnu_debuglink(elf, &crc);
  return link == nullptr ? "" : link;
}

int find_locally(Dwfl_Module* module, const char* file_name, const char* debuglink_file,
                 char** debuginfo_file_name) {
  *debuginfo_file_name = nullptr;
  const std::string file = file_name != nullptr ? file_name : "";
  const std::string link = debuglink_file != nullptr ? debuglink_file : "";
  // libdwfl asks the same callback for dwz's shared file: the name the debug data gives in
  // .gnu_debugaltlink, not the module's debuglink. Its build-id is the one that link gives.
  std::string alt_name, alt_id;
  if (!link.empty() && link != module_debuglink(module) && alt_link_of(file, alt_name, alt_id) &&
      alt_name == link) {
    for (const std::string& candidate :
         {build_id_path(alt_id), link.starts_with('/') ? link : directory_of(file) + "/" + link,
          std::string(kDebugRoot) + "/.dwz/" + name_of(link)})
      if (const int fd = open_if_debug_file(candidate, alt_id); fd >= 0)
        return found(fd, candidate, debuginfo_file_name);
    return -1;
  }
  // A module without a build-id gets no separate debug file: nothing would say the one found
  // is its own (libdwfl would check a CRC over the whole file).
  const std::string id = module_build_id(module);
  if (id.empty()) return -1;
  for (const std::string& candidate : debug_file_candidates(file, id, link))
    if (const int fd = open_if_debug_file(candidate, id); fd >= 0)
      return found(fd, candidate, debuginfo_file_name);
  return -1;
}

}  // namespace

std::vector<std::string> debug_file_candidates(const std::string& file_name,
                                               const std::string& build_id_hex,
                                               const std::string& debuglink) {
  std::vector<std::string> candidates;
  if (build_id_hex.size() >= 4) candidates.push_back(build_id_path(build_id_hex));
  if (file_name.empty()) return candidates;
  const bool made_up = debuglink.empty();
  const std::string base = name_of(file_name);
  const std::string link = made_up ? base + ".debug" : debuglink;
  std::vector<std::string> directories = {directory_of(file_name)};
  // A symlinked module: its target's directory too, as libdwfl does.
  if (char* real = realpath(file_name.c_str(), nullptr)) {
    const std::string target = directory_of(real);
    std::free(real);
    if (target != directories[0]) directories.push_back(target);
  }
  for (const std::string& dir : directories) {
    candidates.push_back(dir + "/" + link);
    candidates.push_back(dir + "/.debug/" + link);
    if (made_up) candidates.push_back(dir + "/.debug/" + base);
    // Under /usr/lib/debug: the directory's whole absolute path, then shorter tails of it.
    if (!dir.starts_with('/')) continue;
    for (size_t at = 0; at != std::string::npos && at + 1 < dir.size();
         at = dir.find('/', at + 1)) {
      candidates.push_back(std::string(kDebugRoot) + dir.substr(at) + "/" + link);
      if (made_up) candidates.push_back(std::string(kDebugRoot) + dir.substr(at) + "/" + base);
    }
  }
  return candidates;
}

int find_debuginfo_offline(Dwfl_Module* module, void**, const char*, Dwarf_Addr,
                           const char* file_name, const char* debuglink_file, GElf_Word,
                           char** debuginfo_file_name) {
  return find_locally(module, file_name, debuglink_file, debuginfo_file_name);
}

int find_debuginfo_with_debuginfod(Dwfl_Module* module, void** userdata, const char* modname,
                                   Dwarf_Addr base, const char* file_name,
                                   const char* debuglink_file, GElf_Word debuglink_crc,
                                   char** debuginfo_file_name) {
  const int fd = find_locally(module, file_name, debuglink_file, debuginfo_file_name);
  if (fd >= 0 || module_build_id(module).empty()) return fd;
  return dwfl_build_id_find_debuginfo(module, userdata, modname, base, file_name, debuglink_file,
                                      debuglink_crc, debuginfo_file_name);
}

}  // namespace capguard
