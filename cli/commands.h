// The capguard subcommands. Each returns the process exit status (docs/command-line.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/analyzer.h"
#include "engine/gate.h"

namespace CLI {
class App;
}

namespace capguard::cli {

// The report formats of cli/formats.def.
enum class ReportFormat : uint8_t {
#define CAPGUARD_FORMAT(name) name,
#include "cli/formats.def"
};

// Options shared by `run` and `report`: what to write where, and what counts as failure.
struct ReportOptions {
  ReportFormat format = ReportFormat::text;
  std::vector<std::string> outputs;  // -o values: FILE (in --format) or FORMAT:FILE; '-' = stdout
  std::optional<Severity> fail_on = Severity::Error;  // nullopt: --fail-on never
  std::string suppressions;
  std::string baseline;  // an earlier JSON or SARIF report: only new findings count
  bool quiet = false;
  bool no_default_suppressions = false;
  std::string source_root;     // SARIF paths, relative --user-code, source files; empty: the cwd
  bool no_source = false;      // text, html: no source lines around the user frames
  bool native_frames = false;  // text: every native frame of Python stacks
  std::vector<std::string> user_code;     // --user-code globs: what the user's own code is
  std::vector<std::string> rule_options;  // --rule-option RULE.NAME=VALUE (rules/rule_options.h)
  std::string symbol_cache;  // --symbol-cache: DIR or "off"; empty: CAPGUARD_SYMBOL_CACHE, XDG
  bool debuginfod = false;   // --debuginfod: separate debug files from DEBUGINFOD_URLS too
  trace::CaptureMode rehearse_mode = trace::CaptureMode::Global;  // rehearsed regions are judged in
  unsigned jobs = 0;      // -j: traces analysed at once; 0: the machine's cores
  bool one_node = false;  // report --one-node: ranks on other nodes are the merge's to count
  std::optional<double> min_graph_coverage;  // --min-graph-coverage PCT (engine/gate.h)
};

struct RunOptions {
  ReportOptions report;
  std::string trace_dir;  // empty: a temporary directory, removed after a clean run
  int error_exitcode = kExitFindings;
  bool require_attach = true;  // capguard not attached (or never reached CUDA): exit 3
  bool fail_fast = false;      // no usable GPU found before the start: exit 3, program not started
  std::vector<std::string> rehearse;  // capture rehearsal: NVTX ranges whose message matches a glob
  std::vector<std::string> command;
};

void add_report_options(CLI::App& command, ReportOptions& options);

int report_command(const std::vector<std::string>& paths, const ReportOptions& options);
int run_command(const RunOptions& options);
int rules_command();
int explain_command(const std::string& rule);
int default_suppressions_command();

}  // namespace capguard::cli
