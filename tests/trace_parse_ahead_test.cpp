// Parsing ahead on helper threads (trace/parse_ahead.h) against reading on one: the same traces,
// whole, damaged, cut into chunks and reads of every size, must give the sink the same calls
// with the same content in the same order, and the same ReadError; analyze_trace() the same
// report.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/analyzer.h"
#include "report/render.h"
#include "tests/trace_recording_sink.h"
#include "trace/api_names.h"
#include "trace/format.h"
#include "trace/parse_ahead.h"

namespace capguard::trace {
namespace {

using testing::TempDir;

// Every call a sink gets, each written out in full, in order.
struct CallLog final : TraceSink {
  std::vector<std::string> calls;
  size_t throw_at_event = SIZE_MAX;  // on_event throws at this event (0-based)
  size_t events = 0;

  template <class... Parts>
  void log(const Parts&... parts) {
    std::ostringstream line;
    ((line << parts << '|'), ...);
    calls.push_back(line.str());
  }
  static std::string text(std::string_view s) { return std::string(s); }

  void on_header(std::string_view v, int f) override { log("v", v, f); }
  void on_process(const ProcessRecord& p) override { log("p", p.pid, p.ppid, p.start_unix_ns); }
  void on_command(std::string_view c) override { log("c", c); }
  void on_attach(bool ok, std::string_view m) override { log("i", ok, m); }
  void on_cuda(const CudaRecord& w) override {
    log("w", w.runtime, w.driver, w.cupti_major, w.cupti_api, w.other_runtime, w.linkage,
        w.runtime_path, w.cupti_path);
  }
  void on_module(const ModuleRecord& m) override {
    log("m", m.base, m.start, m.end, m.path, m.build_id);
  }
  void on_python_frame(const PythonFrameRecord& f) override {
    log("y", f.id, f.line, f.file, f.function);
  }
  void on_stack(const StackRecord& s) override {
    std::ostringstream frames;
    for (uint64_t a : s.addresses) frames << a << ',';
    frames << ';';
    for (uint32_t p : s.python_frames) frames << p << ',';
    log("s", s.id, frames.str());
  }
  void on_event(const ApiEvent& e) override {
    if (events++ == throw_at_event) throw std::runtime_error("sink gave up");
    std::ostringstream fields;
    for (int f = 0; f < kFieldCount; ++f) fields << testing::field_value(e, f) << ',';
    log("e", e.seq, e.time_ns, e.tid, e.api, e.result, e.stack, e.fields, fields.str());
  }
  void on_thread_exit(uint32_t tid, uint64_t t) override { log("x", tid, t); }
  void on_end(uint64_t t, int status) override { log("z", t, status); }
  void on_graph_node(const GraphNodeRecord& g) override {
    std::ostringstream refs;
    for (const GraphRef& r : g.refs) refs << r.role << r.index << ':' << r.address << ',';
    for (uint32_t i = 0; i < g.geometry_count; ++i) refs << g.geometry[i] << ';';
    log("g", g.exec, g.index, g.depth, g.type, g.name, refs.str(), g.has_scalars, g.scalar_hash);
  }
  void on_graph(const GraphRecord& g) override {
    log("G", g.exec, g.graph, g.nodes, g.edges, g.topology_hash, g.complete);
  }
  void on_graph_update(const GraphUpdateRecord& u) override {
    log("u", u.seq, u.exec, u.result, u.error_type, u.name);
  }
  void on_cupti_client(const CuptiClientRecord& k) override {
    log("k", k.time_ns, k.tid, static_cast<int>(k.what), k.name);
  }
  void on_range_begin(const RangeRecord& r) override {
    log("r", r.seq, r.time_ns, r.tid, r.id, r.domain, r.name);
  }
  void on_range_end(const RangeRecord& r) override { log("R", r.seq, r.time_ns, r.tid, r.id); }
  void on_rehearse(std::string_view glob) override { log("q", glob); }
  void on_who_ran(const WhoRanRecord& w) override {
    std::ostringstream vars;
    for (const LauncherVar& v : w.vars) vars << v.name << '=' << v.value << ',';
    log("h", w.host, vars.str());
  }
  void on_skipped_line(const ReadError& e) override { log("!", e.to_string()); }
};

std::string describe(const std::optional<ReadError>& error) {
  return error ? error->to_string() : "no error";
}

// pread over `text`, at most `step` bytes a call; -1 ("boom") for a read at `fail_at` bytes or
// after, or a throw there with `throw_instead`.
struct TextSource {
  const std::string* text;
  size_t step;
  size_t fail_at = SIZE_MAX;
  bool throw_instead = false;
  ptrdiff_t operator()(char* data, size_t size, uint64_t at, std::string& error) const {
    if (at >= fail_at) {
      if (throw_instead) throw std::runtime_error("reader gave up");
      error = "boom";
      return -1;
    }
    if (at >= text->size()) return 0;
    const size_t n = std::min({size, step, text->size() - at, fail_at - at});
    std::copy_n(text->data() + at, n, data);
    return static_cast<ptrdiff_t>(n);
  }
};

struct Outcome {
  std::vector<std::string> calls;
  std::string result;  // the ReadError, or the exception's message
};

Outcome read_with(unsigned helpers, TextSource source, size_t chunk_bytes,
                  size_t throw_at_event = SIZE_MAX) {
  CallLog sink;
  sink.throw_at_event = throw_at_event;
  Outcome out;
  try {
    out.result = describe(read_loop::read_lines_ahead("t.trace", source, source.text->size(),
                                                      helpers, sink, chunk_bytes));
  } catch (const std::exception& e) {
    out.result = std::string("threw: ") + e.what();
  }
  out.calls = std::move(sink.calls);
  return out;
}

// The one-thread reading of `text` in steps of `step`, against parsing ahead in chunks of every
// size in `chunk_sizes`, on 1, 2 and 4 helpers.
void check_same(const std::string& text, TextSource source,
                std::initializer_list<size_t> chunk_sizes = {1, 7, 4096, 64 * 1024},
                size_t throw_at_event = SIZE_MAX) {
  source.text = &text;
  const Outcome one = read_with(0, source, 0, throw_at_event);
  for (size_t chunk_bytes : chunk_sizes) {
    for (unsigned helpers : {1, 2, 4}) {
      CAPTURE(chunk_bytes);
      CAPTURE(helpers);
      const Outcome ahead = read_with(helpers, source, chunk_bytes, throw_at_event);
      CHECK(ahead.result == one.result);
      REQUIRE(ahead.calls.size() == one.calls.size());
      for (size_t i = 0; i < one.calls.size(); ++i) {
        CAPTURE(i);
        CHECK(ahead.calls[i] == one.calls[i]);
      }
    }
  }
}

std::string read_file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<std::filesystem::path> recorded_traces() {
  std::vector<std::filesystem::path> traces;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(CAPGUARD_SOURCE_DIR "/testcases"))
    if (entry.is_regular_file() && entry.path().extension() == ".trace")
      traces.push_back(entry.path());
  std::sort(traces.begin(), traces.end());
  return traces;
}

// A trace of many kinds of record, with `events` events (60 bytes each) across many chunks.
std::string busy_trace(int events = 3000) {
  std::string t =
      "v 0.1.0 7\np 10 1 0\nc ./app\\x20--steps\ni ok CUPTI\\x20subscribed\n"
      "m 400000 400000 500000 /opt/app ab\ny 1 7 a.py main\ns 1 401000 402000\n";
  for (int i = 1; i <= events; ++i) {
    t += "e " + std::to_string(i) + " " + std::to_string(1000 + i) +
         " 9 cudaLaunchKernel 0 1 st=" + std::to_string(5500 + i % 3) + "\n";
    if (i % 500 == 0) t += "x " + std::to_string(i) + " 7\n";
  }
  return t + "z 99999 0\n";
}

TEST_CASE("parse ahead: every recorded trace gives the same calls as one thread") {
  const auto traces = recorded_traces();
  REQUIRE(traces.size() > 10);
  for (const auto& path : traces) {
    CAPTURE(path.string());
    const std::string text = read_file_text(path);
    check_same(text, TextSource{nullptr, SIZE_MAX}, {4096, 64 * 1024});
  }
}

TEST_CASE("parse ahead: lines cut across reads and chunks at every size") {
  // Past the read loop's first buffer (16 KiB), in reads and chunks as small as a byte.
  const std::string text = busy_trace(400);
  for (size_t step : {7, 64, 65, 4095, 65536}) {
    CAPTURE(step);
    check_same(text, TextSource{nullptr, step}, {size_t{step < 64 ? 3u : 1u}, 64, 4096});
  }
  check_same(busy_trace(), TextSource{nullptr, 4095}, {100, 4096, 64 * 1024});
}

TEST_CASE("parse ahead: damaged traces give the same calls and the same error") {
  const std::string good = busy_trace();
  const std::string long_line(kMaxLineLength + 10, 'x');
  const std::string longest_line = "c " + std::string(kMaxLineLength - 2, 'y');
  std::vector<std::string> damaged = {
      "",                                                            // empty
      "\n",                                                          // an empty line
      "v 0.1.0 7",                                                   // a header without its '\n'
      "q not a trace\n",                                             // bad header
      "v 0.1.0 999\np 10 1 0\n",                                     // a newer format
      long_line + "\n" + good,                                       // over-long first line
      good.substr(0, good.size() - 7),                               // truncated last line
      good + long_line,                                              // over-long last line, cut
      good + long_line + "\n" + "x 1 2\n",                           // over-long line inside
      good.substr(0, 300) + longest_line + "\n" + good.substr(300),  // a line just fits
  };
  // An event as the second record, and one as the first after a header line too long.
  damaged.push_back("v 0.1.0 7\ne 1 2 3 cudaFree 0 0\n" + good.substr(good.find("p ")));
  // The same, with a tail that comes again later: the misplaced event must not be what the
  // later ones are made of (a helper keeps its key all the same).
  damaged.push_back("v 0.1.0 7\ne 1 2 9 cudaLaunchKernel 0 1 st=5501\n" +
                    good.substr(good.find("p ")));
  damaged.push_back("v 0.1.0 7\n" + long_line + "\ne 1 2 3 cudaFree 0 0\n" + good);
  // More API names than a trace may have: past the cap each line with a new name is skipped,
  // also when the same line comes again at once (its tail seen).
  {
    std::string names = good.substr(0, good.find("e "));
    for (size_t i = 0; i < ApiNameStore::kMaxNames + 30; ++i) {
      const std::string line = "e 5 6 7 api" + std::to_string(i) + " 0 1 st=5500\n";
      names += line + (i + 40 > ApiNameStore::kMaxNames ? line : "");
    }
    damaged.push_back(names + "z 99999 0\n");
  }
  // Flipped bytes in many lines: each skipped line is named where it is.
  std::string flipped = good;
  for (size_t i = 200; i < flipped.size(); i += 997) flipped[i] = static_cast<char>(0xff);
  damaged.push_back(flipped);
  std::string no_newlines = good;
  std::replace(no_newlines.begin() + 100, no_newlines.begin() + 200, '\n', ' ');
  damaged.push_back(no_newlines);
  for (size_t i = 0; i < damaged.size(); ++i) {
    CAPTURE(i);
    check_same(damaged[i], TextSource{nullptr, SIZE_MAX}, {611, 4096, 64 * 1024});
    check_same(damaged[i], TextSource{nullptr, 4093}, {999, 4096});
  }
}

TEST_CASE("parse ahead: randomly damaged traces give the same calls and the same error") {
  // Bytes that matter to the line cutting and the fast path, put anywhere: lines split, joined,
  // events made unusual, tails made to collide or to differ by one byte.
  const std::string good = busy_trace(2000);
  const std::string alphabet = "\n\n\n  e1f=xg";
  uint64_t state = 0x9e3779b97f4a7c15ull;
  const auto next = [&state] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    std::string text = good;
    const int changes = 1 + static_cast<int>(next() % 40);
    for (int i = 0; i < changes; ++i)
      text[30 + next() % (text.size() - 30)] = alphabet[next() % alphabet.size()];
    if (trial % 5 == 0) text.resize(text.size() - next() % 100);
    check_same(text, TextSource{nullptr, trial % 2 == 0 ? SIZE_MAX : 777}, {97, 4096});
  }
}

TEST_CASE("parse ahead: a file that grew after its size was taken is read to its end") {
  // As read_lines() reads on to the end wherever it is then; the chunks past the size given
  // stay bounded (the helpers take chunk after chunk until one meets the end).
  const std::string text = busy_trace(4000);
  for (const uint64_t size_then : {uint64_t{0}, uint64_t{1}, uint64_t{text.size() / 3}}) {
    CAPTURE(size_then);
    for (unsigned helpers : {1, 3}) {
      CallLog one, ahead;
      const TextSource source{&text, SIZE_MAX};
      const auto one_error = read_loop::read_lines_ahead("t.trace", source, text.size(), 0, one);
      const auto ahead_error =
          read_loop::read_lines_ahead("t.trace", source, size_then, helpers, ahead, 4096);
      CHECK(describe(ahead_error) == describe(one_error));
      CHECK(ahead.calls == one.calls);
    }
  }
}

TEST_CASE("parse ahead: an I/O error arrives where it happened, as the same ReadError") {
  const std::string text = busy_trace();
  for (size_t fail_at : {0, 1, 100, 4096, 50000, 100000}) {
    CAPTURE(fail_at);
    check_same(text, TextSource{nullptr, 4096, fail_at}, {100, 4096, 64 * 1024});
  }
}

TEST_CASE("parse ahead: an exception of a helper thread reaches the caller after the records") {
  const std::string text = busy_trace();
  for (size_t fail_at : {0, 5000, 80000}) {
    CAPTURE(fail_at);
    check_same(text, TextSource{nullptr, 4096, fail_at, true}, {100, 4096});
  }
}

TEST_CASE("parse ahead: a sink that throws stops the helper threads") {
  const std::string text = busy_trace() + busy_trace().substr(10);
  for (size_t at : {0, 10, 2999}) {
    CAPTURE(at);
    check_same(text, TextSource{nullptr, SIZE_MAX}, {64, 4096}, at);
  }
}

TEST_CASE("parse ahead: analyze_trace gives the same report on one thread and several") {
  TempDir dir;
  const auto traces = recorded_traces();
  REQUIRE(!traces.empty());
  // The recorded traces as they are, and the busiest one damaged.
  std::vector<std::string> paths;
  for (const auto& path : traces) paths.push_back(path.string());
  const std::string damaged = dir.path() + "/capguard.1.trace";
  {
    std::string text = read_file_text(
        *std::max_element(traces.begin(), traces.end(), [](const auto& a, const auto& b) {
          return std::filesystem::file_size(a) < std::filesystem::file_size(b);
        }));
    for (size_t i = 500; i < text.size(); i += 5003) text[i] = '#';
    std::ofstream(damaged, std::ios::binary) << text.substr(0, text.size() - 3);
  }
  paths.push_back(damaged);
  for (const std::string& path : paths) {
    CAPTURE(path);
    Analysis one, two;
    analyze_trace(path, one, ReadThreads{0});
    analyze_trace(path, two, ReadThreads{3, true});
    CHECK(render_json(two.report) == render_json(one.report));
    const auto all = [](const Analysis& a) {
      std::string text;
      for (const auto& e : a.errors) text += e.to_string() + "\n";
      for (const auto& e : a.skipped_lines) text += e.to_string() + "\n";
      for (const auto& w : a.warnings) text += w + "\n";
      for (const auto& w : a.incomplete) text += w + "\n";
      return text + std::to_string(a.modules.size());
    };
    CHECK(all(two) == all(one));
  }
}

}  // namespace
}  // namespace capguard::trace
