// A small recursive-descent JSON parser (RFC 8259) for reading capguard's own reports back,
// e.g. as a baseline. Errors say where: "report.json:3:17: expected ':' after object key".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace capguard {

class JsonValue {
 public:
  using Array = std::vector<JsonValue>;
  using Object = std::vector<std::pair<std::string, JsonValue>>;  // document order kept

  JsonValue() = default;  // null
  explicit JsonValue(bool b) : v_(b) {}
  explicit JsonValue(double d) : v_(d) {}
  explicit JsonValue(std::string s) : v_(std::move(s)) {}
  explicit JsonValue(Array a) : v_(std::move(a)) {}
  explicit JsonValue(Object o) : v_(std::move(o)) {}

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  const bool* as_bool() const { return std::get_if<bool>(&v_); }
  const double* as_number() const { return std::get_if<double>(&v_); }
  const std::string* as_string() const { return std::get_if<std::string>(&v_); }
  const Array* as_array() const { return std::get_if<Array>(&v_); }
  const Object* as_object() const { return std::get_if<Object>(&v_); }

  // Member lookup on an object; nullptr when this is not an object or has no such key.
  const JsonValue* get(std::string_view key) const;
  // Convenience accessors with defaults for missing or mistyped members.
  std::string get_string(std::string_view key, std::string fallback = {}) const;
  std::optional<int64_t> get_int(std::string_view key) const;

 private:
  std::variant<std::monostate, bool, double, std::string, Array, Object> v_;
};

struct JsonError {
  std::string source;
  uint32_t line = 0;    // 1-based; 0 when not about a position (e.g. cannot open the file)
  uint32_t column = 0;  // 1-based, in bytes
  std::string message;
  std::string to_string() const;
};

struct JsonParseResult {
  std::optional<JsonValue> value;  // set on success
  std::optional<JsonError> error;  // set on failure
};

// A JSON file is read whole only up to this size: reports capguard writes are bounded well
// below it (cli/report_file.cpp), and the parsed document takes several times the text.
inline constexpr size_t kMaxJsonFileBytes = size_t{256} << 20;

// An object that names one key twice is an error (a report capguard wrote never does).
JsonParseResult parse_json(std::string_view text, const std::string& source_name);
JsonParseResult parse_json_file(const std::string& path);

}  // namespace capguard
