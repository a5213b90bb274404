// Shell-style globs ('*' any run of characters, '?' one character), as suppressions and
// --user-code write them.
#pragma once

#include <string_view>

namespace capguard {

bool glob_match(std::string_view pattern, std::string_view text);

// A glob with no '/' matches a path's last component ("libnccl.so*"), one with a '/' the whole
// path ("*/site-packages/*"); an empty path matches nothing.
bool path_matches(std::string_view glob, std::string_view path);

}  // namespace capguard
