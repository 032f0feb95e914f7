#include "runtime/roofline.h"

#include <algorithm>

namespace onda::runtime {

NodeCost recorded_node_cost(const Node& node, const std::vector<ops::Value>& args,
                            const std::vector<ops::Value>& results) {
  auto types_of = [](const std::vector<ops::Value>& values) {
    std::vector<std::optional<TensorType>> types;
    for (const ops::Value& v : values) {
      if (v.defined() && !v.is_sequence())
        types.push_back(TensorType{v.dtype(), v.shape()});
      else
        types.push_back(std::nullopt);
    }
    return types;
  };
  std::vector<const HostTensor*> constants;
  for (const ops::Value& v : args) constants.push_back(v.host.defined() ? &v.host : nullptr);
  return node_cost(node, types_of(args), types_of(results), constants);
}

void set_roofline(ProfileLine& line, const NodeCost& cost, const kernels::DevicePeak& peak) {
  line.flops = cost.flops;
  line.bytes = cost.bytes;
  line.sequential_steps = cost.sequential_steps;
  line.cost_modeled = cost.modeled;
  line.latency_floor_ms = static_cast<double>(cost.sequential_steps) * peak.dependent_dispatch_ms;
  const double compute_ms = peak.flops_per_second > 0 ? 1e3 * cost.flops / peak.flops_per_second : 0.0;
  const double memory_ms = peak.bytes_per_second > 0 ? 1e3 * cost.bytes / peak.bytes_per_second : 0.0;
  line.floor_ms = std::max({compute_ms, memory_ms, line.latency_floor_ms});
}

void set_roofline_totals(RunStats& stats, const kernels::DevicePeak& peak) {
  stats.peak_flops_per_second = peak.flops_per_second;
  stats.peak_bytes_per_second = peak.bytes_per_second;
  stats.dependent_dispatch_ms = peak.dependent_dispatch_ms;
  stats.profile_floor_ms = 0;
  for (const ProfileLine& line : stats.profile) stats.profile_floor_ms += line.floor_ms;
}

}  // namespace onda::runtime
