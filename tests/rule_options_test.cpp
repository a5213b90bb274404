// Rule options (rules/rule_options.h): declared in rules.def beside their rule, set all or none
// from RULE.NAME=VALUE, reported when not the default, and used by their rule.
#include "rules/rule_options.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace capguard;
using namespace capguard::rules;

TEST_CASE("rule options: defaults, a setting, and a bad one that changes nothing") {
  REQUIRE(!set_rule_options({}));
  CHECK(option(OptionId::kChurnSteps) == 10);
  CHECK(option(OptionId::kGrowthLateKeys) == 8);
  CHECK(changed_rule_options().empty());

  REQUIRE(!set_rule_options({"graph-rebuilt-every-step.steps=3"}));
  CHECK(option(OptionId::kChurnSteps) == 3);
  const std::vector<RuleOptionValue> changed = changed_rule_options();
  REQUIRE(changed.size() == 1);
  CHECK(changed[0].rule == "graph-rebuilt-every-step");
  CHECK(changed[0].option == "steps");
  CHECK(changed[0].value == 3);
  CHECK(changed[0].default_value == 10);

  // All or none: a bad setting after a good one leaves the values in force as they were.
  for (const char* bad : {"graph-rebuilt-every-step.steps", "graph-rebuilt-every-step.steps=-1",
                          "graph-rebuilt-every-step.steps=1x", "graph-rebuilt-every-step.steps=",
                          "no-such-rule.steps=1", "graph-rebuilt-every-step.nope=1", "steps=1"}) {
    CAPTURE(bad);
    const auto message = set_rule_options({"graph-specialization-growth.late-graphs=1", bad});
    REQUIRE(message.has_value());
    CHECK(message->find(bad) != std::string::npos);
    CHECK(option(OptionId::kChurnSteps) == 3);
    CHECK(option(OptionId::kGrowthLateKeys) == 8);
  }
  REQUIRE(!set_rule_options({}));  // back to the defaults for the other tests
  CHECK(option(OptionId::kChurnSteps) == 10);
}

TEST_CASE("rule options: explain's lines name each option of the rule, none of another's") {
  const std::vector<std::string> lines = describe_rule_options("graph-specialization-growth");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].starts_with("late-graphs = 8: "));
  CHECK(describe_rule_options("sync-during-capture").empty());
}
