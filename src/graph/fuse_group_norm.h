// Plan-time fusion of GroupNorm as PyTorch exports it: nn.GroupNorm becomes
//   Reshape [N, C, ...] -> [N, G, -1] -> InstanceNormalization (per-group scale/bias)
//   -> Reshape back -> Mul (per-channel weight) -> Add (per-channel bias)
// four passes over the tensor (the Reshapes are views), of which the Mul and Add read and write the
// whole activation once more each. HTDemucs and SCNet run ~120 of these on their largest tensors.
// The fused node is one InstanceNormalization on the original [N, C, ...] tensor carrying
// `onda.num_groups`, with the group and channel affines folded into per-channel scale/bias
// initializers: scale'[c] = s[g] * w[c], bias'[c] = b[g] * w[c] + beta[c].
#pragma once
#include <cstddef>
#include <string_view>

#include "graph/graph.h"

namespace onda {

// The group count of a fused node (onda-internal attribute name, not ONNX's): the node normalizes
// x [N, C, ...] over groups of C/G channels and applies a per-channel scale and bias.
inline constexpr std::string_view kFusedGroupsAttribute = "onda.num_groups";

// Fuses every match whose intermediates nothing else reads and whose parameters are initializers;
// the Mul and the Add are optional. Needs static shapes (run after simplify_graph). Returns the
// number of fused groups.
size_t fuse_group_norms(Graph& graph);

}  // namespace onda
