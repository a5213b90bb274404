// The persistent symbol cache: what the symbolizer found in a module file, kept per
// user so that the next analysis against the same libraries reads no symbol table or DWARF
// again (PyTorch: libdwfl's symbol search is linear in libtorch_cpu's 632k symbols, about 10 ms
// an address). One file per module file, named by its build-id (one without: by its path), in a
// directory of mode 0700:
// $CAPGUARD_SYMBOL_CACHE, else $XDG_CACHE_HOME/capguard, else ~/.cache/capguard.
//
// An entry is used only for the very file it was made from: same recorded build-id (or none
// recorded), path, device, inode, size, modification and change time, and the same separate
// debug file (or still none). So it can never tell a report more than reading that file would,
// and reports are byte-identical with or without it.
//
// A cache file is untrusted input: read up to kMaxEntryBytes, checked line by line, ignored
// whole when anything is off (then symbolized again and rewritten). The directory must be
// the user's own and writable by nobody else; files are written to a temporary name and
// renamed. Any failure (read-only or missing home, a foreign directory) turns the cache off
// without a word: it only ever saves time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace capguard {

// The directory the cache uses: `setting` (--symbol-cache, or CAPGUARD_SYMBOL_CACHE when
// null), else $XDG_CACHE_HOME/capguard (when absolute), else $HOME/.cache/capguard. Empty when
// the setting is "off" or no home is known.
std::string symbol_cache_dir(const char* setting);

// The frames the symbolizer made for one return address: one per inlined call, innermost first.
struct CachedFrame {
  std::string function;
  std::string file;
  int line = 0;
};
struct CachedAddress {
  bool deep_inline = false;  // the inline scopes were cut off (kMaxInlineDepth)
  std::vector<CachedFrame> frames;
};

// What identifies a module file: the file named by the trace as it is now.
struct ModuleIdentity {
  std::string path;      // as recorded
  std::string build_id;  // as recorded, lower-case hex
  dev_t device = 0;
  ino_t inode = 0;
  int64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const ModuleIdentity&) const = default;
};

// Fills `identity` from an open descriptor of the module; false when the recorded build-id is
// not hex (then the module is not cached). An empty one (none recorded) is cached by the rest.
bool identify_module(int fd, const std::string& path, const std::string& recorded_build_id,
                     ModuleIdentity& identity);
// The state of a module's separate debug data: of `debug_file` (the one libdwfl used) when there
// is one, else of the build-id path where a debug package would install one. An entry made
// without debug data is stale once one appears there.
std::string debug_state(const std::string& debug_file, const std::string& build_id);

// One module's entry: addresses by offset in the file (return address - load bias).
struct ModuleEntry {
  ModuleIdentity identity;
  std::string debug_file;   // set by the symbolizer before flush() when new
  std::string debug_state;  // debug_state(debug_file, build_id) when it was made
  bool debug_known = false;
  std::map<uint64_t, CachedAddress> addresses;
  bool dirty = false;  // holds addresses the file on disk does not
};

class ModuleCache {
 public:
  static constexpr uint64_t kDefaultMaxBytes = uint64_t{64} << 20;
  static constexpr int64_t kMaxEntryBytes = int64_t{8} << 20;

  // Opens `dir` (empty: off), creating it and its parent with mode 0700 where missing.
  explicit ModuleCache(const std::string& dir, uint64_t max_bytes = kDefaultMaxBytes);
  ~ModuleCache();
  ModuleCache(const ModuleCache&) = delete;
  ModuleCache& operator=(const ModuleCache&) = delete;

  bool enabled() const { return dir_fd_ >= 0; }

  // The entry for this module file: the one already used in this run, the one on disk when it
  // is valid and its identity (the debug fingerprint checked again) still holds, else a new,
  // empty one. Entries live as long as the cache; one file mapped by several processes shares
  // one entry.
  ModuleEntry& entry(const ModuleIdentity& identity);
  // Writes every entry that gained addresses (temporary file, rename), then evicts the least
  // recently used files until the directory holds at most max_bytes.
  void flush();

  uint64_t hits = 0;    // entries found valid on disk
  uint64_t writes = 0;  // entries written

 private:
  bool load(const std::string& name, ModuleEntry& entry);
  void write(const std::string& name, const ModuleEntry& entry);
  void evict();

  int dir_fd_ = -1;
  uint64_t max_bytes_;
  std::map<std::string, std::unique_ptr<ModuleEntry>> entries_;  // by identity
};

}  // namespace capguard
