// What the gate of `capguard report` needs to know about a trace beyond its findings: whether
// it says capguard never attached ('i failed ...'), and whether the process reached its end
// record ('z'). Found by one bounded scan of the file's line starts (trace/format.h).
#pragma once

#include <string>

namespace capguard::cli {

struct TraceEnding {
  bool readable = false;       // a regular file that could be read to its end
  bool has_end = false;        // a 'z' record: the process exited normally
  bool attach_failed = false;  // an 'i failed' record, whatever other 'i' records say
  bool has_attach = false;     // any 'i' record: none, and capguard never attached (issue 35)
};

// Opens without blocking and reads only regular files.
TraceEnding scan_trace_ending(const std::string& path);

}  // namespace capguard::cli
