// Suppressions built into capguard, applied unless --no-default-suppressions: framework code
// that does something a rule flags, on purpose and safely. Same format as a suppressions file
// (report/suppressions.h); `capguard suppressions` prints them.
#pragma once

#include <string_view>

namespace capguard {

std::string_view default_suppressions_text();

}  // namespace capguard
