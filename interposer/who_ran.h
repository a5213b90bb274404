// Who ran the process: the host and the launchers' rank variables, copied from the
// environment once, at attach, into static storage, then written as one 'h' record after the
// command line of every trace the process opens (a fork child's too). No allocation; nothing
// here judges: the analyzer makes "rank 3 (node a17, GPU 3)" of it.
#pragma once

#include "trace/writer.h"

namespace capguard::interposer {

// Copies the host (CAPGUARD_HOST when set: tests simulate nodes with it; else gethostname)
// and the variables of trace/launcher_vars.def. Later calls do nothing; not thread-safe
// (called where the recorder starts, before any callback).
void read_who_ran_once();
// The host read by read_who_ran_once() ("" before it).
const char* who_ran_host();
// The 'h' record (format 8).
void write_who_ran(trace::TraceWriter& writer);

}  // namespace capguard::interposer
