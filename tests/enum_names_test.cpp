// The enums' names, expanded from model/enum_names.def: each value has its own name, and the
// names parse back to the value they came from.
#include "model/enum_names.h"

#include <doctest/doctest.h>

#include <cctype>
#include <set>
#include <string>

#include "model/capture_model.h"
#include "model/rehearsal.h"

using namespace capguard;

TEST_CASE("severity names: lowest first, parse back, headings are the upper-case names") {
  const auto names = severity_names();
  REQUIRE(names.size() == 3);
  for (size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    const auto severity = severity_named(names[i]);
    REQUIRE(severity.has_value());
    CHECK(to_string(*severity) == names[i]);
    std::string upper = names[i];
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK(heading_word(*severity) == upper);
    if (i > 0) CHECK(*severity_named(names[i - 1]) < *severity);
  }
  CHECK(severity_named("fatal") == std::nullopt);
  CHECK(severity_named("") == std::nullopt);
}

TEST_CASE("capture states and modes: a distinct name for each value") {
  std::set<std::string> states;
  for (CaptureState s :
       {CaptureState::Ok, CaptureState::Invalidated, CaptureState::Failed, CaptureState::Open})
    states.insert(to_string(s));
  CHECK(states == std::set<std::string>{"ok", "invalidated", "failed", "open"});
  std::set<std::string> modes;
  for (trace::CaptureMode m :
       {trace::CaptureMode::Global, trace::CaptureMode::ThreadLocal, trace::CaptureMode::Relaxed})
    modes.insert(mode_name(m));
  CHECK(modes == std::set<std::string>{"global", "thread_local", "relaxed"});
}

TEST_CASE("rehearsal verdicts: a distinct name for each value, as JSON writes them") {
  CHECK(std::string(to_string(RehearsalVerdict::Capturable)) == "capturable");
  CHECK(std::string(to_string(RehearsalVerdict::AfterWarmup)) == "capturable_after_warmup");
  CHECK(std::string(to_string(RehearsalVerdict::NotCapturable)) == "not_capturable");
}
