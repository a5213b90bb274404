// Internal to the reader: parses the common shape of an event line ('e' record) without a
// branch per byte. One pass over the line, 16 bytes at a time, finds every field boundary and
// every hex digit; the fields are then parsed independently, so the CPU overlaps them.
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

// Splits the same line after its first three fields (seq, time, tid: the ones that change from
// one call to the next) and reads them; `tail` is the rest, from the API name on. False when
// any of them is unusual (16+ digits, a tid over 8 digits, the line ends, all three
// longer than 32 bytes): the careful way.
bool parse_event_head(std::string_view line, uint64_t& seq, uint64_t& time_ns, uint32_t& tid,
                      std::string_view& tail);

}  // namespace capguard::trace
