#include "trace/kernel_record.h"

#include "trace/reader.h"
#include "trace/record_text.h"

namespace capguard::trace {
namespace {
using record_text::Fields;
using record_text::Out;
using record_text::unescape;

// Splits "a:b:c" into at most `capacity` hex numbers; false on anything else.
size_t hex_list(std::string_view text, char separator, uint64_t* out, size_t capacity) {
  size_t count = 0, digits = 0;
  uint64_t v = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == separator) {
      if (digits == 0 || count >= capacity) return 0;
      out[count++] = v;
      v = 0;
      digits = 0;
      continue;
    }
    const char c = text[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0 || ++digits > 16) return 0;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  return count;
}

bool fail(std::string& error, const char* record, std::string_view what, std::string_view field) {
  error = std::string(record) + " record: " + std::string(what);
  if (!field.empty()) error += " '" + std::string(field.substr(0, 40)) + "'";
  return false;
}

}  // namespace

size_t format_kernel_name(char* out, size_t capacity, const KernelNameRecord& r) {
  Out o(out, capacity);
  o.put('f');
  o.space_hex(r.function);
  o.escaped(r.name, kMaxKernelNameLength);
  return o.finish();
}

size_t format_launch_count(char* out, size_t capacity, const LaunchCountRecord& r) {
  Out o(out, capacity);
  o.put('n');
  o.space_hex(r.seq);
  o.space_hex(r.time_ns);
  o.space_hex(r.tid);
  o.put(' ');
  for (const char* c = kLaunchCountWords[static_cast<int>(r.kind)]; *c != '\0'; ++c) o.put(*c);
  size_t items = 0;
  for (const ExecLaunches& e : r.execs) {
    if (++items > kMaxLaunchItems) break;
    o.put(' ');
    o.put('x');
    o.hex(e.exec);
    o.put(':');
    o.hex(e.launches);
  }
  for (const EagerLaunches& k : r.eager) {
    if (++items > kMaxLaunchItems) break;
    o.put(' ');
    o.put('k');
    o.hex(k.function);
    o.put(':');
    o.hex(k.launches);
    o.put(':');
    o.hex(k.threads);
    o.put(':');
    o.hex(k.stack);
  }
  return o.finish();
}

size_t format_kernel_args(char* out, size_t capacity, const KernelArgsRecord& r) {
  Out o(out, capacity);
  o.put('a');
  o.space_hex(r.exec);
  o.space_hex(r.node);
  o.space_hex(r.order);
  if (r.geometry_count != 0) {
    o.put(' ');
    o.put('x');
    for (uint32_t i = 0; i < r.geometry_count && i < 7; ++i) {
      if (i != 0) o.put(',');
      o.hex(r.geometry[i]);
    }
  }
  size_t n = 0;
  for (const KernelArg& a : r.args) {
    if (++n > kMaxKernelArgs) break;
    o.put(' ');
    o.hex(a.param);
    o.put(':');
    o.hex(a.size);
    o.put(':');
    o.hex(a.value);
  }
  return o.finish();
}

bool KernelRecordParser::parse(std::string_view line, TraceSink& sink, std::string& error) {
  const char type = line.empty() ? '\0' : line[0];
  Fields in(line);
  std::string_view field;
  if (type == 'f') {
    KernelNameRecord r;
    if (!in.hex(r.function) || !in.next(field) || !unescape(field, name_) || !in.at_end() ||
        name_.size() > kMaxKernelNameLength)
      return fail(error, "kernel-name", "a hex handle and one escaped name expected", {});
    r.name = name_;
    sink.on_kernel_name(r);
    return true;
  }
  if (type == 'n') {
    LaunchCountRecord r;
    if (!in.hex(r.seq) || !in.hex(r.time_ns) || !in.hex(r.tid) || !in.next(field))
      return fail(error, "launch-count", "seq, time and tid must be hex numbers", {});
    bool known = false;
    for (int k = 0; k < 4; ++k) {
      if (field == kLaunchCountWords[k]) {
        r.kind = static_cast<LaunchCountKind>(k);
        known = true;
      }
    }
    if (!known) return fail(error, "launch-count", "unknown kind", field);
    execs_.clear();
    eager_.clear();
    while (in.next(field)) {
      uint64_t v[4] = {};
      const bool exec = !field.empty() && field[0] == 'x';
      const bool kernel = !field.empty() && field[0] == 'k';
      const size_t count = exec || kernel ? hex_list(field.substr(1), ':', v, 4) : 0;
      if ((exec && count != 2) || (kernel && (count != 4 || v[3] > UINT32_MAX)) ||
          (!exec && !kernel) || execs_.size() + eager_.size() >= kMaxLaunchItems)
        return fail(error, "launch-count", "bad item", field);
      if (exec)
        execs_.push_back({v[0], v[1]});
      else
        eager_.push_back({v[0], v[1], v[2], static_cast<uint32_t>(v[3])});
    }
    r.execs = execs_;
    r.eager = eager_;
    sink.on_launch_count(r);
    return true;
  }
  KernelArgsRecord r;
  if (!in.hex(r.exec) || !in.hex(r.node) || !in.hex(r.order))
    return fail(error, "kernel-args", "exec, node and order must be hex numbers", {});
  args_.clear();
  while (in.next(field)) {
    if (!field.empty() && field[0] == 'x') {
      if (r.geometry_count != 0 || !args_.empty() ||
          hex_list(field.substr(1), ',', r.geometry, 7) != 7)
        return fail(error, "kernel-args", "bad geometry", field);
      r.geometry_count = 7;
      continue;
    }
    uint64_t v[3] = {};
    if (hex_list(field, ':', v, 3) != 3 || v[0] > UINT32_MAX || v[1] == 0 || v[1] > 8 ||
        (v[1] < 8 && (v[2] >> (8 * v[1])) != 0) || args_.size() >= kMaxKernelArgs)
      return fail(error, "kernel-args", "bad argument", field);
    args_.push_back({static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1]), v[2]});
  }
  r.args = args_;
  sink.on_kernel_args(r);
  return true;
}

}  // namespace capguard::trace
