// A finding's stable identity across runs, shared by SARIF (partialFingerprints) and baselines:
// the same bug gives the same fingerprint whatever the pid, addresses, thread ids or event
// order of the run; moving it to another line or function gives a new one.
#pragma once

#include <string>
#include <string_view>

#include "model/report.h"

namespace capguard {

// The key under which SARIF results carry the fingerprint. Bump the version whenever
// fingerprint() changes, so that old alerts are not matched against different hashes.
inline constexpr std::string_view kFingerprintKey = "capguardFingerprint/v1";

// The frame a finding is shown at: the user frame; else the innermost frame with a file; else
// the innermost frame with a function name; nullptr when nothing was symbolized.
const Frame* anchor_frame(const Location& location);

// 16 lowercase hex digits: a hash of rule, API, and the anchor frame's function, file base name
// and line; when that frame is unsymbolized (or there is none), also the base name of its
// module (else of the innermost frame with one) and the offset in it. Deliberately not the
// message, which may contain handles and addresses.
std::string fingerprint(const Finding& finding);

// The frame whose module and offset fingerprint() hashes (see above), or nullptr when the
// finding is told apart by function, file and line (or has no module at all).
const Frame* fingerprint_offset_frame(const Finding& finding);

}  // namespace capguard
