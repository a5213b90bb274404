#include "report/fingerprint.h"

#include <cstdint>

#include "util/base_name.h"

namespace capguard {
namespace {

// FNV-1a, 64 bits: simple, and identical on every platform and compiler.
class Fnv1a {
 public:
  // Each field is followed by a separator byte so that ("ab","c") and ("a","bc") differ.
  void add(std::string_view field) {
    for (char c : field) mix(static_cast<unsigned char>(c));
    mix(0);
  }
  uint64_t value() const { return hash_; }

 private:
  void mix(unsigned char byte) {
    hash_ ^= byte;
    hash_ *= 0x100000001b3ULL;
  }
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

}  // namespace

const Frame* anchor_frame(const Location& location) {
  const auto& frames = location.frames;
  if (location.user_frame >= 0 && static_cast<size_t>(location.user_frame) < frames.size()) {
    return &frames[static_cast<size_t>(location.user_frame)];
  }
  for (const Frame& f : frames) {
    if (!f.file.empty()) return &f;
  }
  for (const Frame& f : frames) {
    if (!f.function.empty()) return &f;
  }
  return nullptr;
}

const Frame* fingerprint_offset_frame(const Finding& finding) {
  const Frame* f = anchor_frame(finding.location);
  if (f && !f->file.empty()) return nullptr;
  if (f && !f->module.empty()) return f;
  for (const Frame& frame : finding.location.frames)
    if (!frame.module.empty()) return &frame;
  return nullptr;
}

std::string fingerprint(const Finding& finding) {
  Fnv1a h;
  h.add(finding.rule);
  h.add(finding.api);
  if (const Frame* f = anchor_frame(finding.location)) {
    h.add(f->function);
    h.add(base_name(f->file));
    h.add(std::to_string(f->line));
  }
  // Unsymbolized (a stripped binary, a module not found): no function, file or line tells the
  // call apart, so the module's base name and the offset in it do, or one baselined finding
  // would hide every later one of its rule and API. The same for a function named
  // by its exported symbol alone (a stripped library: no file or line), or a baselined call
  // would hide another call in the same function. Findings with a file and line
  // hash as before: baselines written earlier keep matching them.
  if (const Frame* at = fingerprint_offset_frame(finding)) {
    h.add(base_name(at->module));
    h.add(std::to_string(at->offset));
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  uint64_t v = h.value();
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<size_t>(i)] = kHex[v & 0xf];
  return out;
}

}  // namespace capguard
