// capguard: finds the mistakes that break CUDA stream capture. See README.md and docs/ for usage.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <new>

#include "cli/commands.h"
#include "cli/output.h"
#include "model/enum_names.h"

#ifndef CAPGUARD_VERSION
#define CAPGUARD_VERSION "unknown"
#endif

namespace capguard::cli {

namespace {
// --fail-on: a severity (model/enum_names.def) or never.
std::vector<std::string> fail_on_choices() {
  const std::vector<std::string> names = severity_names();
  std::vector<std::string> choices(names.rbegin(), names.rend());  // highest first
  choices.emplace_back("never");
  return choices;
}
}  // namespace

void add_report_options(CLI::App& command, ReportOptions& options) {
  // Names parsed once, here, into the enums of their lists (formats.def, enum_names.def).
  command
      .add_option_function<std::string>(
          "--format", [&options](const std::string& name) { options.format = *format_named(name); },
          "report format for stderr or -o FILE")
      ->check(CLI::IsMember(format_names()))
      ->default_str(format_name(options.format));
  command
      .add_option("-o,--output", options.outputs,
                  "write the report to FILE ('-' = stdout) in --format, or FORMAT:FILE; "
                  "repeatable; the text report still goes to stderr unless --quiet")
      ->type_name("[FORMAT:]FILE")
      ->allow_extra_args(false);
  command
      .add_option_function<std::string>(
          "--rehearse-mode",
          [&options](const std::string& name) { options.rehearse_mode = *mode_named(name); },
          "capture mode rehearsed regions are judged against (capguard run --rehearse)")
      ->check(CLI::IsMember(mode_names()))
      ->default_str(mode_name(options.rehearse_mode));
  command
      .add_option_function<std::string>(
          "--fail-on",
          [&options](const std::string& name) { options.fail_on = severity_named(name); },
          "lowest severity that fails the run")
      ->check(CLI::IsMember(fail_on_choices()))
      ->default_str(to_string(*options.fail_on));
  command
      .add_option("--min-graph-coverage", options.min_graph_coverage,
                  "PCT: fail (exit 1) when less than PCT percent of the kernels ran inside graph "
                  "replays after warm-up (the first graph replay), all processes' kernels "
                  "counted together (default: off)")
      ->type_name("PCT")
      ->check(CLI::Range(0.0, 100.0));
  command
      .add_option("--rule-option", options.rule_options,
                  "RULE.NAME=VALUE: a rule's threshold (capguard explain RULE lists them); "
                  "repeatable")
      ->type_name("RULE.NAME=VALUE")
      ->allow_extra_args(false);
  command.add_option("--suppressions", options.suppressions, "file of findings to ignore")
      ->check(CLI::ExistingFile);
  command
      .add_option("--baseline", options.baseline,
                  "earlier capguard JSON or SARIF report: report only findings not in it")
      ->check(CLI::ExistingFile);
  command.add_flag("-q,--quiet", options.quiet, "with -o: no text report on stderr");
  command.add_flag("--no-default-suppressions", options.no_default_suppressions,
                   "also report what the built-in suppressions hide (see capguard suppressions)");
  command
      .add_option("--source-root", options.source_root,
                  "SARIF: paths under DIR are written relative to it; relative --user-code "
                  "globs are taken relative to it; text, html: source lines are shown only from "
                  "source files under DIR, found by the recorded path or its tail (default: "
                  "the current directory; see docs/security.md)")
      ->type_name("DIR");
  command.add_flag("--no-source", options.no_source,
                   "text, html: do not show the source lines around each user frame");
  command.add_flag("--native-frames", options.native_frames,
                   "Python programs: show every native frame of a stack (the text report folds "
                   "a framework's native frames and leaves CPython's out)");
  command
      .add_option("--user-code", options.user_code,
                  "GLOB: source files or modules that are your code, where capguard guesses "
                  "wrong (default: everything but CUDA, the system, the toolkit and "
                  "site-packages); repeatable")
      ->type_name("GLOB")
      ->allow_extra_args(false);
  command
      .add_option("-j,--jobs", options.jobs,
                  "analyse N traces at once (default: the machine's cores); each worker holds "
                  "one trace's replay, bounded as docs/security.md says")
      ->type_name("N")
      ->check(CLI::Range(0u, 1024u));  // each a thread and a replay's memory
  command
      .add_option("--symbol-cache", options.symbol_cache,
                  "DIR: keep the names found in libraries there, by build-id, so that the "
                  "next analysis reads no symbol table again; 'off': none (default: "
                  "$CAPGUARD_SYMBOL_CACHE, else $XDG_CACHE_HOME/capguard, else "
                  "~/.cache/capguard; safe to delete)")
      ->type_name("DIR");
  command.add_flag("--debuginfod", options.debuginfod,
                   "look for missing separate debug files on the servers of DEBUGINFOD_URLS "
                   "too (default: local files only, no network)");
}

namespace {

int run_main(int argc, char** argv) {
  // Named, not argv[0]: usage lines say "capguard", never the path it was started by (python -m
  // capguard_cuda runs it by its absolute path).
  CLI::App app{"capguard: finds the mistakes that break CUDA stream capture", "capguard"};
  app.set_version_flag("-V,--version", "capguard " CAPGUARD_VERSION, "print the version and exit");
  app.require_subcommand(1);

  RunOptions run;
  CLI::App* run_app = app.add_subcommand("run", "run PROGRAM under capguard and report");
  add_report_options(*run_app, run.report);
  run_app
      ->add_option("--trace-dir", run.trace_dir,
                   "keep the traces in DIR (default: a temporary directory, removed after a "
                   "clean run)")
      ->type_name("DIR");
  run_app
      ->add_option("--error-exitcode", run.error_exitcode,
                   "exit status when findings reach --fail-on (1-255)")
      // A wider value would wrap modulo 256 in the shell: 256 would make a failing gate pass.
      ->check(CLI::Range(1, 255))
      ->capture_default_str();
  // Two flags rather than CLI11's "!--no-" form, which help shows as "--a,--no-a{false}".
  run_app->add_flag("--require-attach", run.require_attach,
                    "exit 3 when capguard could not attach or the program never reached CUDA "
                    "(the default)");
  run_app->add_flag_callback(
      "--no-require-attach", [&run] { run.require_attach = false; },
      "only warn when capguard could not attach, and exit with the program's status");
  run_app->add_flag("--fail-fast", run.fail_fast,
                    "exit 3 at once, without starting the program, when no CUDA driver or GPU "
                    "device is found (the check runs and is said first either way)");
  run_app
      ->add_option("--rehearse", run.rehearse,
                   "rehearse a capture of every NVTX range whose message matches GLOB: the "
                   "program runs eagerly, and each call in the range is judged as if it were "
                   "captured (repeat it for several regions)")
      ->type_name("GLOB");
  run_app->add_option("command", run.command, "-- PROGRAM [ARGS...]")->required();

  ReportOptions report;
  std::vector<std::string> traces;
  CLI::App* report_app = app.add_subcommand("report", "analyze recorded traces");
  add_report_options(*report_app, report);
  report_app
      ->add_option("traces", traces,
                   "trace files, directories of *.trace files, or capguard JSON reports "
                   "(*.json: one per node of a job, merged into one report)")
      ->required();
  report_app->add_flag("--one-node", report.one_node,
                       "the traces are one node's of a larger job: ranks that never reported are "
                       "counted when the nodes' JSON reports are merged, not here");

  app.add_subcommand("rules", "list the rules: id, severity, summary");
  CLI::App* suppressions_app =
      app.add_subcommand("suppressions", "print the built-in suppressions");
  std::string rule;
  CLI::App* explain_app = app.add_subcommand("explain", "explain one rule and its fix");
  explain_app->add_option("rule", rule, "rule id (see `capguard rules`)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    const bool in_run = run_app->parsed();
    // Parse errors quote argv: escaped like every line capguard prints (no forged SUMMARY:).
    say(std::string(e.what()) + (in_run ? " (write: capguard run [options] -- PROGRAM [ARGS...])"
                                        : " (see capguard --help)"));
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    say(std::string(e.what()) + " (see capguard --help)");
    return kExitUsage;
  }
  if (run_app->parsed()) return run_command(run);
  if (report_app->parsed()) return report_command(traces, report);
  if (explain_app->parsed()) return explain_command(rule);
  if (suppressions_app->parsed()) return default_suppressions_command();
  return rules_command();
}

}  // namespace
}  // namespace capguard::cli

int main(int argc, char** argv) {
  try {
    return capguard::cli::run_main(argc, argv);
  } catch (const std::bad_alloc&) {
    // Never an abort without a word: a gate must see a failure it can explain.
    std::fputs("capguard: out of memory\n", stderr);
    return capguard::kExitCannotRead;
  }
}
