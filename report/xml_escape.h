// Escaping for the XML-based outputs (JUnit, the HTML report and its SVG pictures).
#pragma once

#include <string>
#include <string_view>

namespace capguard {

// Escapes text (or, with `attribute`, an attribute value, whose newlines and tabs would be
// normalized to spaces by parsers if written raw). Characters XML 1.0 forbids (most C0
// controls) and invalid UTF-8 become U+FFFD, so the document always parses.
std::string xml_escape(std::string_view s, bool attribute = true);

}  // namespace capguard
