// Capture rehearsal: which rule a rehearsed call would break, asked of the rules that
// declare Rule::on_rehearsal (the same ids as real captures), and the finding's words.
#pragma once

#include <string>
#include <string_view>

#include "model/rehearsal.h"
#include "rules/rule.h"

namespace capguard::rules {

// The first rule, in table order, whose on_rehearsal accepts the facts (its words in `words`);
// null when the call would break nothing.
const Rule* rehearsal_rule(const RehearsalFacts& facts, RehearsalWords& words);
// "step (execution 2, global mode): cudaStreamSynchronize on stream 0x55 would ..."
std::string rehearsal_message(const RehearsalFacts& facts, const RehearsalWords& words,
                              std::string_view region, uint32_t execution_number);
// What the call does, in a warm-up list's words: allocation, free, then the rule's word.
std::string_view rehearsal_category(const RehearsalWords& words, const ApiInfo& api);

// Whether a capture of the region would prohibit an unsafe call (allocation, free, pinning):
// the calling thread's interaction mode decides (cudaThreadExchangeStreamCaptureMode): relaxed
// allows everything; thread_local prohibits only the capturing thread's own calls.
bool capture_prohibits_unsafe(const RehearsalFacts& facts);
// The region's thread puts work on (or records an event on) the legacy stream while the region
// runs on another: it escapes a non-blocking capture and breaks a blocking one.
bool escapes_to_legacy_stream(const RehearsalFacts& facts);

}  // namespace capguard::rules
