// Where libdwfl finds a module's separate debug data: capguard's own find_debuginfo callback.
// libdwfl's standard search opens each candidate with a plain blocking open(), and
// the module a trace names decides where it looks (a FIFO at <dir>/.debug/<name>, or at
// <target>.debug beside a symlink's target, blocked `report` for good); with DEBUGINFOD_URLS
// set it also asks a debuginfod server, from an offline report. This one opens every candidate
// itself, non-blocking, keeps only a regular file whose build-id is the one wanted, and asks no
// server unless the user turned debuginfod on.
#pragma once

#include <elfutils/libdwfl.h>

#include <string>
#include <vector>

namespace capguard {

// The places looked at, in order, for the debug file of the module at `file_name` (its path as
// libdwfl knows it) with the build-id `build_id_hex` (may be empty) and the .gnu_debuglink name
// `debuglink` (empty: none; then "<name>.debug" and, beside the main directory, "<name>"). Both
// the named directory and, for a symlink, its target's are searched, each under ".debug/" and
// under /usr/lib/debug. Exposed for tests.
std::vector<std::string> debug_file_candidates(const std::string& file_name,
                                               const std::string& build_id_hex,
                                               const std::string& debuglink);

// The callbacks for Dwfl_Callbacks::find_debuginfo: without and with debuginfod (the latter
// falls back on libdwfl's build-id search, which asks the servers of DEBUGINFOD_URLS, only
// after the local search found nothing).
int find_debuginfo_offline(Dwfl_Module* module, void** userdata, const char* modname,
                           Dwarf_Addr base, const char* file_name, const char* debuglink_file,
                           GElf_Word debuglink_crc, char** debuginfo_file_name);
int find_debuginfo_with_debuginfod(Dwfl_Module* module, void** userdata, const char* modname,
                                   Dwarf_Addr base, const char* file_name,
                                   const char* debuglink_file, GElf_Word debuglink_crc,
                                   char** debuginfo_file_name);

}  // namespace capguard
