// Internal to the writer and the two readers: the optional event fields of
// trace/event_fields.def as tables and switches, so that no field is spelled out by hand.
#pragma once

#include <array>
#include <cstdint>

#include "trace/event.h"

namespace capguard::trace::event_fields {

// The largest value each field may hold, by FieldIndex.
inline constexpr uint64_t kMax[] = {
#define CAPGUARD_EVENT_FIELD(Name, key, member, type, max, ...) max,
#include "trace/event_fields.def"
};
static_assert(std::size(kMax) == kFieldCount);

// Keys are two lower-case letters, no two alike: what the lookup below relies on.
constexpr bool keys_are_two_distinct_letters() {
  for (int i = 0; i < kFieldCount; ++i) {
    const char* key = kFieldKeys[i];
    if (key[0] < 'a' || key[0] > 'z' || key[1] < 'a' || key[1] > 'z' || key[2] != '\0') {
      return false;
    }
    for (int j = 0; j < i; ++j) {
      if (kFieldKeys[j][0] == key[0] && kFieldKeys[j][1] == key[1]) return false;
    }
  }
  return true;
}
static_assert(keys_are_two_distinct_letters(), "event_fields.def: a bad or repeated key");

// FieldIndex by key, for keys of two lower-case letters; -1 for keys nobody defined.
inline constexpr auto kIndexByKey = [] {
  std::array<int8_t, 26 * 26> index{};
  for (auto& i : index) i = -1;
  for (int i = 0; i < kFieldCount; ++i) {
    index[(kFieldKeys[i][0] - 'a') * 26 + (kFieldKeys[i][1] - 'a')] = static_cast<int8_t>(i);
  }
  return index;
}();

// The FieldIndex of the key a, b (both lower-case letters); -1 for a key nobody defined.
inline int index_of(char a, char b) { return kIndexByKey[(a - 'a') * 26 + (b - 'a')]; }

// Stores a value already checked against kMax in the field `index`. Anything else than a
// FieldIndex changes nothing.
[[gnu::always_inline]] inline void assign(ApiEvent& e, int index, uint64_t value) {
  switch (index) {
#define CAPGUARD_EVENT_FIELD(Name, key, member, type, ...) \
  case kField##Name:                                       \
    e.member = static_cast<type>(value);                   \
    break;
#include "trace/event_fields.def"
    default:
      break;
  }
}

}  // namespace capguard::trace::event_fields
