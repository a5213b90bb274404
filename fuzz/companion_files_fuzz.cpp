// libFuzzer target for the files a trace brings along or names, read as untrusted input
// (docs/security.md): any bytes as a trace's `.symbols` companion (SymbolCache::load_beside)
// and as a source file a frame names (SourceReader::around, the line chosen by the first bytes)
// must end in frames, lines or a message, never a crash, a hang or unbounded memory.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "report/source_lines.h"
#include "symbolize/symbol_cache.h"

namespace {

// A scratch directory per process, the source root: its files are rewritten per input.
const std::string& scratch() {
  static const std::string dir = [] {
    char name[] = "/tmp/capguard-companion-fuzz-XXXXXX";
    const char* made = mkdtemp(name);
    if (made == nullptr) abort();
    return std::string(made);
  }();
  return dir;
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr) abort();
  if (size != 0 && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = scratch();
  const std::string trace = dir + "/capguard.1.trace";
  write_file(trace + ".symbols", data, size);
  capguard::SymbolCache cache;
  if (!cache.load_beside(trace)) {  // loaded: every frame it gave must be readable
    for (uint64_t address = 0; address < 64; ++address) {
      if (const auto* frames = cache.find(1, address))
        for (const auto& frame : *frames) (void)frame.function.size();
    }
  }
  const std::string source = dir + "/fuzzed.py";
  write_file(source, data, size);
  const int line = size >= 2 ? (data[0] | (data[1] << 8)) % 4096 : 1;
  capguard::SourceReader reader(dir);
  for (const auto& got : reader.around(source, line, 3)) (void)got.text.size();
  return 0;
}
