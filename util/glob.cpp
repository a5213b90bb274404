#include "util/glob.h"

#include "util/base_name.h"

namespace capguard {

bool path_matches(std::string_view glob, std::string_view path) {
  if (path.empty()) return false;
  if (glob.find('/') == std::string_view::npos) return glob_match(glob, base_name(path));
  return glob_match(glob, path);
}

}  // namespace capguard
