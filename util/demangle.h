// C++ symbol names as people read them ("_Z6kernelPf" -> "kernel(float*)"); anything that is
// not a mangled name comes back as it is.
#pragma once

#include <string>

namespace capguard {

std::string demangle(const char* name);

}  // namespace capguard
