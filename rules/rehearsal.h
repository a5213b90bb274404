// Capture rehearsal (issue 19): the rule each rehearsal judgement (model/rehearsal.h) is
// reported under, the same ids as real captures, and its words.
#pragma once

#include <string>
#include <string_view>

#include "model/rehearsal.h"
#include "rules/rule.h"

namespace capguard::rules {

const Rule& rehearsal_rule(RehearsalBreak what);
// "step (execution 2, global mode): cudaStreamSynchronize on stream 0x55 would ..."
std::string rehearsal_message(const RehearsalJudgement& judgement, std::string_view region,
                              uint32_t execution_number, trace::CaptureMode mode);
// What the call does, in a warm-up list's words: allocation, free, synchronize, host copy, ...
std::string_view rehearsal_category(RehearsalBreak what, const ApiInfo& api);

}  // namespace capguard::rules
