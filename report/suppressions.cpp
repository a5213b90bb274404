#include "report/suppressions.h"

#include "util/glob.h"

#include <fstream>
#include <sstream>

#include "report/finding_filter.h"
#include "report/fingerprint.h"
#include "util/base_name.h"
#include "util/regular_file.h"

namespace capguard {

// A suppressions file is written by hand: far below this.
constexpr size_t kMaxSuppressionsBytes = size_t{16} << 20;
namespace {

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

bool has_glob_chars(std::string_view s) { return s.find_first_of("*?") != std::string_view::npos; }

// "ns::f(int) const" -> "ns::f"; "(anonymous namespace)::g()" -> "(anonymous namespace)::g".
std::string_view without_parameters(std::string_view name) {
  const size_t close = name.find_last_of(')');
  if (close == std::string_view::npos) return name;
  if (name.find_first_of("(:", close + 1) != std::string_view::npos) return name;
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) return i == 0 ? name : name.substr(0, i);
  }
  return name;
}

bool frame_matches(const Suppression& s, const Frame& frame) {
  switch (s.kind) {
    case SuppressionKind::Function:
      return !frame.function.empty() && (glob_match(s.pattern, frame.function) ||
                                         glob_match(s.pattern, without_parameters(frame.function)));
    case SuppressionKind::Source:
      return path_matches(s.pattern, frame.file);
    case SuppressionKind::Module:
      return path_matches(s.pattern, frame.module);
  }
  return false;
}

}  // namespace

std::string SuppressionError::to_string() const {
  if (line == 0) return source + ": " + message;
  return source + ":" + std::to_string(line) + ": " + message;
}

std::vector<SuppressionError> parse_suppressions(std::string_view text,
                                                 const std::string& source_name, Suppressions& out,
                                                 std::span<const RuleInfo> known_rules) {
  std::vector<SuppressionError> errors;
  size_t line_number = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view raw = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++line_number;
    const std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;

    const auto error = [&](std::string message) {
      errors.push_back({source_name, line_number, std::move(message)});
    };
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) {
      error("expected RULE:KIND:PATTERN (e.g. sync-during-capture:fun:warmup*), got '" +
            std::string(line) + "'");
      continue;
    }
    Suppression s;
    s.rule = trim(line.substr(0, first));
    const std::string_view kind = trim(line.substr(first + 1, second - first - 1));
    s.pattern = trim(line.substr(second + 1));
    s.source = source_name;
    s.line = line_number;
    s.text = line;
    if (s.rule.empty()) {
      error("missing rule id before the first ':' (use '*' for every rule)");
    } else if (!has_glob_chars(s.rule) && !find_rule_in(known_rules, s.rule)) {
      error("unknown rule '" + s.rule + "' ('capguard rules' lists them)");
    } else if (kind != "fun" && kind != "src" && kind != "mod") {
      error("unknown kind '" + std::string(kind) + "': expected fun, src or mod");
    } else if (s.pattern.empty()) {
      error("empty pattern after '" + std::string(kind) + ":'");
    } else {
      s.kind = kind == "fun"   ? SuppressionKind::Function
               : kind == "src" ? SuppressionKind::Source
                               : SuppressionKind::Module;
      out.entries.push_back(std::move(s));
    }
  }
  return errors;
}

std::vector<SuppressionError> load_suppressions(const std::string& path, Suppressions& out,
                                                std::span<const RuleInfo> known_rules) {
  // A regular file only, never blocking, bounded (--suppressions FIFO hung).
  std::string error;
  const std::optional<std::string> text = read_regular_file(path, kMaxSuppressionsBytes, error);
  if (!text) return {{path, 0, "cannot open suppressions file: " + error}};
  return parse_suppressions(*text, path, out, known_rules);
}

bool suppression_matches(const Suppression& suppression, const Finding& finding) {
  if (!glob_match(suppression.rule, finding.rule)) return false;
  // A bare '*' means "this rule everywhere": it also covers findings without a stack.
  if (suppression.pattern == "*") return true;
  for (const Frame& frame : finding.location.frames) {
    if (frame_matches(suppression, frame)) return true;
  }
  return false;
}

SuppressionStats apply_suppressions(Report& report, const Suppressions& suppressions) {
  SuppressionStats stats;
  stats.matched.assign(suppressions.entries.size(), 0);
  std::vector<bool> drop(report.findings.size(), false);
  for (size_t i = 0; i < report.findings.size(); ++i) {
    for (size_t s = 0; s < suppressions.entries.size(); ++s) {
      if (suppression_matches(suppressions.entries[s], report.findings[i])) {
        ++stats.matched[s];
        drop[i] = true;
        ++stats.removed;
        break;
      }
    }
  }
  erase_findings(report, drop);
  return stats;
}

std::string describe_suppression_stats(const Suppressions& suppressions,
                                       const SuppressionStats& stats) {
  std::string out;
  for (size_t s = 0; s < suppressions.entries.size() && s < stats.matched.size(); ++s) {
    const Suppression& e = suppressions.entries[s];
    const std::string where = e.source + ":" + std::to_string(e.line);
    if (stats.matched[s] == 0) {
      out += where + ": unused suppression '" + e.text + "' matched no finding\n";
    } else {
      out += where + ": suppression '" + e.text + "' matched " + std::to_string(stats.matched[s]) +
             (stats.matched[s] == 1 ? " finding\n" : " findings\n");
    }
  }
  return out;
}

}  // namespace capguard
