#include "symbolize/module_cache.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "symbolize/symbolizer.h"
#include "tests/this_process.h"

namespace capguard {
namespace {

namespace fs = std::filesystem;

[[gnu::noinline]] uint64_t return_address_of_this_call() {
  return reinterpret_cast<uint64_t>(__builtin_return_address(0));
}

// A call in the test program: its return address lies in this function, at a known line.
int g_call_line = 0;
[[gnu::noinline]] uint64_t user_code_here() {
  g_call_line = __LINE__ + 1;
  const uint64_t address = return_address_of_this_call();
  asm volatile("" ::: "memory");  // keeps the call from becoming a tail call
  return address;
}

std::string temp_dir() {
  char dir[] = "/tmp/capguard-module-cache-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  return dir;
}

// The test program's module map, its executable's record naming `path` instead (a symlink to
// it, or another file put there), with `build_id` when given.
ProcessModules modules_naming(const std::string& path,
                              std::optional<std::string> build_id = std::nullopt) {
  ProcessModules process = modules_of_this_process();
  const std::string exe = executable_path();
  for (Module& module : process.modules)
    if (module.path == exe) {
      module.path = path;
      if (build_id) module.build_id = *build_id;
    }
  return process;
}

struct Result {
  std::vector<Frame> frames;
  SymbolizeStats stats;
  uint64_t hits = 0, writes = 0;
};

// One analysis of a finding at `address`, with the cache in `dir` (bounded to `max_bytes`).
Result analyze(uint64_t address, const ProcessModules& process, const std::string& dir,
               uint64_t max_bytes = ModuleCache::kDefaultMaxBytes) {
  Report report;
  Finding finding;
  finding.pid = process.pid;
  finding.location.addresses = {address};
  report.findings.push_back(finding);
  ModuleCache cache(dir, max_bytes);
  Result result;
  result.stats = symbolize(report, {process}, nullptr, {}, &cache);
  result.frames = report.findings[0].location.frames;
  result.hits = cache.hits;
  result.writes = cache.writes;
  return result;
}

void check_same_frames(const std::vector<Frame>& a, const std::vector<Frame>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].address == b[i].address);
    CHECK(a[i].offset == b[i].offset);
    CHECK(a[i].module == b[i].module);
    CHECK(a[i].function == b[i].function);
    CHECK(a[i].file == b[i].file);
    CHECK(a[i].line == b[i].line);
  }
}

std::vector<fs::path> entries(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".sym") files.push_back(e.path());
  return files;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Sets an environment variable for one scope (nullptr: unset), then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_SUITE("module_cache") {
  TEST_CASE("a miss reads the module and writes an entry; the next run answers from it") {
    const std::string dir = temp_dir() + "/cache";
    const uint64_t address = user_code_here();
    const ProcessModules process = modules_of_this_process();

    const Result cold = analyze(address, process, dir);
    CHECK(cold.stats.read_addresses == 1);
    CHECK(cold.stats.cached_addresses == 0);
    CHECK(cold.hits == 0);
    CHECK(cold.writes == 1);
    REQUIRE(cold.frames.size() == 1);
    CHECK(cold.frames[0].function == "capguard::(anonymous namespace)::user_code_here()");
    CHECK(cold.frames[0].line == g_call_line);

    // Created for this user alone.
    struct stat st;
    REQUIRE(stat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    const auto files = entries(dir);
    REQUIRE(files.size() == 1);
    REQUIRE(stat(files[0].c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(st.st_uid == geteuid());
    CHECK(files[0].filename().string().starts_with(process.modules[0].build_id));

    const Result warm = analyze(address, process, dir);
    CHECK(warm.stats.read_addresses == 0);
    CHECK(warm.stats.cached_addresses == 1);
    CHECK(warm.hits == 1);
    CHECK(warm.writes == 0);
    check_same_frames(warm.frames, cold.frames);

    // An address the entry lacks is read and added; the rest still come from the entry.
    const Result more = analyze(user_code_here() + 0, process, dir);
    CHECK(more.hits == 1);
    const Result other = analyze(address - 1, process, dir);  // the call's own instruction
    CHECK(other.stats.read_addresses == 1);
    CHECK(other.writes == 1);
    CHECK(analyze(address - 1, process, dir).stats.cached_addresses == 1);
    CHECK(analyze(address, process, dir).stats.cached_addresses == 1);
  }

  TEST_CASE("a damaged cache file is ignored whole, symbolized again and rewritten") {
    const std::string dir = temp_dir() + "/cache";
    const uint64_t address = user_code_here();
    const ProcessModules process = modules_of_this_process();
    const Result reference = analyze(address, process, dir);
    const fs::path file = entries(dir).at(0);
    const std::string good = read_file(file);
    REQUIRE(good.ends_with("end\t1\n"));

    const std::string precious = dir + "/../precious";
    write_file(precious, "someone else's file\n");
    struct Damage {
      std::string what;
      std::function<void()> make;
    };
    const std::vector<Damage> damages = {
        {"cut short", [&] { write_file(file, good.substr(0, good.size() / 2)); }},
        {"cut before its end line", [&] { write_file(file, good.substr(0, good.find("end"))); }},
        {"empty", [&] { write_file(file, ""); }},
        {"not a cache file",
         [&] {
           write_file(file,
                      "\x7f"
                      "ELF garbage\n");
         }},
        {"a newer format", [&] { write_file(file, "capguard-symbol-cache\t3\n"); }},
        {"the first format (keys by the trace's base)",
         [&] {
           std::string text = good;
           text.replace(text.find("cache\t2"), 8, "cache\t1");
           write_file(file, text);
         }},
        {"a frame count past the file",
         [&] {
           std::string text = good;
           text.replace(text.find("\t0\t1\n"), 5, "\t0\t9\n");
           write_file(file, text);
         }},
        {"a bad escape",
         [&] {
           std::string text = good;
           text.insert(text.find("user_code_here"), "\\q");
           write_file(file, text);
         }},
        {"larger than the bound",
         [&] {
           write_file(file, good);
           REQUIRE(truncate(file.c_str(), ModuleCache::kMaxEntryBytes + 1) == 0);
         }},
        {"a FIFO",
         [&] {
           fs::remove(file);
           REQUIRE(mkfifo(file.c_str(), 0600) == 0);
         }},
        {"a symlink to another file",
         [&] {
           fs::remove(file);
           fs::create_symlink(precious, file);
         }},
    };
    for (const Damage& damage : damages) {
      CAPTURE(damage.what);
      damage.make();
      const Result again = analyze(address, process, dir);  // never blocks on the FIFO
      CHECK(again.hits == 0);
      CHECK(again.stats.read_addresses == 1);
      check_same_frames(again.frames, reference.frames);
      CHECK(again.writes == 1);  // replaced by a rename: a link is replaced, never followed
      CHECK(fs::is_regular_file(fs::symlink_status(file)));
      CHECK(read_file(file) == good);
      CHECK(analyze(address, process, dir).hits == 1);
    }
    CHECK(read_file(precious) == "someone else's file\n");
  }

  TEST_CASE("an entry is never used across a build-id change or for another file") {
    const std::string base = temp_dir();
    const std::string dir = base + "/cache";
    const std::string link = base + "/libapp.so";  // the module's path, as the trace names it
    fs::create_symlink(executable_path(), link);
    const uint64_t address = user_code_here();
    const Result cached = analyze(address, modules_naming(link), dir);
    REQUIRE(cached.frames.at(0).function.ends_with("user_code_here()"));
    REQUIRE(cached.writes == 1);

    SUBCASE("the trace was recorded against another build: no names, as without the cache") {
      const Result rebuilt =
          analyze(address, modules_naming(link, "00112233445566778899aabbccddeeff00112233"), dir);
      CHECK(rebuilt.hits == 0);
      CHECK(rebuilt.stats.cached_addresses == 0);
      CHECK(rebuilt.frames.at(0).function.empty());
      CHECK(rebuilt.frames.at(0).line == 0);
      CHECK(rebuilt.writes == 0);
    }
    SUBCASE("the entry renamed to another build-id's name is refused by its header") {
      const std::string other = "00112233445566778899aabbccddeeff00112233";
      const fs::path file = entries(dir).at(0);
      std::string name = file.filename().string();
      fs::rename(file, file.parent_path() / (other + name.substr(name.find('-'))));
      const Result renamed = analyze(address, modules_naming(link, other), dir);
      CHECK(renamed.hits == 0);
      CHECK(renamed.frames.at(0).function.empty());
    }
    SUBCASE("another file now at the path (same recorded build-id): not the entry's file") {
      const std::string impostor = base + "/impostor";
      // Same bytes, another inode. By its path: under qemu-user, /proc/self/exe's stat is the
      // emulator's own file while its open is the program's.
      fs::copy_file(executable_path(), impostor);
      fs::remove(link);
      fs::create_symlink(impostor, link);
      const Result replaced = analyze(address, modules_naming(link), dir);
      CHECK(replaced.hits == 0);
      CHECK(replaced.stats.read_addresses == 1);  // read again, from the file now there
      check_same_frames(replaced.frames, cached.frames);

      write_file(impostor, "not an ELF file any more\n");  // rewritten in place
      const Result garbage = analyze(address, modules_naming(link), dir);
      CHECK(garbage.hits == 0);
      CHECK(garbage.frames.at(0).function.empty());
    }
    SUBCASE("a module recorded without a build-id: an entry of its own, for that file only") {
      const Result anonymous = analyze(address, modules_naming(link, ""), dir);
      CHECK(anonymous.hits == 0);  // not the entry of the recorded build-id
      CHECK(anonymous.writes == 1);
      CHECK(anonymous.stats.read_addresses == 1);
      CHECK(anonymous.frames.at(0).function.ends_with("user_code_here()"));
      CHECK(entries(dir).size() == 2);

      const Result again = analyze(address, modules_naming(link, ""), dir);
      CHECK(again.hits == 1);
      CHECK(again.stats.read_addresses == 0);
      CHECK(again.stats.cached_addresses == 1);
      check_same_frames(again.frames, anonymous.frames);

      const std::string impostor = base + "/impostor";
      fs::copy_file(executable_path(), impostor);  // same bytes, another inode (qemu: by path)
      fs::remove(link);
      fs::create_symlink(impostor, link);
      const Result replaced = analyze(address, modules_naming(link, ""), dir);
      CHECK(replaced.hits == 0);
      CHECK(replaced.stats.read_addresses == 1);
      check_same_frames(replaced.frames, anonymous.frames);
      CHECK(entries(dir).size() == 2);  // one file per path: the stale entry replaced
    }
  }

  TEST_CASE("a full cache evicts the least recently used files") {
    const std::string base = temp_dir();
    const std::string dir = base + "/cache";
    const uint64_t address = user_code_here();
    // Several paths of one file: an entry each (the path is part of what an entry is for).
    std::vector<std::string> paths;
    for (int i = 0; i < 4; ++i) {
      paths.push_back(base + "/lib" + std::to_string(i) + ".so");
      fs::create_symlink(executable_path(), paths.back());
    }
    const Result first = analyze(address, modules_naming(paths[0]), dir);
    const uint64_t entry_size = fs::file_size(entries(dir).at(0));
    const uint64_t bound = entry_size * 3;  // room for three entries, not four
    // The n-th entry's last use, set apart by a minute each so that the order is certain.
    auto age = [&](int n, int minutes_ago) {
      for (const fs::path& file : entries(dir))
        if (read_file(file).find(paths[n] + "\t") != std::string::npos) {
          const timespec times[2] = {{time(nullptr) - minutes_ago * 60, 0},
                                     {time(nullptr) - minutes_ago * 60, 0}};
          REQUIRE(utimensat(AT_FDCWD, file.c_str(), times, 0) == 0);
        }
    };
    age(0, 30);
    analyze(address, modules_naming(paths[1]), dir, bound);
    age(1, 20);
    analyze(address, modules_naming(paths[2]), dir, bound);
    age(2, 10);
    CHECK(entries(dir).size() == 3);
    CHECK(analyze(address, modules_naming(paths[0]), dir, bound).hits == 1);  // used: newest now
    analyze(address, modules_naming(paths[3]), dir, bound);  // a fourth: one must go

    CHECK(entries(dir).size() == 3);
    uint64_t total = 0;
    for (const fs::path& file : entries(dir)) total += fs::file_size(file);
    CHECK(total <= bound);
    CHECK(analyze(address, modules_naming(paths[1]), dir, bound).hits == 0);  // the oldest went
    CHECK(analyze(address, modules_naming(paths[0]), dir, bound * 2).hits == 1);
    CHECK(analyze(address, modules_naming(paths[3]), dir, bound * 2).hits == 1);
    check_same_frames(first.frames, analyze(address, modules_naming(paths[0]), dir).frames);
  }

  TEST_CASE("eviction removes only files the cache wrote, never the user's own") {
    const std::string base = temp_dir();
    const std::string dir = base + "/cache";
    const uint64_t address = user_code_here();
    const std::string link = base + "/lib.so";
    fs::create_symlink(executable_path(), link);
    analyze(address, modules_naming(link), dir);
    REQUIRE(entries(dir).size() == 1);
    // A directory given as --symbol-cache may hold the user's files: *.sym of their own (one
    // even named as the cache names its files), and an old ".tmp-" file.
    const std::string own = dir + "/notes.sym";
    const std::string lookalike = dir + "/" + std::string(40, 'a') + "-0123456789abcdef.sym";
    const std::string temporary = dir + "/.tmp-draft";
    for (const std::string& path : {own, lookalike, temporary}) {
      write_file(path, std::string(4096, 'x'));
      const timespec old[2] = {{time(nullptr) - 7200, 0}, {time(nullptr) - 7200, 0}};
      REQUIRE(utimensat(AT_FDCWD, path.c_str(), old, 0) == 0);
    }
    // Another entry written under a bound nothing fits: eviction removes all it may.
    fs::create_symlink(executable_path(), base + "/other.so");
    CHECK(analyze(address, modules_naming(base + "/other.so"), dir, 1).writes == 1);
    CHECK(entries(dir).size() == 2);  // the cache's own two went, the user's two stay
    CHECK(fs::exists(own));
    CHECK(fs::exists(lookalike));
    CHECK(fs::exists(temporary));
  }

  TEST_CASE("processes that map one module file read it once, each at its own base") {
    const uint64_t address = user_code_here();
    ProcessModules first = modules_of_this_process();
    ProcessModules second = first;
    second.pid = first.pid + 1;
    constexpr uint64_t kShift = 0x100000000;  // the second process loaded everything higher
    for (Module& module : second.modules) {
      module.base += kShift;
      module.start += kShift;
      module.end += kShift;
    }
    Report report;
    for (const ProcessModules* process : {&first, &second}) {
      Finding finding;
      finding.pid = process->pid;
      finding.location.addresses = {address + (process == &second ? kShift : 0)};
      report.findings.push_back(finding);
    }
    const SymbolizeStats stats = symbolize(report, {first, second});
    CHECK(stats.read_addresses == 1);
    const Frame& a = report.findings[0].location.frames.at(0);
    const Frame& b = report.findings[1].location.frames.at(0);
    CHECK(a.function.ends_with("user_code_here()"));
    CHECK(b.function == a.function);
    CHECK(b.line == a.line);
    CHECK(b.offset == a.offset);
    CHECK(b.address == a.address + kShift);
  }

  TEST_CASE("a read-only or missing home directory turns the cache off without a word") {
    const uint64_t address = user_code_here();
    const ProcessModules process = modules_of_this_process();
    const Result reference = analyze(address, process, "");
    REQUIRE(reference.frames.at(0).function.ends_with("user_code_here()"));

    const std::string home = temp_dir();
    REQUIRE(chmod(home.c_str(), 0555) == 0);
    // Root writes through mode bits: /proc takes no new directory from anyone.
    const std::string read_only_home = geteuid() == 0 ? std::string("/proc/self") : home;
    ScopedEnv no_setting("CAPGUARD_SYMBOL_CACHE", nullptr);
    ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
    {
      ScopedEnv env("HOME", read_only_home.c_str());
      const std::string dir = symbol_cache_dir(nullptr);
      CHECK(dir == read_only_home + "/.cache/capguard");
      CHECK_FALSE(ModuleCache(dir).enabled());
      const Result result = analyze(address, process, dir);
      CHECK(result.writes == 0);
      CHECK(result.stats.read_addresses == 1);
      check_same_frames(result.frames, reference.frames);
      CHECK_FALSE(fs::exists(home + "/.cache"));
    }
    {
      ScopedEnv env("HOME", nullptr);
      CHECK(symbol_cache_dir(nullptr).empty());
      check_same_frames(analyze(address, process, symbol_cache_dir(nullptr)).frames,
                        reference.frames);
    }
    chmod(home.c_str(), 0700);
  }

  TEST_CASE("a cache directory that others may write to, or of another user, is not used") {
    const std::string dir = temp_dir();
    REQUIRE(chmod(dir.c_str(), 0777) == 0);
    CHECK_FALSE(ModuleCache(dir).enabled());
    REQUIRE(chmod(dir.c_str(), 0700) == 0);
    CHECK(ModuleCache(dir).enabled());
    if (geteuid() == 0) {  // only root can give a directory away
      REQUIRE(chown(dir.c_str(), 65534, 65534) == 0);
      CHECK_FALSE(ModuleCache(dir).enabled());
    }
    if (geteuid() == 0) {  // root with another user's HOME: nothing made there
      const std::string home = temp_dir();
      REQUIRE(chown(home.c_str(), 65534, 65534) == 0);
      CHECK_FALSE(ModuleCache(home + "/.cache/capguard").enabled());
      CHECK_FALSE(fs::exists(home + "/.cache"));
    }
    const std::string link = temp_dir() + "/link";
    fs::create_directory_symlink(temp_dir(), link);
    CHECK_FALSE(ModuleCache(link).enabled());  // not followed
  }

  TEST_CASE("where the cache lives: the option, CAPGUARD_SYMBOL_CACHE, XDG_CACHE_HOME, HOME") {
    ScopedEnv home("HOME", "/home/u");
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv setting("CAPGUARD_SYMBOL_CACHE", nullptr);
    CHECK(symbol_cache_dir(nullptr) == "/home/u/.cache/capguard");
    {
      ScopedEnv relative("XDG_CACHE_HOME", "cache");  // relative: ignored, as XDG says
      CHECK(symbol_cache_dir(nullptr) == "/home/u/.cache/capguard");
    }
    ScopedEnv absolute("XDG_CACHE_HOME", "/var/cache/u");
    CHECK(symbol_cache_dir(nullptr) == "/var/cache/u/capguard");
    ScopedEnv env("CAPGUARD_SYMBOL_CACHE", "/tmp/c");
    CHECK(symbol_cache_dir(nullptr) == "/tmp/c");
    CHECK(symbol_cache_dir("/opt/c") == "/opt/c");
    CHECK(symbol_cache_dir("off").empty());
    ScopedEnv off("CAPGUARD_SYMBOL_CACHE", "off");
    CHECK(symbol_cache_dir(nullptr).empty());
  }
}

}  // namespace capguard
