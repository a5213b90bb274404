// The text report's width: no line over kTextWidth columns, so that a report reads in a
// terminal and a CI log without horizontal scrolling. Lines are broken at spaces, the rest
// indented under the line's own text (after "fix: ", else two more spaces); a word longer than
// the line is kept whole, and so are the greppable "SUMMARY: " line and a process's notices
// ("==42==capguard: stopped watching: ...").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace capguard {

inline constexpr size_t kTextWidth = 120;

// Columns of a line as a terminal shows it: code points, ANSI color sequences not counted.
size_t display_width(std::string_view line);

// `text` with every line wider than `width` broken as above. With `keep_frames`, stack frame
// lines ("    #3 0x...") are left whole (--native-frames: every frame exactly as it was).
std::string wrap_long_lines(std::string_view text, bool keep_frames = false,
                            size_t width = kTextWidth);

}  // namespace capguard
