#include "cli/output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>

#include "cli/report_file.h"
#include "engine/pipeline.h"
#include "engine/test_marks.h"
#include "model/enum_names.h"
#include "report/render.h"
#include "report/utf8.h"
#include "rules/rule_options.h"
#include "rules/rule_table.h"
#include "util/regular_file.h"

namespace capguard::cli {
namespace {

namespace fs = std::filesystem;

using Sink = JsonSink;  // a piece of the output at a time

// One writer per format of formats.def; JSON, SARIF and JUnit go out piece by piece.
void write_text(const Report& r, const RenderOptions& o, const Sink& out) {
  out(render_text(r, o));
}
void write_json(const Report& r, const RenderOptions&, const Sink& out) { render_json(r, out); }
void write_sarif(const Report& r, const RenderOptions& o, const Sink& out) {
  render_sarif(r, o, out);
}
void write_junit(const Report& r, const RenderOptions& o, const Sink& out) {
  render_junit(r, o, out);
}
void write_html(const Report& r, const RenderOptions& o, const Sink& out) {
  out(render_html(r, o));
}
void write_dot(const Report& r, const RenderOptions&, const Sink& out) { out(render_dot(r)); }

struct Format {
  ReportFormat format;
  std::string_view name;
  void (*write)(const Report&, const RenderOptions&, const Sink&);
};

constexpr Format kFormats[] = {
#define CAPGUARD_FORMAT(name) {ReportFormat::name, #name, &write_##name},
#include "cli/formats.def"
};
static_assert([] {  // a format is its row's index
  for (size_t i = 0; i < std::size(kFormats); ++i)
    if (static_cast<size_t>(kFormats[i].format) != i) return false;
  return true;
}());

const Format& format_of(ReportFormat format) {
  const auto index = static_cast<size_t>(format);
  return kFormats[index < std::size(kFormats) ? index : 0];
}

// The source root as an absolute path: by default where capguard was started.
std::string absolute_source_root(const std::string& source_root) {
  std::error_code error;
  return source_root.empty() ? fs::current_path(error).string()
                             : fs::absolute(source_root, error).string();
}

RenderOptions render_options(bool color, const ReportOptions& report_options) {
  RenderOptions options;
  options.color = color;
  options.source = !report_options.no_source;
  options.native_frames = report_options.native_frames;
  options.rules = all_rules();
  // SARIF: paths relative to it; text, html: also where source files are looked for.
  options.source_root = absolute_source_root(report_options.source_root);
  return options;
}

// Renders into `file` (JSON, SARIF and JUnit piece by piece). A message on failure.
std::optional<std::string> write_one(const Report& report, const OutputTarget& target,
                                     const ReportOptions& report_options) {
  ReportFile file(target.path);
  if (!file.open()) return file.error();
  const bool color = target.path.empty() && target.format == ReportFormat::text &&
                     file.is_terminal() && std::getenv("NO_COLOR") == nullptr;
  const RenderOptions options = render_options(color, report_options);
  format_of(target.format).write(report, options, [&](std::string_view piece) {
    file.write(piece);
  });
  return file.close();
}

// Two targets that name the same file (or stdout twice) would overwrite or concatenate.
std::string identity_of(const std::string& path) {
  if (path == "-" || path == "/dev/stdout") return "stdout";
  std::error_code error;
  const fs::path absolute = fs::absolute(path, error);
  const fs::path resolved = fs::weakly_canonical(absolute, error);
  return error ? absolute.lexically_normal().string() : resolved.string();
}

// "xml:r.xml": a format-like prefix that is not a format is a mistake, not a file name.
bool looks_like_format_prefix(std::string_view prefix) {
  return !prefix.empty() && std::all_of(prefix.begin(), prefix.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

// Why a directory entry named *.trace cannot be a trace; empty when it is a regular file.
std::string not_a_trace_file(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return "a dangling symlink";
    if (errno == ELOOP) return "a symlink loop";
    return std::strerror(errno);
  }
  if (S_ISREG(st.st_mode)) return {};
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  return "not a regular file";
}

// The same file named twice (or through a link) is one process, read once.
void drop_repeated_files(std::vector<std::string>& traces) {
  std::set<std::pair<dev_t, ino_t>> seen;
  std::erase_if(traces, [&](const std::string& trace) {
    struct stat st;
    return stat(trace.c_str(), &st) == 0 && !seen.insert({st.st_dev, st.st_ino}).second;
  });
}

// The subdirectories `run` makes inside a --trace-dir: rank<R> (a launcher's rank)
// and run.XXXXXX (a later run, when the directory already held traces).
bool is_rank_directory(const std::string& name) {
  return name.size() > 4 && name.starts_with("rank") &&
         std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}
bool is_run_directory(const std::string& name) {
  return name.size() == 10 && name.starts_with("run.");
}

// A directory and the rank<R> subdirectories inside it: one node's traces, whether capguard ran
// inside the launcher or outside it (docs/multi-rank.md).
std::vector<std::string> trace_directories(const std::string& path) {
  std::vector<std::string> dirs{path};
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(path, error))
    if (is_rank_directory(entry.path().filename().string()) && entry.is_directory(error))
      dirs.push_back(entry.path().string());
  std::sort(dirs.begin() + 1, dirs.end());
  return dirs;
}

// A directory stands for the *.trace files directly inside it and inside its rank<R>
// subdirectories, in name order. One that also holds a run.XXXXXX of traces holds more than
// one run (the manual's recipe run twice with one --trace-dir): reading the earlier
// run's traces as this one's would pass a gate the later run fails, so it is refused.
void expand(const std::string& path, std::vector<std::string>& traces,
            std::vector<std::string>& problems) {
  std::error_code error;
  if (fs::is_directory(path, error)) {
    std::vector<std::string> found;
    for (const std::string& dir : trace_directories(path)) {
      for (const auto& entry : fs::directory_iterator(dir, error)) {
        const std::string name = entry.path().filename().string();
        if (is_run_directory(name) && entry.is_directory(error) &&
            !fs::is_empty(entry.path(), error)) {
          problems.push_back("cannot open trace: " + dir + " holds the traces of more than one run (" +
                             entry.path().string() +
                             " is a later run's, made because the directory held traces "
                             "already): name that run's own directory, or give each job its own "
                             "--trace-dir");
          continue;
        }
        if (entry.path().extension() != ".trace") continue;
        if (std::string why = not_a_trace_file(entry.path().string()); why.empty())
          found.push_back(entry.path().string());
        else
          say("warning: skipping " + entry.path().string() + ": " + why);
      }
      if (error) problems.push_back("cannot open trace: " + dir + ": " + error.message());
    }
    if (!error && found.empty())
      problems.push_back("cannot open trace: no *.trace files in " + path);
    std::sort(found.begin(), found.end());
    traces.insert(traces.end(), found.begin(), found.end());
    return;
  }
  // Without blocking: a FIFO named as a trace is refused, never waited on.
  OpenRegular why;
  struct stat st {};
  const int fd = open_regular(path, why, st);
  if (fd >= 0) close(fd);
  if (why == OpenRegular::NotRegular) {
    problems.push_back("cannot open trace: " + path + ": " +
                       (S_ISFIFO(st.st_mode) ? "a FIFO" : "not a regular file"));
    return;
  }
  if (fd < 0) {
    problems.push_back("cannot open trace: " + path + ": " + std::strerror(errno));
    return;
  }
  traces.push_back(path);
}

}  // namespace

std::optional<std::string> resolve_outputs(const ReportOptions& options,
                                           std::vector<OutputTarget>& targets) {
  targets.clear();
  for (const std::string& value : options.outputs) {
    OutputTarget target{options.format, value};
    const size_t colon = value.find(':');
    const std::string_view prefix = std::string_view(value).substr(0, colon);
    if (const auto format = colon != std::string::npos ? format_named(prefix) : std::nullopt)
      target = {*format, value.substr(colon + 1)};
    else if (colon != std::string::npos && looks_like_format_prefix(prefix))
      return "--output " + value + ": unknown format " + std::string(prefix) + " (" +
             fmt::format("{}", fmt::join(format_names(), ", ")) + "; write ./" + value +
             " for a file of that name)";
    if (target.path.empty()) return "--output " + value + ": no file name";
    for (const OutputTarget& earlier : targets)
      if (identity_of(earlier.path) == identity_of(target.path))
        return "--output " + value + ": " +
               (target.path == "-" ? std::string("stdout") : target.path) +
               " is already the destination of another -o";
    targets.push_back(target);
  }
  // Like a sanitizer, the text report goes to stderr unless told otherwise.
  if (targets.empty())
    targets.push_back({options.format, ""});
  else if (!options.quiet)
    targets.push_back({ReportFormat::text, ""});
  return std::nullopt;
}

std::optional<std::string> check_outputs_not_inputs(const std::vector<OutputTarget>& targets,
                                                    const std::vector<std::string>& paths) {
  // The files read: each trace named or found in a directory, and its .symbols companion.
  std::set<std::pair<dev_t, ino_t>> inputs;
  const auto add = [&](const std::string& file) {
    struct stat st;
    if (stat(file.c_str(), &st) == 0) inputs.insert({st.st_dev, st.st_ino});
  };
  for (const std::string& path : paths) {
    std::error_code error;
    if (fs::is_directory(path, error)) {
      for (const std::string& dir : trace_directories(path))
        for (const auto& entry : fs::directory_iterator(dir, error))
          if (entry.path().extension() == ".trace" || entry.path().extension() == ".symbols" ||
              entry.path().extension() == ".tests")
            add(entry.path().string());
    } else {
      add(path);
      add(path + ".symbols");
      if (const std::string marks = test_marks_path(path); !marks.empty()) add(marks);
    }
  }
  for (const OutputTarget& target : targets) {
    if (target.path.empty() || target.path == "-") continue;
    struct stat st;
    if (stat(target.path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        inputs.contains({st.st_dev, st.st_ino}))
      return "--output " + target.path +
             ": that is one of the input traces (or its .symbols or .tests); "
             "it would be overwritten";
  }
  return std::nullopt;
}

std::vector<std::string> analyze_traces(const std::vector<std::string>& paths,
                                        const ReportOptions& options, Analysis& analysis,
                                        bool save_symbol_caches,
                                        const CoveredTraces& covered) {
  std::vector<std::string> problems, traces;
  for (const auto& path : paths) expand(path, traces, problems);
  drop_repeated_files(traces);
  std::erase_if(traces, [&](const std::string& trace) {  // never read twice
    return is_covered(covered, trace);
  });
  analysis.rehearse_mode = options.rehearse_mode;
  PipelineOptions pipeline;
  pipeline.user_code = options.user_code;
  pipeline.source_root = absolute_source_root(options.source_root);
  pipeline.save_symbol_caches = save_symbol_caches;
  pipeline.post.default_suppressions = !options.no_default_suppressions;
  pipeline.post.suppressions = options.suppressions;
  pipeline.post.baseline = options.baseline;
  pipeline.symbol_cache = options.symbol_cache;
  pipeline.debuginfod = options.debuginfod;
  pipeline.jobs = options.jobs;
  for (auto& problem : run_pipeline(traces, pipeline, analysis, say))
    problems.push_back(std::move(problem));
  return problems;
}

bool write_outputs(const Report& report, const std::vector<OutputTarget>& targets,
                   const ReportOptions& options) {
  bool ok = true;
  for (const auto& target : targets) {
    if (auto failed = write_one(report, target, options)) {
      say(*failed);
      ok = false;
    }
  }
  return ok;
}

bool write_report(const Report& report, const std::vector<OutputTarget>& targets,
                  const ReportOptions& options, std::string_view before_summary) {
  for (const ToolProblem& problem : report.problems)
    say(problem.level == Severity::Warning ? "warning: " + problem.message : problem.message);
  if (!before_summary.empty()) say(before_summary);
  std::vector<OutputTarget> wanted;
  for (const OutputTarget& target : targets)
    if (!target.path.empty() || !report.processes.empty()) wanted.push_back(target);
  return write_outputs(report, wanted, options);
}

std::optional<std::string> check_post_process_files(const ReportOptions& options) {
  if (auto message = rules::set_rule_options(options.rule_options)) return message;
  if (auto message = check_baseline_file(options.baseline)) return message;
  std::string message;
  for (const std::string& problem : check_suppressions_file(options.suppressions))
    message += (message.empty() ? "" : "\ncapguard: ") + terminal_safe(problem);
  if (message.empty()) return std::nullopt;
  return message;
}

std::vector<std::string> format_names() {
  std::vector<std::string> names;
  for (const Format& format : kFormats) names.emplace_back(format.name);
  return names;
}

std::optional<ReportFormat> format_named(std::string_view name) {
  for (const Format& format : kFormats)
    if (format.name == name) return format.format;
  return std::nullopt;
}

const char* format_name(ReportFormat format) { return format_of(format).name.data(); }

void say(std::string_view line) {
  std::fprintf(stderr, "capguard: %s\n", terminal_safe(line).c_str());
}

}  // namespace capguard::cli
