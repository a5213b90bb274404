#include "report/json_reader.h"

#include <doctest/doctest.h>

#include <string>

#include "report/json_writer.h"

namespace capguard {
namespace {

std::string error_of(std::string_view text) {
  JsonParseResult r = parse_json(text, "in.json");
  REQUIRE(r.error);
  CHECK_FALSE(r.value);
  return r.error->to_string();
}

}  // namespace

TEST_CASE("JSON values of every kind parse, objects keep their order") {
  JsonParseResult r = parse_json(
      R"( {"b": [1, -2.5e2, true, false, null], "a": {"s": "x\"\\\/\n\u00e9\ud83d\ude00"}} )", "t");
  REQUIRE_MESSAGE(!r.error, r.error->to_string());
  const JsonValue& v = *r.value;
  REQUIRE(v.as_object());
  CHECK(v.as_object()->front().first == "b");
  const auto& b = *v.get("b")->as_array();
  CHECK(*b[0].as_number() == 1);
  CHECK(*b[1].as_number() == -250);
  CHECK(*b[2].as_bool());
  CHECK_FALSE(*b[3].as_bool());
  CHECK(b[4].is_null());
  CHECK(v.get("a")->get_string("s") == "x\"\\/\n\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(v.get("missing") == nullptr);
  CHECK(v.get("b")->get_int("x") == std::nullopt);
}

TEST_CASE("broken JSON is refused with line and column") {
  CHECK(error_of("") == "in.json:1:1: unexpected end of input, expected a value");
  CHECK(error_of("{\"a\": 1,\n \"b\" 2}") == "in.json:2:6: expected ':' after object key");
  CHECK(error_of("[1, 2") == "in.json:1:6: expected ',' or ']' in array");
  CHECK(error_of("\"abc") == "in.json:1:5: unterminated string");
  CHECK(error_of("[01]") == "in.json:1:2: leading zero in number");
  CHECK(error_of("{} x") == "in.json:1:4: unexpected text after the JSON value");
  CHECK(error_of("\"\\x\"") == "in.json:1:3: invalid escape in string");
  CHECK(error_of("\"\\u12\"") == "in.json:1:4: \\u must be followed by 4 hex digits");
  CHECK(error_of("nul") == "in.json:1:1: unexpected character 'n', expected a value");
  CHECK(error_of("1e999") == "in.json:1:6: number out of range");
}

TEST_CASE("deeply nested JSON is refused instead of overflowing the stack") {
  const std::string deep(100000, '[');
  CHECK(error_of(deep).find("nesting deeper than") != std::string::npos);
}

TEST_CASE("an object naming one key twice is refused, not read as its first or last value") {
  // Hostile input (docs/security.md): Python and jq take the last, capguard took the first, so a
  // report that reads as failing in one tool passed in the other. Refused wherever it is.
  CHECK(error_of(R"({"status": "fail", "status": "pass"})") ==
        "in.json:1:28: the key \"status\" appears twice in one object");
  // The same key spelled with an escape is the same key.
  CHECK(error_of(R"({"rule": 1, "r\u0075le": 2})").find("the key \"rule\" appears twice") !=
        std::string::npos);
  // Nested: in a finding deep in the report, and past the small-object scan (16 members).
  CHECK(error_of(R"({"findings": [{"rule": "a", "x": 0, "rule": "b"}]})")
            .find("the key \"rule\" appears twice") != std::string::npos);
  std::string big = "{";
  for (int i = 0; i < 40; ++i) big += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  CHECK_FALSE(parse_json(big + "\"last\": 0}", "in.json").error);
  CHECK(error_of(big + "\"k3\": 0}").find("the key \"k3\" appears twice") != std::string::npos);
  CHECK(error_of(big + "\"k39\": 0}").find("the key \"k39\" appears twice") != std::string::npos);
  // A long key is named by its first 64 bytes.
  const std::string long_key(1000, 'k');
  const std::string said = error_of("{\"" + long_key + "\": 1, \"" + long_key + "\": 2}");
  CHECK(said.find("the key \"" + std::string(64, 'k') + "\" appears twice") != std::string::npos);
  // One key in two objects, and a key equal to a value, are not repeats.
  JsonParseResult r = parse_json(R"({"a": {"b": 1}, "c": {"b": "a"}, "b": [{"a": 1}, {"a": 2}]})", "t");
  CHECK_MESSAGE(!r.error, r.error->to_string());
}

TEST_CASE("what JsonWriter writes, parse_json reads back") {
  JsonWriter w;
  w.begin_object().field("text", "tab\t quote\" ctl\x01 bad\xff ok\xc3\xa9");
  w.field("n", -5).field("u", uint64_t{18446744073709551615ULL}).field("t", true);
  w.key("ms").fixed(48213, 3).key("small").fixed(7, 3).key("whole").fixed(12, 0);
  w.key("empty").begin_array().end_array().key("obj").begin_object().end_object();
  w.end_object();
  JsonParseResult r = parse_json(w.str(), "w");
  REQUIRE_MESSAGE(!r.error, r.error->to_string());
  CHECK(r.value->get_string("text") == "tab\t quote\" ctl\x01 bad\xef\xbf\xbd ok\xc3\xa9");
  CHECK(r.value->get_int("n") == -5);
  CHECK(*r.value->get("t")->as_bool());
  CHECK(r.value->get("empty")->as_array()->empty());
  CHECK(*r.value->get("ms")->as_number() == doctest::Approx(48.213));
  CHECK(w.str() ==
        "{\n  \"text\": \"tab\\t quote\\\" ctl\\u0001 bad\\ufffd ok\xc3\xa9\",\n  \"n\": -5,\n"
        "  \"u\": 18446744073709551615,\n  \"t\": true,\n  \"ms\": 48.213,\n"
        "  \"small\": 0.007,\n  \"whole\": 12,\n  \"empty\": [],\n  \"obj\": {}\n}\n");
}

}  // namespace capguard
