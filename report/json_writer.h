// A small streaming JSON writer: pretty-printed, commas placed automatically, strings escaped
// (invalid UTF-8 becomes U+FFFD, so the output is always valid JSON). Used by the JSON and SARIF
// renderers.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace capguard {

// Appends `s` to `out` as a quoted JSON string.
void append_json_string(std::string& out, std::string_view s);

// Receives the document piece by piece, so that a large report is never held in memory whole.
using JsonSink = std::function<void(std::string_view)>;

class JsonWriter {
 public:
  JsonWriter() = default;
  // Hands the text to `sink` whenever enough has accumulated, and the rest when the document's
  // outermost value ends; str() then holds only what was not handed over yet.
  explicit JsonWriter(JsonSink sink) : sink_(std::move(sink)) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);  // inside an object, before each value

  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b);
  JsonWriter& value(std::signed_integral auto n) { return raw(std::to_string(int64_t{n})); }
  JsonWriter& value(std::unsigned_integral auto n) { return raw(std::to_string(uint64_t{n})); }
  JsonWriter& null() { return raw("null"); }
  // scaled / 10^places with exactly `places` decimals (48213, 3: 48.213). Integers in, so the
  // bytes are the same on every machine, which a double's formatting does not promise.
  JsonWriter& fixed(uint64_t scaled, unsigned places);

  // key(name).value(v) in one call.
  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    return key(name).value(v);
  }

  const std::string& str() const { return out_; }

 private:
  JsonWriter& raw(std::string_view token);
  void before_value();
  void newline();
  void hand_over(bool all);
  JsonWriter& close(char bracket);  // end_object / end_array

  struct Level {
    bool is_object;
    bool empty = true;
  };
  std::string out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
  JsonSink sink_;
};

}  // namespace capguard
