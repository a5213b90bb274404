// rank-collective-mismatch: judged on a whole job, after symbolization (capture sites are
// compared across ranks by their source lines, addresses differ per process), from every
// rank's RankCollectives (model/rank_collectives.h). Run where all the ranks' facts are
// together: `capguard report`/`run` over the traces, and again over the merged node reports
// (their own findings of this rule judged only the node's ranks).
#pragma once

#include <string_view>

#include "model/report.h"

namespace capguard::rules {

// Appends the job's findings (the indexes of findings and captures stay as they are). Ranks are
// the processes whose launcher said their rank; a job is the ranks of one world size.
void find_rank_collective_mismatches(Report& report);

// Whether findings of this rule are judged across ranks (a merge judges them again).
bool judged_across_ranks(std::string_view rule);

}  // namespace capguard::rules
