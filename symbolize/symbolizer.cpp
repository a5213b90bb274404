#include "symbolize/symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>

#include "symbolize/debug_files.h"
#include "util/base_name.h"
#include "util/regular_file.h"

namespace capguard {

namespace {

std::string to_hex(const unsigned char* bytes, int size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (int i = 0; i < size; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 0xf];
  }
  return hex;
}

bool same_build_id(std::string_view recorded_hex, const std::string& actual_hex) {
  if (recorded_hex.size() != actual_hex.size()) return false;
  for (size_t i = 0; i < actual_hex.size(); ++i) {
    char c = recorded_hex[i];
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    if (c != actual_hex[i]) return false;
  }
  return true;
}

// Never asked for a module's main file: dwfl_report_elf is handed its descriptor.
int no_elf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) { return -1; }

// Separate debug files: opened by debug_files.cpp, never by libdwfl's blocking search;
// debuginfod only when the user turned it on (--debuginfod).
const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = no_elf,
    .find_debuginfo = find_debuginfo_offline,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};
const Dwfl_Callbacks kDebuginfodCallbacks = {
    .find_elf = no_elf,
    .find_debuginfo = find_debuginfo_with_debuginfod,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

// The name a function was declared with: its linkage name demangled when it has one
// (qualified, with parameters), else its plain name; followed through DW_AT_abstract_origin.
std::string die_name(Dwarf_Die* die) {
  Dwarf_Attribute attribute;
  for (int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name})
    if (dwarf_attr_integrate(die, name, &attribute) != nullptr)
      if (const char* text = dwarf_formstring(&attribute)) return demangle(text);
  if (dwarf_attr_integrate(die, DW_AT_name, &attribute) != nullptr)
    if (const char* text = dwarf_formstring(&attribute)) return text;
  return {};
}

// Where an inlined call was made: its DW_AT_call_file (an index into the unit's files) and
// DW_AT_call_line.
bool call_site(Dwarf_Die* unit, Dwarf_Die* inlined, std::string& file, int& line) {
  Dwarf_Attribute attribute;
  Dwarf_Word index = 0, number = 0;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attribute), &index) != 0 ||
      dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attribute), &number) != 0)
    return false;
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_getsrcfiles(unit, &files, &count) != 0 || index >= count) return false;
  const char* name = dwarf_filesrc(files, index, nullptr, nullptr);
  if (name == nullptr || number == 0) return false;
  file = name;
  line = static_cast<int>(number);
  return true;
}

// One module of one process, opened lazily with its own Dwfl session (each process may map
// the same file at a different base).
// How deeply the DIEs that contain `pc` nest below `unit`, counted up to one past
// kMaxInlineDepth (each level: the one child that contains it, found among its siblings).
int scope_depth(Dwarf_Die* unit, Dwarf_Addr pc) {
  Dwarf_Die die = *unit;
  int depth = 0;
  while (depth <= kMaxInlineDepth) {
    Dwarf_Die child;
    if (dwarf_child(&die, &child) != 0) break;
    bool found = false;
    do {
      if (dwarf_haspc(&child, pc) == 1) {
        found = true;
        break;
      }
    } while (dwarf_siblingof(&child, &child) == 0);
    if (!found) break;
    ++depth;
    die = child;
  }
  return depth;
}

// What the module's compressed sections inflate to (their headers say; a header that cannot be
// read counts as too much): SHF_COMPRESSED sections and GNU ".zdebug" ones ("ZLIB" and a
// big-endian size).
uint64_t inflated_size(int fd) {
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return 0;
  constexpr uint64_t kTooMuch = uint64_t{1} << 62;
  uint64_t total = 0;
  size_t names = 0;
  const bool have_names = elf_getshdrstrndx(elf, &names) == 0;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr && total < kTooMuch;
       scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    if (shdr.sh_flags & SHF_COMPRESSED) {
      GElf_Chdr chdr;
      total += gelf_getchdr(scn, &chdr) != nullptr ? std::min<uint64_t>(chdr.ch_size, kTooMuch)
                                                   : kTooMuch;
      continue;
    }
    const char* name = have_names ? elf_strptr(elf, names, shdr.sh_name) : nullptr;
    if (name == nullptr || std::strncmp(name, ".zdebug", 7) != 0 || shdr.sh_type == SHT_NOBITS)
      continue;
    Elf_Data* raw = elf_rawdata(scn, nullptr);
    if (raw == nullptr || raw->d_size < 12 || std::memcmp(raw->d_buf, "ZLIB", 4) != 0) {
      total += kTooMuch;
      continue;
    }
    uint64_t size = 0;
    for (int i = 0; i < 8; ++i)
      size = size << 8 | static_cast<const unsigned char*>(raw->d_buf)[4 + i];
    total += std::min(size, kTooMuch);
  }
  elf_end(elf);
  return total;
}

// A module file opened for names: the path comes from the trace, so it is opened here, without
// blocking (a FIFO would hang libelf's open forever), and kept only when it is a regular file
// whose compressed debug data fits the budget (`inflated_left`: what may still be inflated over
// all modules; lowered by this one's). -1 when it is not to be read.
int open_module_file(const Module& module, uint64_t& inflated_left, bool& over_budget) {
  OpenRegular why;
  const int fd = open_regular(module.path, why);
  if (fd < 0) return -1;
  const uint64_t inflated = inflated_size(fd);
  if (inflated > kMaxInflatedPerModule || inflated > inflated_left) {
    over_budget = true;
    close(fd);
    return -1;
  }
  inflated_left -= inflated;
  return fd;
}

// The load bias libdwfl will use for this file when told `recorded_base` (dwfl_report_elf, not
// adding p_vaddr): none for an executable of fixed addresses (ET_EXEC: the trace's base is
// ignored), else the base less the first loadable segment's aligned address. The symbol
// cache's keys are addresses minus this bias: addresses in the file's own terms, whatever base
// a trace claims (a forged base for a non-PIE python3 must not file one function's name under
// another's key). False when the file is no ELF with a loadable segment.
bool load_bias(int fd, uint64_t recorded_base, uint64_t& bias) {
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return false;
  GElf_Ehdr ehdr;
  size_t count = 0;
  bool ok = gelf_getehdr(elf, &ehdr) != nullptr && elf_getphdrnum(elf, &count) == 0;
  if (ok && ehdr.e_type == ET_EXEC) {
    bias = 0;
  } else if (ok) {
    ok = false;
    for (size_t i = 0; i < count && !ok; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD)
        continue;
      bias = recorded_base - (phdr.p_vaddr & -phdr.p_align);
      ok = true;
    }
  }
  elf_end(elf);
  return ok;
}

class OpenModule {
 public:
  // Takes `fd` (from open_module_file) over. `bias`: load_bias's; a module libdwfl places
  // otherwise is not read (its names would be filed under the wrong keys).
  OpenModule(const Module& module, int fd, uint64_t bias, bool debuginfod) {
    dwfl_ = dwfl_begin(debuginfod ? &kDebuginfodCallbacks : &kOfflineCallbacks);
    if (dwfl_ == nullptr) {
      close(fd);
      return;
    }
    dwfl_report_begin(dwfl_);
    // On success libdwfl owns the descriptor (closed by dwfl_end); on failure it is ours.
    handle_ =
        dwfl_report_elf(dwfl_, module.path.c_str(), module.path.c_str(), fd, module.base, false);
    if (handle_ == nullptr) close(fd);
    dwfl_report_end(dwfl_, nullptr, nullptr);
    if (handle_ != nullptr && !module.build_id.empty()) {
      const unsigned char* bits = nullptr;
      GElf_Addr vaddr = 0;
      const int size = dwfl_module_build_id(handle_, &bits, &vaddr);
      // A rebuilt file at the same path would give confidently wrong names: use none.
      if (size <= 0 || !same_build_id(module.build_id, to_hex(bits, size))) handle_ = nullptr;
    }
    Dwarf_Addr used = 0;
    if (handle_ != nullptr && (dwfl_module_getelf(handle_, &used) == nullptr || used != bias))
      handle_ = nullptr;
  }
  ~OpenModule() {
    if (dwfl_ != nullptr) dwfl_end(dwfl_);
  }
  OpenModule(const OpenModule&) = delete;
  OpenModule& operator=(const OpenModule&) = delete;

  // Appends the frames of the instruction at `pc` (a runtime address) to `frames`: one for each
  // function inlined there, innermost first (file:line from the line table, then each inlined
  // call's site), then the function the code was compiled into (its ELF symbol).
  // Returns false when the scopes at `pc` nest deeper than kMaxInlineDepth: then only the
  // outer frame is given.
  bool readable() const { return handle_ != nullptr; }
  // The separate debug file libdwfl found, empty when none (or the DWARF is in the module).
  std::string debug_file() const {
    const char* debug = nullptr;
    if (handle_ != nullptr)
      dwfl_module_info(handle_, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &debug);
    return debug == nullptr ? std::string() : debug;
  }

  bool describe(uint64_t pc, Frame frame, std::vector<Frame>& frames) const {
    if (handle_ == nullptr) {
      frames.push_back(frame);
      return true;
    }
    GElf_Off offset = 0;
    GElf_Sym symbol{};
    frame.function =
        demangle(dwfl_module_addrinfo(handle_, pc, &offset, &symbol, nullptr, nullptr, nullptr));
    if (Dwfl_Line* line = dwfl_module_getsrc(handle_, pc)) {
      int line_number = 0;
      const char* file = dwfl_lineinfo(line, nullptr, &line_number, nullptr, nullptr, nullptr);
      if (file != nullptr && line_number > 0) {
        frame.file = file;
        frame.line = line_number;
      }
    }
    Dwarf_Addr bias = 0;
    Dwarf_Die* unit = dwfl_module_addrdie(handle_, pc, &bias);
    if (unit != nullptr && scope_depth(unit, pc - bias) > kMaxInlineDepth) {
      frames.push_back(frame);
      return false;
    }
    Dwarf_Die* scopes = nullptr;
    const int count = unit == nullptr ? 0 : dwarf_getscopes(unit, pc - bias, &scopes);
    const std::string outer = frame.function;
    for (int i = 0; i < count; ++i) {
      const int tag = dwarf_tag(&scopes[i]);
      if (tag == DW_TAG_subprogram) break;
      if (tag != DW_TAG_inlined_subroutine) continue;  // lexical blocks
      std::string file;
      int line = 0;
      if (!call_site(unit, &scopes[i], file, line)) break;
      frame.function = die_name(&scopes[i]);
      frames.push_back(frame);
      frame.file = file;
      frame.line = line;
      frame.function = outer;
    }
    std::free(scopes);
    frames.push_back(frame);
    return true;
  }

 private:
  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* handle_ = nullptr;
};

// What the symbolizer knows of one module record: the file kept open until it must be read,
// and where the names found in it go: its entry in the module cache, or one of its own for a
// module whose recorded build-id is not hex. Records of one file share its cache entry; the
// first of them (`reader`) reads every address any of them needs.
struct ModuleState {
  const Module* module = nullptr;
  int fd = -1;                       // until `open` takes it
  std::unique_ptr<OpenModule> open;  // libdwfl, made when the entry lacks an address
  ModuleEntry* entry = nullptr;      // null: not read (not a regular file, over the budget)
  ModuleEntry own;
  ModuleState* reader = nullptr;
  uint64_t bias = 0;           // load_bias: a key is a return address less it
  std::set<uint64_t> pending;  // keys (return address - bias) to read, on the reader
  uint64_t read = 0;           // addresses it read
  bool debuginfod = false;     // SymbolizeOptions::debuginfod
  ~ModuleState() {
    if (fd >= 0) close(fd);
  }

  // Reads the pending addresses into the entry. Touches nothing but this state and its entry:
  // readers of different files run in parallel.
  void read_pending() {
    if (open == nullptr)
      open = std::make_unique<OpenModule>(*module, std::exchange(fd, -1), bias, debuginfod);
    for (const uint64_t offset : pending) {
      Frame frame;
      frame.address = bias + offset;
      frame.module = module->path;
      // Every recorded address is a return address: the call itself is the instruction before.
      const uint64_t pc = frame.address == 0 ? 0 : frame.address - 1;
      std::vector<Frame> frames;
      const bool whole = open->describe(pc, frame, frames);
      ++read;
      if (!open->readable()) continue;  // then the frame keeps module and offset only
      CachedAddress& cached = entry->addresses[offset];
      cached.deep_inline = !whole;
      for (const Frame& f : frames) cached.frames.push_back({f.function, f.file, f.line});
      entry->dirty = true;
    }
    pending.clear();
  }
};

// More would only add memory: a report rarely passes through more large libraries.
constexpr size_t kMaxReaderThreads = 8;

class Symbolizer {
 public:
  Symbolizer(const std::vector<ProcessModules>& modules, const SymbolCache* cache,
             const UserCode& user, ModuleCache& module_cache, bool debuginfod)
      : modules_(modules),
        cache_(cache),
        user_(user),
        module_cache_(module_cache),
        debuginfod_(debuginfod) {
    // Once, not per location: a report may hold any number of processes.
    for (const auto& process : modules_) {
      if (process.process != 0) by_index_.try_emplace(process.process, &process);
      by_pid_.try_emplace(process.pid, &process);
    }
  }

  // `process` (Finding::process) tells apart processes that share a pid; 0: by pid alone.
  void symbolize(Location& location, uint32_t pid, uint32_t process) {
    if (location.pid != 0) pid = location.pid;
    owner_ = find_process(pid, process);
    const uint64_t owner_key = process != 0 ? process : uint64_t{1} << 32 | pid;
    if (!location.addresses.empty()) {
      location.frames.clear();
      std::vector<Frame> python;
      for (uint64_t address : location.addresses) {
        if (is_python_frame_tag(address)) {
          python.push_back(python_frame(static_cast<uint32_t>(address)));
        } else {
          const std::vector<Frame>& frames = frames_at(owner_key, pid, address);
          location.frames.insert(location.frames.end(), frames.begin(), frames.end());
        }
      }
      if (!python.empty()) interleave_python_frames(location.frames, python);
    }
    location.user_frame = choose_user_frame(location.frames, user_);
  }

  // The first pass: which addresses must be read from which module file (those the cache does
  // not know). Modules are opened, and the budget charged, in the order the report names them.
  void plan(const Location& location, uint32_t pid, uint32_t process) {
    if (location.pid != 0) pid = location.pid;
    const ProcessModules* owner = find_process(pid, process);
    if (owner == nullptr) return;
    const uint64_t owner_key = process != 0 ? process : uint64_t{1} << 32 | pid;
    for (uint64_t address : location.addresses) {
      if (is_python_frame_tag(address) || !planned_.insert({owner_key, address}).second) continue;
      const Module* module = owner->find(address == 0 ? 0 : address - 1);
      if (module == nullptr) continue;
      ModuleState& state = state_of(*module);
      if (state.entry == nullptr) continue;
      const uint64_t offset = address - state.bias;
      if (state.entry->addresses.contains(offset))
        ++stats_.cached_addresses;
      else
        state.reader->pending.insert(offset);
    }
  }

  // The second pass: each module file with addresses to read is read once, several files at a
  // time (libdwfl's symbol search is linear in the symbol table: libtorch_cpu and
  // libtorch_cuda take 0.2 s each). Each reader has its own libdwfl session.
  void read_all() {
    std::vector<ModuleState*> readers;
    for (auto& [module, state] : open_)
      if (!state.pending.empty()) readers.push_back(&state);
    const size_t threads = std::min<size_t>(
        {readers.size(), std::max(1u, std::thread::hardware_concurrency()), kMaxReaderThreads});
    std::atomic<size_t> next = 0;
    auto work = [&] {
      for (size_t i; (i = next.fetch_add(1)) < readers.size();) readers[i]->read_pending();
    };
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (size_t t = 1; t < threads; ++t) {
      try {
        pool.emplace_back(work);
      } catch (const std::system_error&) {
        break;  // no more threads to be had (a process limit): the others do the rest
      }
    }
    work();
    for (std::thread& thread : pool) thread.join();
    for (const ModuleState* reader : readers) stats_.read_addresses += reader->read;
  }

  // Tells new cache entries where their debug data came from, then writes them.
  void finish() {
    for (auto& [module, state] : open_)
      if (state.entry != nullptr && state.entry != &state.own && state.entry->dirty &&
          !state.entry->debug_known && state.open != nullptr) {
        state.entry->debug_file = state.open->debug_file();
        state.entry->debug_state =
            debug_state(state.entry->debug_file, state.entry->identity.build_id);
        state.entry->debug_known = true;
      }
    module_cache_.flush();
  }

 private:
  // The frames at a return address: several where code was inlined there.
  const std::vector<Frame>& frames_at(uint64_t owner_key, uint32_t pid, uint64_t return_address) {
    auto [cached, inserted] = frames_.try_emplace({owner_key, return_address});
    std::vector<Frame>& frames = cached->second;
    if (!inserted) return frames;
    Frame frame;
    frame.address = return_address;
    resolve(frame, frames);
    const bool unknown = frames.size() == 1 && frames[0].function.empty() && frames[0].file.empty();
    if (unknown && cache_ != nullptr) {
      const uint32_t process = owner_key >> 32 == 0 ? static_cast<uint32_t>(owner_key) : 0;
      if (const std::vector<Frame>* known = cache_->find(process, pid, return_address)) {
        const uint64_t offset = frames[0].offset;
        frames = *known;
        for (Frame& f : frames) f.offset = offset;
      }
    }
    return frames;
  }

  Frame python_frame(uint32_t id) const {
    Frame frame;
    frame.module = kPythonModule;
    if (owner_ == nullptr) return frame;
    if (const auto it = owner_->python_frames.find(id); it != owner_->python_frames.end()) {
      frame.file = it->second.file;
      frame.function = it->second.function;
      frame.line = it->second.line;
    }
    return frame;
  }

  ModuleState& state_of(const Module& module) {
    auto [it, added] = open_.try_emplace(&module);
    ModuleState& state = it->second;
    if (!added) return state;
    state.module = &module;
    state.debuginfod = debuginfod_;
    bool over_budget = false;
    state.fd = open_module_file(module, inflated_left_, over_budget);
    if (over_budget) stats_.over_budget.push_back(module.path);
    if (state.fd < 0) return state;
    if (!load_bias(state.fd, module.base, state.bias)) {
      close(std::exchange(state.fd, -1));
      return state;
    }
    ModuleIdentity identity;
    state.entry = identify_module(state.fd, module.path, module.build_id, identity)
                      ? &module_cache_.entry(identity)
                      : &state.own;
    state.reader = readers_.try_emplace(state.entry, &state).first->second;
    if (state.reader != &state) close(std::exchange(state.fd, -1));  // another record reads it
    return state;
  }

  void resolve(Frame frame, std::vector<Frame>& frames) {
    // Every recorded address is a return address: the call itself is the instruction before.
    const uint64_t pc = frame.address == 0 ? 0 : frame.address - 1;
    const Module* module = owner_ == nullptr ? nullptr : owner_->find(pc);
    if (module == nullptr) {
      frames.push_back(frame);
      return;
    }
    frame.module = module->path;
    frame.offset = frame.address - module->base;
    const ModuleState& state = state_of(*module);
    if (state.entry != nullptr) {
      if (const auto it = state.entry->addresses.find(frame.address - state.bias);
          it != state.entry->addresses.end()) {
        for (const CachedFrame& cached : it->second.frames) {
          frame.function = cached.function;
          frame.file = cached.file;
          frame.line = cached.line;
          frames.push_back(frame);
        }
        stats_.deep_inline_addresses += it->second.deep_inline;
        return;
      }
    }
    // Not read: not a regular file, over the budget, or not one libdwfl could use (rebuilt).
    frames.push_back(frame);
  }

  const ProcessModules* find_process(uint32_t pid, uint32_t index) const {
    if (index != 0) {
      if (const auto it = by_index_.find(index); it != by_index_.end()) return it->second;
      // modules made without an index (tests)
    }
    const auto it = by_pid_.find(pid);
    return it == by_pid_.end() ? nullptr : it->second;
  }

  const std::vector<ProcessModules>& modules_;
  const SymbolCache* cache_;
  const UserCode& user_;
  ModuleCache& module_cache_;
  const bool debuginfod_;
  const ProcessModules* owner_ = nullptr;  // of the location being symbolized
 public:
  SymbolizeStats stats_;

 private:
  uint64_t inflated_left_ = kMaxInflatedTotal;
  std::unordered_map<uint32_t, const ProcessModules*> by_index_;  // the first of each
  std::unordered_map<uint32_t, const ProcessModules*> by_pid_;    // the first of each
  std::map<const Module*, ModuleState> open_;
  std::map<const ModuleEntry*, ModuleState*> readers_;  // the record that reads each file
  std::set<std::pair<uint64_t, uint64_t>> planned_;     // (process, address) seen by plan()
  std::map<std::pair<uint64_t, uint64_t>, std::vector<Frame>> frames_;  // (process, address)
};

// The interpreter's own native frames: the python3.X executable or libpython3.X.
}  // namespace

void interleave_python_frames(std::vector<Frame>& native, const std::vector<Frame>& python) {
  auto at = native.begin();
  while (at != native.end() && !is_interpreter_frame(*at)) ++at;
  native.insert(at, python.begin(), python.end());
}

SymbolizeStats symbolize(Report& report, const std::vector<ProcessModules>& modules,
                         const SymbolCache* cache, const UserCode& user, ModuleCache* module_cache,
                         bool debuginfod) {
  ModuleCache in_memory("");  // still one read per module file within this run
  Symbolizer symbolizer(modules, cache, user, module_cache ? *module_cache : in_memory, debuginfod);
  // Every location of the report, in one order for both passes: plan, then symbolize.
  auto each_location = [&report](auto&& f) {
    for (auto& finding : report.findings) {
      f(finding.location, finding.pid, finding.process);
      for (auto& related : finding.related) f(related.location, finding.pid, finding.process);
    }
    for (auto& capture : report.captures)
      for_each_location(capture, [&](Location& l) { f(l, capture.pid, capture.process); });
    for (auto& site : report.graph_sites) {
      f(site.site, site.pid, site.process);
      for (auto& held : site.held)
        if (held.alloc_known) f(held.alloc, site.pid, site.process);
    }
    for (auto& rehearsal : report.rehearsals)
      for (auto* items : {&rehearsal.warmup, &rehearsal.breaks})
        for (auto& item : *items) f(item.location, rehearsal.pid, rehearsal.process);
    for (auto& coverage : report.coverage)
      for (auto& site : coverage.eager) f(site.location, coverage.pid, coverage.process);
    for (auto& rank : report.collectives)
      for (auto& graph : rank.graphs) f(graph.site, rank.pid, rank.process);
  };
  each_location(
      [&](Location& l, uint32_t pid, uint32_t process) { symbolizer.plan(l, pid, process); });
  symbolizer.read_all();
  each_location(
      [&](Location& l, uint32_t pid, uint32_t process) { symbolizer.symbolize(l, pid, process); });
  symbolizer.finish();
  return symbolizer.stats_;
}

}  // namespace capguard
