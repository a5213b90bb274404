#include "util/cpp_names.h"

namespace capguard {

std::string short_function_name(std::string_view function, bool drop_parameters) {
  std::string out;
  int angle = 0, paren = 0;
  for (size_t i = 0; i < function.size(); ++i) {
    const char c = function[i];
    // "operator<", "operator<<", "operator->" are names, not template brackets.
    if ((c == '<' || c == '>') && i >= 8 && function.substr(i - 8, 8) == "operator") {
      if (angle == 0 && !(drop_parameters && paren > 0)) out += c;
      continue;
    }
    if (c == '-' && i + 1 < function.size() && function[i + 1] == '>') {  // "->" in a lambda
      if (angle == 0 && !(drop_parameters && paren > 0)) out += "->";
      ++i;
      continue;
    }
    // A namespace, not a parameter list: dropped with its "::" where parameters are dropped.
    if (function.substr(i).starts_with("(anonymous namespace)")) {
      constexpr std::string_view kAnonymous = "(anonymous namespace)";
      const bool dropped = drop_parameters && function.substr(i + kAnonymous.size(), 2) == "::";
      if (angle == 0 && !(drop_parameters && paren > 0) && !dropped) out += kAnonymous;
      i += kAnonymous.size() - 1 + (dropped ? 2 : 0);
      continue;
    }
    if (function.substr(i).starts_with("{lambda(")) {  // {lambda(int)#1} -> {lambda}
      const size_t close = function.find('}', i);
      if (close != std::string_view::npos) {
        if (angle == 0 && !(drop_parameters && paren > 0)) out += "{lambda}";
        i = close;
        continue;
      }
    }
    if (c == '<') {
      if (angle++ == 0 && !(drop_parameters && paren > 0)) out += "<…>";
      continue;
    }
    if (c == '>') {
      if (angle > 0) --angle;
      continue;
    }
    if (angle > 0) continue;
    if (c == '(' && i + 1 < function.size() && function[i + 1] == ')' &&
        out.ends_with("operator")) {
      out += "()";  // operator()(...): the name, then its parameters
      ++i;
      continue;
    }
    if (c == '(') ++paren;
    if (drop_parameters && (paren > 0 || c == ')')) {
      if (c == ')' && paren > 0) --paren;
      continue;
    }
    if (c == ')' && paren > 0) --paren;
    out += c;
  }
  // Drop what follows the parameters (" const", " [clone .isra.0]") when they are dropped.
  if (drop_parameters) {
    if (const size_t clone = out.find(" [clone"); clone != std::string::npos) out.erase(clone);
    while (out.ends_with(" const") || out.ends_with(" ")) out.erase(out.rfind(' '));
  }
  return out;
}

std::string short_kernel_name(std::string_view demangled) {
  std::string out = short_function_name(demangled, /*drop_parameters=*/true);
  if (out.starts_with("void ")) out.erase(0, 5);  // a kernel's return type says nothing
  return out;
}

}  // namespace capguard
