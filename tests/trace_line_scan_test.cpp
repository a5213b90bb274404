// The word-at-a-time scanning and the event fast path agree with plain byte loops and with
// the careful parser, including for the damaged and unusual lines they hand back.
#include <doctest/doctest.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/trace_recording_sink.h"
#include "trace/event_fields.h"
#include "trace/line_scan.h"
#include "trace/record_parser.h"

namespace capguard::trace {
namespace {

// `text`, then '\n' and the padding the reader guarantees after every line.
std::string padded(const std::string& text) { return text + '\n' + std::string(32, '\0'); }

int reference_hex_prefix(const std::string& s, uint64_t& value) {
  int n = 0;
  value = 0;
  while (n < 16 && n < static_cast<int>(s.size()) &&
         ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f'))) {
    value = value * 16 + static_cast<uint64_t>(s[n] <= '9' ? s[n] - '0' : s[n] - 'a' + 10);
    ++n;
  }
  return n;
}

size_t reference_printable_run(const std::string& s) {
  size_t n = 0;
  while (n < s.size() && static_cast<unsigned char>(s[n]) >= 0x21 &&
         static_cast<unsigned char>(s[n]) <= 0x7e) {
    ++n;
  }
  return n;
}

// Random strings biased towards the bytes that matter at range edges.
std::string random_field(std::mt19937& random) {
  static const std::string kEdges = std::string("09afgAF/:`' \n=%\x7e\x7f\x80\xff\x00\x21", 19);
  std::string s(random() % 24, ' ');
  for (char& c : s) {
    c = random() % 3 == 0 ? static_cast<char>(random()) : kEdges[random() % kEdges.size()];
  }
  return s;
}

// `line` with one to three random edits past its record type: bytes that matter to the
// parsers replaced, removed, or inserted.
std::string mutated(std::string line, std::mt19937& random) {
  for (int edits = 1 + static_cast<int>(random() % 3); edits > 0; --edits) {
    const size_t at = 2 + random() % (line.size() - 2);
    switch (random() % 3) {
      case 0:
        line[at] = "0f9ag =Fz %\x01"[random() % 12];
        break;
      case 1:
        line.erase(at, 1 + random() % 3);
        break;
      default:
        line.insert(at, std::string(1 + random() % 9, "0f "[random() % 3]));
        break;
    }
  }
  return line;
}

// Parses the header, the process record and one event line; the event must be accepted.
ApiEvent parse_one(const std::string& line, bool fast) {
  const std::string buffer = padded("v 0.1.0 2\np 1 1 0\n" + line);
  testing::RecordingSink sink;
  RecordParser parser(sink, fast);
  REQUIRE(parser.parse(std::string_view(buffer.data(), 9)));
  REQUIRE(parser.parse(std::string_view(buffer.data() + 10, 7)));
  REQUIRE_MESSAGE(parser.parse(std::string_view(buffer.data() + 18, line.size())), parser.error());
  REQUIRE(sink.events.size() == 1);
  return sink.events[0];
}

TEST_SUITE("trace_line_scan_test") {
  TEST_CASE("hex_prefix and printable_run match byte loops on edge bytes") {
    std::mt19937 random(12345);
    for (int i = 0; i < 200000; ++i) {
      const std::string field = random_field(random);
      const std::string buffer = padded(field);
      uint64_t want = 0, got = 0;
      const int n = reference_hex_prefix(field, want);
      CAPTURE(field);
      REQUIRE(scan::hex_prefix(buffer.data(), got) == n);
      if (n > 0) REQUIRE(got == want);
      REQUIRE(scan::printable_run(buffer.data()) == reference_printable_run(field));
    }
  }

  TEST_CASE("every digit count from 1 to 16 converts exactly") {
    const std::string digits = "fedcba9876543210";
    for (size_t n = 1; n <= 16; ++n) {
      const std::string buffer = padded(digits.substr(0, n) + " x");
      uint64_t value = 0;
      CHECK(scan::hex_prefix(buffer.data(), value) == static_cast<int>(n));
      CHECK(value == std::stoull(digits.substr(0, n), nullptr, 16));
    }
  }

  TEST_CASE("the event fast path and the careful parser agree on mutated event lines") {
    const std::string good =
        "e 1a2b 17f0e1d2c3b4a596 3039 cudaLaunchKernel 0 12 st=7f0000001230 sb=1 "
        "sa=2 ci=5 md=0 dm=1 zz=9";
    std::mt19937 random(99);
    for (int i = 0; i < 100000; ++i) {
      const std::string line = mutated(good, random);
      const std::string buffer = padded("v 0.1.0 1\np 1 1 0\n" + line);
      const std::string_view header(buffer.data(), 9), process(buffer.data() + 10, 7),
          event(buffer.data() + 18, line.size());
      testing::RecordingSink fast_sink, careful_sink;
      RecordParser fast(fast_sink, true), careful(careful_sink, false);
      for (auto* parser : {&fast, &careful}) {
        REQUIRE(parser->parse(header));
        REQUIRE(parser->parse(process));
      }
      CAPTURE(line);
      const bool fast_ok = fast.parse(event);
      REQUIRE(fast_ok == careful.parse(event));
      if (!fast_ok) {
        REQUIRE(fast.error() == careful.error());
        continue;
      }
      testing::check_same_event(fast_sink.events.at(0), careful_sink.events.at(0));
    }
  }

  TEST_CASE("repeated tails with new heads read as the careful parser reads them") {
    // The fast path remembers events by their bytes after the tid (event_tail_cache.h): a few
    // tails, some damaged, under heads of every shape, through one parser of each kind.
    std::mt19937 random(7);
    std::vector<std::string> tails = {"cudaLaunchKernel 0 4 st=5000 sb=1 sa=1 ci=7",
                                      "cudaLaunchKernel 0 5 st=5000 sb=1 sa=1 ci=7",
                                      "cudaEventRecord 0 2 st=6000 ev=7000", "cudaFree 0 0",
                                      "cudaMalloc 2 9 zz=1"};
    for (int i = 0; i < 6; ++i) tails.push_back(mutated(tails[i % 5], random));
    const std::string heads[] = {
        "1 2 3", "abc 64 3e8", "fffffffffffffff 1 ffffffff", "ffffffffffffffff 1 2",
        "1 0ffffffffffffff 2", "1 2 100000000", "1 2 012345678", "1 2", "1 2 3x", "0 0 0",
        // the third space at the last byte the head reads, and past it
        "123456789abcdef 123456 12345678", "123456789abcdef 1234567 12345678",
        "fffffffffffffff fffffffffffffff 1"};
    std::string text = "v 0.1.0 1\np 1 1 0\n";
    for (int i = 0; i < 20000; ++i) {
      const std::string& head = heads[random() % std::size(heads)];
      text += "e " + head + " " + tails[random() % tails.size()] + "\n";
    }
    const std::string buffer = text + std::string(32, '\0');
    testing::RecordingSink fast_sink, careful_sink;
    RecordParser fast(fast_sink, true), careful(careful_sink, false);
    for (size_t at = 0, end; (end = buffer.find('\n', at)) < text.size(); at = end + 1) {
      const std::string_view line(buffer.data() + at, end - at);
      CAPTURE(line);
      const bool fast_ok = fast.parse(line);
      REQUIRE(fast_ok == careful.parse(line));
      if (!fast_ok) REQUIRE(fast.error() == careful.error());
    }
    REQUIRE(fast_sink.events.size() == careful_sink.events.size());
    for (size_t i = 0; i < fast_sink.events.size(); ++i)
      testing::check_same_event(fast_sink.events[i], careful_sink.events[i]);
  }

  TEST_CASE("the event fast path reads fields wherever the 16-byte blocks cut them") {
    // An ignored field of every length shifts the fields after it across block boundaries.
    for (size_t pad = 0; pad < 480; ++pad) {
      CAPTURE(pad);
      const std::string line =
          "e 1a2b 17f0e1d2c3b4a596 3039 cudaLaunchKernel 0 12 zz=" + std::string(pad, 'q') +
          " st=7f0000001230 ev=abcdef0123456789 sb=1";
      for (const bool fast : {true, false}) {
        CAPTURE(fast);
        const ApiEvent e = parse_one(line, fast);
        CHECK(e.seq == 0x1a2bu);
        CHECK(e.time_ns == 0x17f0e1d2c3b4a596u);
        CHECK(e.stack == 0x12u);
        CHECK(e.stream == 0x7f0000001230u);
        CHECK(e.event == 0xabcdef0123456789u);
        CHECK(e.status_before == CaptureStatus::Active);
      }
    }
  }

  TEST_CASE("each key fills its own member and no other, in both parsers") {
    for (int index = 0; index < kFieldCount; ++index) {
      CAPTURE(kFieldKeys[index]);
      const std::string line = std::string("e 1 2 3 cudaFree 0 0 ") + kFieldKeys[index] + "=1";
      for (const bool fast : {true, false}) {
        CAPTURE(fast);
        const ApiEvent e = parse_one(line, fast);
        CHECK(e.fields == 1u << index);
        for (int f = 0; f < kFieldCount; ++f) {
          CAPTURE(kFieldKeys[f]);
          CHECK(testing::field_value(e, f) == (f == index ? 1u : 0u));
        }
      }
    }
  }

  TEST_CASE("assigning to an index that is no field changes nothing (it once went to domain)") {
    for (const int index : {-1, static_cast<int>(kFieldCount), 31}) {
      CAPTURE(index);
      ApiEvent e;
      event_fields::assign(e, index, 1);
      CHECK(e.fields == 0u);
      for (int f = 0; f < kFieldCount; ++f) {
        CAPTURE(kFieldKeys[f]);
        CHECK(testing::field_value(e, f) == 0u);
      }
    }
  }

  TEST_CASE("unknown keys are ignored by both parsers and never land in a member") {
    // Keys a newer writer might use: two letters nobody defined, other lengths, other bytes,
    // values that would be out of range or not hex for any defined field.
    const char* const unknown[] = {"zz=5",       "ab=ffffffffffffffffff",
                                   "xx=not-hex", "qq=",
                                   "s=1",        "stt=3",
                                   "dmx=1",      "Zz=1",
                                   "s1=2",       "d_=1",
                                   "zy=1",       "aa=0"};
    const std::string known = "e 1 2 3 cudaFree 0 0 st=9 dm=1";
    for (const char* key : unknown) {
      CAPTURE(key);
      for (const std::string& line :
           {known + " " + key, std::string("e 1 2 3 cudaFree 0 0 ") + key + " st=9 dm=1"}) {
        for (const bool fast : {true, false}) {
          CAPTURE(fast);
          const ApiEvent e = parse_one(line, fast);
          CHECK(e.fields ==
                (static_cast<uint32_t>(Field::Stream) | static_cast<uint32_t>(Field::Domain)));
          for (int f = 0; f < kFieldCount; ++f) {
            CAPTURE(kFieldKeys[f]);
            const uint64_t want = f == kFieldStream ? 9 : f == kFieldDomain ? 1 : 0;
            CHECK(testing::field_value(e, f) == want);
          }
        }
      }
    }
  }

  TEST_CASE("newline_bits finds the same newlines as a byte loop") {
    std::mt19937 random(36);
    std::string block(64 + 64, '\0');
    for (int round = 0; round < 20000; ++round) {
      for (char& c : block) c = random() % 4 == 0 ? '\n' : "\x0a\x0b\x8a\x00 e"[random() % 6];
      const size_t size = 1 + random() % 80;
      uint64_t want = 0;
      for (size_t i = 0; i < 64 && i < size; ++i) want |= uint64_t{block[i] == '\n'} << i;
      CAPTURE(size);
      CHECK(scan::newline_bits(block.data(), size) == want);
    }
  }

  TEST_CASE("the read loop cuts lines where a byte loop does, whatever 64-byte block ends them") {
    // Lines of every length from 0 to 200 and some over the limit, across the reader's buffer
    // refills: good events, ignored keys of any length, damaged lines.
    std::mt19937 random(64);
    std::string text = "v 0.1.0 1\np 10 1 0\n";
    for (int i = 0; i < 20000; ++i) {
      const int kind = static_cast<int>(random() % 16);
      if (kind == 0) {
        text += std::string(random() % 3, 'e') + "\n";  // empty, "e", "ee": damaged
      } else if (kind == 1 && i % 50 == 0) {
        text += "c " + std::string(kMaxLineLength + random() % 3, 'a') + "\n";  // too long
      } else {
        text += "e " + std::to_string(i) + " 2 3 cudaLaunchKernel 0 0 st=5000";
        if (kind > 8) text += " zz=" + std::string(random() % 180, '7');
        text += "\n";
      }
    }
    text += "z 28 0\n";
    std::vector<uint64_t> want_events, want_skipped;  // by a byte loop
    uint64_t line = 0;
    for (size_t begin = 0, end; (end = text.find('\n', begin)) != std::string::npos;
         begin = end + 1) {
      ++line;
      const std::string_view l(text.data() + begin, end - begin);
      if (line <= 2 || l.starts_with('z')) continue;
      if (l.starts_with("e "))
        want_events.push_back(line);
      else
        want_skipped.push_back(line);
    }
    testing::RecordingSink sink;
    std::istringstream in(text);
    REQUIRE_FALSE(read_trace(in, "t.trace", sink).has_value());
    REQUIRE(sink.events.size() == want_events.size());
    REQUIRE(sink.skipped.size() == want_skipped.size());
    for (size_t i = 0; i < want_skipped.size(); ++i) CHECK(sink.skipped[i].line == want_skipped[i]);
    CHECK(sink.types.back() == 'z');
  }
}

}  // namespace
}  // namespace capguard::trace
