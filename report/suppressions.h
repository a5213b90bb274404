// Suppressions: a text file of findings to ignore, in the spirit of sanitizer and valgrind
// suppression files. Grammar (docs/suppressions.md has examples):
//
//   file  := { line '\n' }
//   line  := blank | '#' comment | RULE ':' KIND ':' PATTERN
//   RULE  := a rule id, or a glob over rule ids ('*' = every rule)
//   KIND  := 'fun' (a function in the culprit's stack)
//          | 'src' (a source file in the culprit's stack)
//          | 'mod' (a loaded module: executable or shared library, in the culprit's stack)
//   PATTERN := glob: '*' any run of characters (including '/'), '?' one character
//
// A pattern of just '*' matches every finding of the rule, even one without a stack.
// Everything after the second ':' is the pattern, so C++ names (ns::f) need no quoting.
// A 'src'/'mod' pattern without '/' is matched against the base name, with '/' against the
// whole path. A 'fun' pattern is matched against the full name and against the name without
// its parameter list ("ns::f" matches "ns::f(int)").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "model/report.h"
#include "model/rule_info.h"
#include "util/glob.h"

namespace capguard {

enum class SuppressionKind { Function, Source, Module };

struct Suppression {
  std::string rule;  // id or glob
  SuppressionKind kind = SuppressionKind::Function;
  std::string pattern;
  std::string source;  // where it was written: file and line, for messages
  size_t line = 0;
  std::string text;  // the line as written, trimmed
};

struct Suppressions {
  std::vector<Suppression> entries;
};

struct SuppressionError {
  std::string source;
  size_t line = 0;  // 0 when not about a line (cannot open the file)
  std::string message;
  std::string to_string() const;  // "ci.supp:3: unknown kind 'func': expected fun, src or mod"
};

// Appends the suppressions in `text` to `out`; returns every malformed line (empty = success).
// `known_rules`: the rule ids a line may name (other than globs such as '*').
std::vector<SuppressionError> parse_suppressions(std::string_view text,
                                                 const std::string& source_name, Suppressions& out,
                                                 std::span<const RuleInfo> known_rules);
std::vector<SuppressionError> load_suppressions(const std::string& path, Suppressions& out,
                                                std::span<const RuleInfo> known_rules);


bool suppression_matches(const Suppression& suppression, const Finding& finding);

struct SuppressionStats {
  std::vector<size_t> matched;  // per Suppressions::entries, findings it removed
  size_t removed = 0;
};

// Removes every finding matched by some suppression (each is counted for the first entry that
// matches it) and keeps captures' root_cause indexes consistent.
SuppressionStats apply_suppressions(Report& report, const Suppressions& suppressions);

// Lines for the user, one per suppression: how many findings each one suppressed, and the
// ones that matched nothing (stale entries worth deleting). Empty when there are none.
std::string describe_suppression_stats(const Suppressions& suppressions,
                                       const SuppressionStats& stats);

}  // namespace capguard
