// The last component of a '/'-separated path ("libcuda.so.1" of "/usr/lib/libcuda.so.1"); the
// path itself when it has no '/', and "" when it ends with one.
#pragma once

#include <string_view>

namespace capguard {

inline std::string_view base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace capguard
