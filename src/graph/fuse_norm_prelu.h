// Plan-time fusion of a PRelu into the InstanceNormalization that feeds it: speech enhancement
// networks (MP-SENet's 16 Conv -> InstanceNorm -> PRelu blocks, DCCRN-style encoders) follow each
// normalization with a per-channel PRelu, which otherwise reads and writes the whole activation
// once more. The normalization indexes its scale and bias per channel; the slope, indexed the same
// way, is applied at its store (kernels::NormalizeProblem::slope), before any fused epilogue.
#pragma once
#include <cstddef>
#include <string_view>

#include "graph/graph.h"

namespace onda {

// The attribute (onda-internal) marking a normalization whose input 3 is a fused PRelu's slope.
inline constexpr std::string_view kFusedPreluAttribute = "onda.prelu";

// Fuses every default-domain PRelu whose X is the output of a default-domain InstanceNormalization
// (plain, or a fused GroupNorm with per-channel affine) that nothing else reads, whose slope is an
// initializer holding one value or one per channel (shape [C, 1, ...] broadcast against [N, C, ...]).
// Run before fuse_elementwise, which would otherwise group the PRelu with its successors. Returns the
// number fused.
size_t fuse_norm_prelu(Graph& graph);

}  // namespace onda
