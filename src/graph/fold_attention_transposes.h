// Plan-time folding of the Transposes around a fused attention (graph/fuse_attention.h) into the
// node. PyTorch's nn.MultiheadAttention exports its heads as [L, B * H, d] views transposed to
// [B * H, L, d] before the products and back after them (HTDemucs, MP-SENet: four Transposes per
// attention, each a full copy of Q, K, V or the output). The fused kernel reads and writes its
// operands through strides (kernels::AttentionOperand), so the node takes the Transposes' inputs and
// outputs instead, with their permutations as attributes, and the copies go.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace onda {

// Attributes (onda-internal) of a fused attention node: input i's logical operand is
// Transpose(input i, perm) (rank 3); the node's output is Transpose(logical output, out perm).
inline constexpr std::string_view kAttentionInputPerms[3] = {"onda.q_perm", "onda.k_perm", "onda.v_perm"};
inline constexpr std::string_view kAttentionOutputPerm = "onda.out_perm";

// Folds every default-domain Transpose of a rank-3 tensor whose output only a fused attention node
// reads (as Q, K or V), and every one that is the only reader of such a node's output. Run after
// fuse_attention. Returns the number of Transposes folded.
size_t fold_attention_transposes(Graph& graph);

// The logical shape of operand `input` (0 Q, 1 K, 2 V) of a fused attention node whose input has
// `shape`: the shape itself without a folded permutation.
Shape attention_operand_shape(const Node& node, size_t input, const Shape& shape);

}  // namespace onda
