// C++ names as people read them in a report: template arguments as <…>, lambdas as {lambda},
// and, on request, no parameter list. Full names stay in JSON, SARIF and HTML's hover.
#pragma once

#include <string>
#include <string_view>

namespace capguard {

// A function name for reading: template arguments as <…>, lambdas as {lambda}, and, with
// `drop_parameters`, no parameter list.
std::string short_function_name(std::string_view function, bool drop_parameters = false);

// A demangled kernel's name for reading: short_function_name without parameters, and without
// the return type ("void ") templates put before it.
std::string short_kernel_name(std::string_view demangled);

}  // namespace capguard
