// Puts an object back to what its default member initializers say, member by member (so
// every member must have one: ApiEvent's and Call's all do).
// `x = T{}` zeroes the whole object first, which GCC's generic x86-64 tuning does with
// `rep stos` for anything over 64 bytes: slow to start, where the replay resets an ApiEvent
// and a Call for every event.
#pragma once

#include <new>
#include <type_traits>

namespace capguard::trace {

template <class T>
void reset(T& x) {
  static_assert(std::is_trivially_destructible_v<T>);
  ::new (static_cast<void*>(&x)) T;  // default-initialization: no parentheses, no zeroing
}

}  // namespace capguard::trace
