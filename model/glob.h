// Shell-style globs ('*' any run of characters, '?' one character), as suppressions and
// --user-code write them.
#pragma once

#include <string_view>

namespace capguard {

bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace capguard
