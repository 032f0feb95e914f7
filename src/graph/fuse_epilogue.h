// Plan-time fusion of an elementwise group into the normalization or GEMM that feeds it: where a
// FusedElementwise node (graph/fuse_elementwise.h) reads only the output of an
// InstanceNormalization, LayerNormalization, MatMul or Gemm that nothing else reads, and computes one
// value of the same shape and type per element from it (scalar constants aside), that node applies
// the group at its store (kernels/norm's and the GEMM's epilogue) and the fused node goes. MDX23C's
// 98 InstanceNorm -> GELU pairs and BS-RoFormer's 24 FFN MatMul -> GELU pairs (the bias fused
// first, graph/fuse_matmul_bias.h) then write each activation once instead of twice.
#pragma once
#include <cstddef>
#include <string_view>

#include "graph/graph.h"

namespace onda {

// The attribute (onda-internal) that holds the group's body on the normalization or GEMM node: one
// input (the node's output value), one output. A GEMM applies it after its fused activation.
inline constexpr std::string_view kFusedEpilogueAttribute = "onda.epilogue";

// Moves every such group into its producer; run after fuse_elementwise. Returns the number.
size_t fuse_epilogues(Graph& graph);

}  // namespace onda
