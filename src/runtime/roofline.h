// The profile's roofline: each profiled node's FLOPs and minimal bytes (graph/node_cost.h) set
// against the device's measured peaks (kernels/probe/device_peak.h). A node's floor is
//   max(FLOPs / peak FP32 rate, bytes / peak copy bandwidth, steps x one dependent dispatch)
// (the last for recurrent layers, whose time steps cannot overlap), and the whole model's floor is
// the sum over its nodes: the time no kernel rewrite can beat on this device without changing the
// work (fusing two nodes removes bytes, and lowers their summed floor with them).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "graph/node_cost.h"
#include "kernels/probe/device_peak.h"
#include "onda/session.h"
#include "ops/op_value.h"

namespace onda::runtime {

// The cost of one recorded node from its argument and result values (sequences and omitted values
// count as absent tensors; host constants such as DFT's axis are read).
NodeCost recorded_node_cost(const Node& node, const std::vector<ops::Value>& args,
                            const std::vector<ops::Value>& results);

// Fills `line`'s roofline fields from `cost` (the node's, summed over its runs) and `peak`.
void set_roofline(ProfileLine& line, const NodeCost& cost, const kernels::DevicePeak& peak);

// Sets `stats`' peaks and profile_floor_ms (the sum of its profile lines' floors).
void set_roofline_totals(RunStats& stats, const kernels::DevicePeak& peak);

}  // namespace onda::runtime
