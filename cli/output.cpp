#include "cli/output.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "analyzer/render.h"
#include "analyzer/symbol_cache.h"
#include "analyzer/symbolizer.h"
#include "cli/suppress.h"
#include "rules/rule_table.h"

namespace capguard::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFormats[] = {"text", "json", "sarif", "junit", "html", "dot"};

bool is_format(std::string_view name) {
  return std::find(std::begin(kFormats), std::end(kFormats), name) != std::end(kFormats);
}

// The source root as an absolute path: by default where capguard was started.
std::string absolute_source_root(const std::string& source_root) {
  std::error_code error;
  return source_root.empty() ? fs::current_path(error).string()
                             : fs::absolute(source_root, error).string();
}

std::string render(const Report& report, const std::string& format, bool color,
                   const ReportOptions& report_options) {
  RenderOptions options;
  options.color = color;
  options.source = !report_options.no_source;
  // SARIF: paths relative to it; text, html: also where source files are looked for.
  options.source_root = absolute_source_root(report_options.source_root);
  if (format == "json") return render_json(report);
  if (format == "sarif") return render_sarif(report, options);
  if (format == "junit") return render_junit(report);
  if (format == "dot") return render_dot(report);
  if (format == "html") {
    for (const RuleInfo& rule : all_rules())
      options.fixes[std::string(rule.id)] = std::string(rule.fix);
    return render_html(report, options);
  }
  return render_text(report, options);
}

bool write_atomically(const std::string& path, const std::string& content) {
  const std::string temp = path + ".tmp." + std::to_string(getpid());
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0;
  for (size_t done = 0; ok && done < content.size();) {
    const ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  const int saved = errno;
  if (fd >= 0 && close(fd) != 0) ok = false;
  if (ok && rename(temp.c_str(), path.c_str()) == 0) return true;
  const int reason = ok ? errno : saved;
  unlink(temp.c_str());
  std::fprintf(stderr, "capguard: cannot write report %s: %s\n", path.c_str(),
               std::strerror(reason));
  return false;
}

// A directory stands for the *.trace files directly inside it, in name order.
void expand(const std::string& path, std::vector<std::string>& traces,
            std::vector<std::string>& problems) {
  std::error_code error;
  if (fs::is_directory(path, error)) {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(path, error))
      if (entry.path().extension() == ".trace" && entry.is_regular_file(error))
        found.push_back(entry.path().string());
    if (error)
      problems.push_back("cannot open trace: " + path + ": " + error.message());
    else if (found.empty())
      problems.push_back("cannot open trace: no *.trace files in " + path);
    std::sort(found.begin(), found.end());
    traces.insert(traces.end(), found.begin(), found.end());
    return;
  }
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    problems.push_back("cannot open trace: " + path + ": " + std::strerror(errno));
    return;
  }
  close(fd);
  traces.push_back(path);
}

}  // namespace

std::optional<std::string> resolve_outputs(const ReportOptions& options,
                                           std::vector<OutputTarget>& targets) {
  targets.clear();
  for (const std::string& value : options.outputs) {
    OutputTarget target{options.format, value};
    const size_t colon = value.find(':');
    if (colon != std::string::npos && is_format(std::string_view(value).substr(0, colon)))
      target = {value.substr(0, colon), value.substr(colon + 1)};
    if (target.path.empty()) return "--output " + value + ": no file name";
    targets.push_back(target);
  }
  // Like a sanitizer, the text report goes to stderr unless told otherwise.
  if (targets.empty())
    targets.push_back({options.format, ""});
  else if (!options.quiet)
    targets.push_back({"text", ""});
  return std::nullopt;
}

std::vector<std::string> analyze_traces(const std::vector<std::string>& paths,
                                        const ReportOptions& options, Analysis& analysis,
                                        bool save_symbol_caches) {
  std::vector<std::string> problems, traces;
  for (const auto& path : paths) expand(path, traces, problems);
  for (const auto& trace : traces) analyze_trace(trace, analysis);
  for (const auto& error : analysis.errors)
    problems.push_back("cannot read trace: " + error.to_string());
  SymbolCache cache;  // frames resolved where the traces were recorded, when saved beside them
  for (const auto& trace : traces)
    if (auto damaged = cache.load_beside(trace))
      std::fprintf(stderr, "capguard: warning: ignoring %s\n", damaged->c_str());
  symbolize(analysis.report, analysis.modules, &cache,
            UserCode(options.user_code, absolute_source_root(options.source_root)));
  // Saved before anything is filtered: suppressions match on these frames when the traces are
  // re-analyzed where the binaries are not.
  if (save_symbol_caches)
    for (const auto& process : analysis.report.processes)
      if (auto failed = SymbolCache::save_beside(process.trace_path, process.pid, analysis.report))
        problems.push_back(*failed);
  if (!options.no_default_suppressions) apply_default_suppressions(analysis.report);
  apply_suppressions_file(options.suppressions, analysis.report);
  apply_baseline_file(options.baseline, analysis.report);
  return problems;
}

bool write_outputs(const Report& report, const std::vector<OutputTarget>& targets,
                   const ReportOptions& options) {
  bool ok = true;
  for (const auto& target : targets) {
    if (target.path.empty()) {
      const bool color = isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
      std::fputs(render(report, target.format, color && target.format == "text", options).c_str(),
                 stderr);
    } else if (target.path == "-") {
      std::fputs(render(report, target.format, false, options).c_str(), stdout);
      std::fflush(stdout);
    } else {
      ok = write_atomically(target.path, render(report, target.format, false, options)) && ok;
    }
  }
  return ok;
}

bool has_findings_at(const Report& report, const std::string& fail_on) {
  if (fail_on == "never") return false;
  const Severity threshold = fail_on == "note"      ? Severity::Note
                             : fail_on == "warning" ? Severity::Warning
                                                    : Severity::Error;
  return std::any_of(report.findings.begin(), report.findings.end(),
                     [&](const Finding& f) { return f.severity >= threshold; });
}

}  // namespace capguard::cli
