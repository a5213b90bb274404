#include "model/who_ran.h"

#include <algorithm>
#include <charconv>

namespace capguard {
namespace {

enum class Role { Rank, LocalRank, WorldSize, Devices, Other };

struct Var {
  std::string_view name;
  Role role;
};
constexpr Var kVars[] = {
#define CAPGUARD_LAUNCHER_VAR(name, role) {#name, Role::role},
#include "trace/launcher_vars.def"
};

std::optional<uint32_t> number(std::string_view text) {
  uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::vector<std::string_view> split_devices(std::string_view list) {
  std::vector<std::string_view> devices;
  while (!list.empty()) {
    const size_t comma = std::min(list.find(','), list.size());
    if (comma != 0) devices.push_back(list.substr(0, comma));
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
  return devices;
}

}  // namespace

WhoRan who_ran_from(std::string_view host,
                    const std::vector<std::pair<std::string_view, std::string_view>>& vars) {
  WhoRan who;
  who.host = std::string(host);
  const auto value_of = [&](std::string_view name) -> const std::string_view* {
    for (const auto& [n, v] : vars)
      if (n == name) return &v;
    return nullptr;
  };
  bool devices_set = false;
  for (const Var& var : kVars) {  // the list's order is the priority
    const std::string_view* value = value_of(var.name);
    if (value == nullptr) continue;
    switch (var.role) {
      case Role::Rank:
        if (!who.rank && (who.rank = number(*value))) who.rank_from = std::string(var.name);
        break;
      case Role::LocalRank:
        if (!who.local_rank) who.local_rank = number(*value);
        break;
      case Role::WorldSize:
        if (!who.world_size) who.world_size = number(*value);
        break;
      case Role::Devices:
        devices_set = true;
        who.devices = std::string(*value);
        break;
      case Role::Other:
        break;
    }
  }
  const std::vector<std::string_view> devices = split_devices(who.devices);
  if (devices.size() == 1) {
    who.gpu = std::string(devices[0]);
  } else if (who.local_rank) {
    if (!devices_set)
      who.gpu = std::to_string(*who.local_rank);
    else if (*who.local_rank < devices.size())
      who.gpu = std::string(devices[*who.local_rank]);
  }
  return who;
}

std::string who_label(const WhoRan& who) {
  std::string details;
  if (!who.host.empty()) details = "node " + who.host;
  if (!who.gpu.empty()) details += (details.empty() ? "" : ", ") + std::string("GPU ") + who.gpu;
  if (!who.rank) return details;
  std::string label = "rank " + std::to_string(*who.rank);
  return details.empty() ? label : label + " (" + details + ")";
}

}  // namespace capguard
