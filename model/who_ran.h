// Who ran a process, from its trace's 'h' record: the host, the rank the launcher
// gave it (torchrun, Slurm, MPI: trace/launcher_vars.def) and its GPU, and the words findings
// use for it: "rank 3 (node a17, GPU 3)".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace capguard {

struct WhoRan {
  std::string host;
  std::optional<uint32_t> rank, local_rank, world_size;
  std::string rank_from;  // the variable that gave the rank (RANK, SLURM_PROCID...)
  std::string devices;    // CUDA_VISIBLE_DEVICES as it was set ("" unset)
  // The GPU it used, as far as the environment tells: the one visible device, else the local
  // rank's (the launchers' one-GPU-per-local-rank convention, torch.cuda.set_device(local_rank)).
  std::string gpu;
};

// From the record's variables (name, value), in trace order: per role the first one that
// trace/launcher_vars.def lists and that holds a number wins.
WhoRan who_ran_from(std::string_view host,
                    const std::vector<std::pair<std::string_view, std::string_view>>& vars);

// "rank 3 (node a17, GPU 3)", "rank 3", "node a17, GPU 0", or "" when nothing is known.
std::string who_label(const WhoRan& who);

}  // namespace capguard
