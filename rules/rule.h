// The rule interface. A rule reads one prepared call (what the capture model knows about it,
// including which captures its result killed) and, when the call is its business, fills a
// Draft: the message, the capture, the related sites. The replay turns drafts into findings,
// fills in everything generic (API, result, thread, stack) and links the dead captures to it.
//
// Rules are tried in table order (rule_table.cpp); the first that accepts a call makes its
// finding. Rules key on (API kind, result code): CUDA's answer is the truth, the model only
// supplies context.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/capture_model.h"
#include "model/graph_lifetime.h"
#include "model/rehearsal.h"
#include "rules/rule_ids.h"
#include "rules/rule_table.h"

namespace capguard::rules {

struct RelatedSite {
  std::string role;  // capture-begin, fork, event-record, last-work, capture-end, ...
  std::string detail;
  Site site;
};

struct Draft {
  std::string message;
  const Capture* capture = nullptr;  // the capture the finding is about
  std::vector<RelatedSite> related;

  bool empty() const { return message.empty() && capture == nullptr && related.empty(); }
};

using CallCheck = bool (*)(const Call& call, const CaptureModel& model, Draft& draft);
// A capture still open when its thread exited (thread_exited) or the process ended.
using OpenCheck = bool (*)(const Capture& capture, bool thread_exited, Draft& draft);
// Graph lifetime: a fact the graph-lifetime model concluded (graph_lifetime.h).
using GraphCheck = bool (*)(const GraphFacts& facts, Draft& draft);

// Capture rehearsal: what a rule says of a call the program ran eagerly in a
// rehearsed region, judged from what the rehearsal model saw (RehearsalFacts).
struct RehearsalWords {
  std::string_view consequence;  // what CUDA would do at a capture of the region, in words
  std::string_view category;     // the verdict list's word: synchronize, host copy, ... (an
                                 // allocation or a free is said so whatever the rule)
};
// A rule that can tell a call would break (or escape) a capture declares it: the rehearsal asks
// every rule that has one, in table order, and the first that accepts names the finding.
using RehearsalCheck = bool (*)(const RehearsalFacts& facts, RehearsalWords& words);

// Which calls on_call can accept. Nearly every call made during a capture succeeded and killed
// no capture: the replay tries only the AnyCall rules on those.
enum class Accepts : uint8_t {
  AnyCall,
  FailedCalls,  // only calls that failed (result != 0) or killed a capture (victims)
};

// The kinds of successful call an AnyCall rule can accept, one bit per ApiKind: the replay asks
// it about no other successful call (nearly every call during a capture is a launch, which most
// of them decline at once). tests/rule_table_test.cpp holds each rule to declining the rest.
using KindMask = uint32_t;
static_assert(kApiKindCount <= 32, "more ApiKinds than KindMask has bits");
constexpr KindMask kAnyKind = ~KindMask{0};
constexpr KindMask kind_bit(ApiKind kind) { return KindMask{1} << static_cast<unsigned>(kind); }

// What a rule's file writes about it beyond its rules.def row.
struct RuleText {
  std::string_view explanation;  // what happens, a minimal example, and the fix
  std::string_view fix;          // one line, printed under each finding
};

struct Rule {
  RuleId id;  // its rules.def row: id, severity, summary
  RuleText text;
  CallCheck on_call = nullptr;
  OpenCheck on_open = nullptr;
  GraphCheck on_graph = nullptr;
  Accepts accepts = Accepts::AnyCall;
  RehearsalCheck on_rehearsal = nullptr;  // rehearsable: rules/rehearsal.cpp asks it
  KindMask succeeded_kinds = kAnyKind;    // with AnyCall: what it can accept of calls that succeed

  constexpr RuleInfo info() const {
    const RuleHead& head = kRuleHeads[static_cast<size_t>(id)];
    return {head.id, head.severity, head.summary, text.explanation, text.fix};
  }
};

// All rules in table order.
std::span<const Rule* const> rule_list();
// The rules with an on_call, in table order: for a call that failed or killed a capture all of
// them, for any other call those that accept any call and a call of its kind.
std::span<const Rule* const> call_rules(bool failed_call, ApiKind kind);
// The rules with an on_rehearsal, in table order.
std::span<const Rule* const> rehearsal_rules();

// Wording shared by the rules (describe.cpp).
std::string describe_stream(const StreamKey& stream);  // "stream 0x5555", "the legacy stream"
std::string describe_capture(const Capture& capture);  // "capture #1 (stream 0x55.., global mode)"
std::string describe_capture_short(const Capture& capture);  // "capture #1, global mode"
std::string describe_result(const Call& call);  // "cudaErrorStreamCaptureUnsupported (900)"
std::string describe_site(const Site& site);    // "cudaEventRecord on thread 7"
std::string hex(uint64_t value);                // "0x55d0"
// The capture the call hit: its first victim, else the stream's, else the event's.
const Capture* capture_of(const Call& call);
void add_capture_begin(Draft& draft, const Capture& capture,
                       const std::string& role = "capture-begin");

// Graph lifetime wording (describe_graph.cpp).
// Demangled ("a kernel" when unknown); a name over 60 characters without its template arguments
// and parameters (scal_kernel<…>), so that messages naming library kernels stay readable.
std::string kernel_name(std::string_view mangled);
std::string describe_exec(const ExecState& exec);  // "graph exec #2 (0x55..), captured by ..."
std::string describe_node_ref(const ExecState& exec, const NodeRef& ref);
void add_exec_sites(Draft& draft, const ExecState& exec);  // instantiate + capture-begin

}  // namespace capguard::rules
