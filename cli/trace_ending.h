// What the gate (engine/gate.h) needs to know about a trace beyond its findings: whether
// it says capguard never attached ('i failed ...'), and whether the process reached its end
// record ('z'). Found by one bounded scan of the file's line starts (trace/format.h).
#pragma once

#include <string>
#include <vector>

#include "engine/gate.h"
#include "model/report.h"

namespace capguard::cli {

struct TraceEnding {
  bool readable = false;       // a regular file that could be read to its end
  bool has_end = false;        // a 'z' record: the process exited normally
  bool attach_failed = false;  // an 'i failed' record, whatever other 'i' records say
  bool has_attach = false;     // any 'i' record: none, and capguard never attached
};

// Opens without blocking and reads only regular files.
TraceEnding scan_trace_ending(const std::string& path);

// The gate's facts about each process of the report that has a trace (an unreadable one is a
// problem of its own): whether capguard attached, whether it ended. `still_running` (run): the
// traces of processes still running `after_s` seconds after the program exited.
std::vector<TraceFacts> scan_trace_facts(const Report& report,
                                         const std::vector<std::string>& still_running = {},
                                         int after_s = 0);

}  // namespace capguard::cli
