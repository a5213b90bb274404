// The rule table: expanded from rules.def in priority order, each rule file taking its own row;
// the lists for the replay: a rule that says it accepts only failed calls (Rule::accepts), or
// successful calls of some kinds only (Rule::succeeded_kinds), is skipped for every other
// call, so it must decline all of them.
#include <doctest/doctest.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "engine/replay.h"
#include "model/graph_api.h"
#include "model/graph_lifetime.h"
#include "rules/rule.h"
#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

namespace {

constexpr std::string_view kApiNames[] = {
#define CAPGUARD_API(base, kind, stream) #base,
#include "trace/api_catalog.def"
#undef CAPGUARD_API
};

// Applies successful calls to `model` (the rules are not asked).
void apply(CaptureModel& model, std::vector<Ev> events) {
  uint64_t seq = 1;
  for (Ev& ev : events) {
    if (!ev.thread_set) ev.e.tid = 1;
    ev.e.seq = seq++;
    Call call;
    model.prepare(ev.e, classify_api(ev.e.api), call);
    model.apply(call, std::nullopt);
  }
}

// Model states: idle; a global capture on kS forked to kS2 by thread 1; the same in relaxed
// mode with thread 1 relaxed; a capture begun by thread 2; one on thread 1's per-thread stream.
std::vector<std::vector<Ev>> model_states() {
  return {
      {},
      {create_stream(kS, kNonBlocking), begin(kS), launch(kS), record(kE, kS), wait(kS2, kE)},
      {exchange_mode(CaptureMode::Relaxed), create_stream(kS, kNonBlocking),
       begin(kS, CaptureMode::Relaxed), record(kE, kS), wait(kS2, kE)},
      {create_stream(kS, kBlocking), begin(kS).thread(2), record(kE, kS).thread(2)},
      {begin(trace::kStreamPerThread)},
  };
}

constexpr uint64_t kNoStream = ~uint64_t{0};
constexpr uint64_t kStreams[] = {kNoStream, 0,  trace::kStreamLegacy, trace::kStreamPerThread, kS,
                                 kS2,       kS3};

// Every call of the catalog on every stream, with and without an event, from threads 1 and 2.
template <class F>
void for_each_call(F&& f) {
  for (std::string_view api : kApiNames)
    for (const uint64_t stream : kStreams)
      for (const bool with_event : {false, true})
        for (const uint32_t tid : {1u, 2u}) {
          Ev ev = call(api).thread(tid);
          if (stream != kNoStream) ev.stream(stream);
          if (with_event) ev.event(kE);
          f(ev);
        }
}

}  // namespace

TEST_CASE("each rule's file names its own rules.def row (Rule::id)") {
  const auto list = rules::rule_list();
  REQUIRE(list.size() == std::size(rules::kRuleHeads));
  for (size_t i = 0; i < list.size(); ++i) {
    CAPTURE(rules::kRuleHeads[i].id);
    CHECK(list[i]->info().id == rules::kRuleHeads[i].id);
    CHECK(list[i]->info().severity == rules::kRuleHeads[i].severity);
    CHECK(!list[i]->info().explanation.empty());
    CHECK(!list[i]->info().fix.empty());
  }
}

TEST_CASE(
    "priority order: errors, then the capture-invalidated fallback, then warnings, then notes") {
  const auto rank = [](const RuleInfo& rule) {
    if (rule.id == "capture-invalidated") return 1;
    return rule.severity == Severity::Error ? 0 : rule.severity == Severity::Warning ? 2 : 3;
  };
  const auto list = all_rules();
  REQUIRE(find_rule("capture-invalidated") != nullptr);
  for (size_t i = 1; i < list.size(); ++i) {
    CAPTURE(list[i - 1].id);
    CAPTURE(list[i].id);
    CHECK(rank(list[i - 1]) <= rank(list[i]));
  }
}

TEST_CASE("call_rules: every rule with on_call for failed calls, the AnyCall ones of a kind") {
  std::vector<const rules::Rule*> with_call;
  for (const rules::Rule* rule : rules::rule_list())
    if (rule->on_call) with_call.push_back(rule);
  const auto failed = rules::call_rules(true, ApiKind::Enqueue);
  CHECK(std::vector<const rules::Rule*>(failed.begin(), failed.end()) == with_call);
  for (size_t k = 0; k < kApiKindCount; ++k) {
    const auto kind = static_cast<ApiKind>(k);
    std::vector<const rules::Rule*> any_call;
    for (const rules::Rule* rule : with_call)
      if (rule->accepts == rules::Accepts::AnyCall &&
          (rule->succeeded_kinds & rules::kind_bit(kind)))
        any_call.push_back(rule);
    const auto other = rules::call_rules(false, kind);
    CAPTURE(to_string(kind));
    CHECK(std::vector<const rules::Rule*>(other.begin(), other.end()) == any_call);
    CHECK(any_call.size() < with_call.size());
  }
  // Launches: the escape rules, and capture-state-unknown (CUDA's word that a capture is over
  // comes on a launch too).
  CHECK(rules::call_rules(false, ApiKind::Enqueue).size() == 3);
}

TEST_CASE("a rule that call_rules leaves out for a call that succeeded declines it") {
  const std::vector<std::vector<Ev>> states = model_states();
  int judged = 0, counted = 0;
  for (size_t state = 0; state < states.size(); ++state) {
    CaptureModel model;
    apply(model, states[state]);
    for_each_call([&](Ev& ev) {
      const ApiInfo info = classify_api(ev.e.api);
      Call c;
      model.prepare(ev.e, info, c);
      if (c.result() != 0 || !c.victims.empty()) return;
      ++judged;
      // A call that only counts (CaptureModel::only_counts) is asked of no rule at all.
      const bool only_counts = model.only_counts(ev.e, info) != nullptr;
      counted += only_counts;
      const auto asked = rules::call_rules(false, c.api.kind);
      for (const rules::Rule* rule : rules::rule_list()) {
        if (!rule->on_call ||
            (!only_counts && std::find(asked.begin(), asked.end(), rule) != asked.end()))
          continue;
        rules::Draft draft;
        CAPTURE(state);
        CAPTURE(ev.e.api);
        CAPTURE(ev.e.stream);
        CAPTURE(rule->info().id);
        CHECK_FALSE(rule->on_call(c, model, draft));
      }
    });
  }
  CHECK(counted > 10);
  CHECK(judged > 1000);
}

TEST_CASE("count_work changes the model as prepare and apply do") {
  int counted = 0, per_thread = 0;  // launches on a thread's per-thread stream, by either name
  for (const std::vector<Ev>& state : model_states()) {
    for_each_call([&](Ev& ev) {
      CaptureModel shortcut, general;
      apply(shortcut, state);
      apply(general, state);
      ev.e.seq = 100;
      const ApiInfo info = classify_api(ev.e.api);
      if (!shortcut.count_work(ev.e, info)) return;
      ++counted;
      per_thread += ev.e.stream == trace::kStreamPerThread || (ev.e.stream == 0 && info.per_thread);
      Call c;
      general.prepare(ev.e, info, c);
      CHECK(c.consequence_of == nullptr);
      CHECK(c.victims.empty());
      general.apply(c, std::nullopt);
      CAPTURE(ev.e.api);
      CAPTURE(ev.e.stream);
      REQUIRE(shortcut.captures().size() == general.captures().size());
      for (size_t i = 0; i < general.captures().size(); ++i) {
        const Capture &a = *shortcut.captures()[i], &b = *general.captures()[i];
        CHECK(a.status == b.status);
        CHECK(a.cuda_id == b.cuda_id);
        REQUIRE(a.members.size() == b.members.size());
        for (size_t m = 0; m < a.members.size(); ++m) {
          CHECK(a.members[m].work == b.members[m].work);
          CHECK(a.members[m].last_work.seq == b.members[m].last_work.seq);
          CHECK(a.members[m].clock == b.members[m].clock);
        }
      }
    });
  }
  CHECK(counted > 10);
  CHECK(per_thread > 1);
}

TEST_CASE("the replay tries count_work first only where its general path would reach it") {
  int first = 0;
  for (const std::vector<Ev>& state : model_states()) {
    CaptureModel model;
    apply(model, state);
    for_each_call([&](Ev& ev) {
      const ApiInfo info = classify_api(ev.e.api);
      const GraphOp op = graph_op(info);
      CHECK_FALSE(Replay::may_count_first(ev.e, info, op, model, true));
      if (!Replay::may_count_first(ev.e, info, op, model, false)) return;
      ++first;
      CAPTURE(ev.e.api);
      // Replay::feed_rest() returns early, or feeds the graph lifetime, for these.
      CHECK(info.kind != ApiKind::ErrorReport);
      CHECK_FALSE(GraphLifetime::wants(ev.e, info, op));
      CHECK_FALSE(model.irrelevant(ev.e, info));
      ev.e.result = kErrCaptureInvalidated;  // a failure goes the general way
      CHECK_FALSE(Replay::may_count_first(ev.e, info, op, model, false));
    });
  }
  CHECK(first > 10);
}
