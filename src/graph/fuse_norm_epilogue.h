// Plan-time fusion of an elementwise group into the normalization that feeds it: where a
// FusedElementwise node (graph/fuse_elementwise.h) reads only the output of an
// InstanceNormalization or LayerNormalization that nothing else reads, and computes one value of
// the same shape and type per element from it (scalar constants aside), the normalization applies
// the group at its store (kernels/norm: the epilogue) and the fused node goes. MDX23C's 98
// InstanceNorm -> GELU pairs then write each ~100 MB activation once instead of twice.
#pragma once
#include <cstddef>
#include <string_view>

#include "graph/graph.h"

namespace onda {

// The attribute (onda-internal) that holds the group's body on the normalization node: one input
// (the normalized value), one output.
inline constexpr std::string_view kFusedEpilogueAttribute = "onda.epilogue";

// Moves every such group into its normalization; run after fuse_elementwise. Returns the number.
size_t fuse_norm_epilogues(Graph& graph);

}  // namespace onda
