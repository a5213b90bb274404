// Internal to the reader: parses the common shape of an event line ('e' record) without a
// branch per byte. It finds every field boundary of the line first (word at a time) and then
// parses the fields independently, so the CPU overlaps them.
//
// It never judges: it either produces exactly what the careful parser (record_parser.cpp)
// would, or returns false and the careful parser decides, errors included. The fuzz target
// checks that the two agree on every line it generates.
#pragma once

#include <string_view>

#include "trace/event.h"

namespace capguard::trace {

// `line` starts with "e " and is followed in memory by '\n' and 16 readable bytes. On success
// `event` holds every value except api, which is returned as a view into the line.
bool parse_event_fast(std::string_view line, ApiEvent& event, std::string_view& api);

}  // namespace capguard::trace
