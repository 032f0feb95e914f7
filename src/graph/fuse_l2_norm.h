// Plan-time fusion of an L2 normalization as PyTorch exports F.normalize(x, dim=-1) (the RMSNorm of
// BS-RoFormer and its kin: F.normalize(x, dim=-1) * scale * gamma):
//   ReduceL2(x, last axis, keepdims) -> Clip(min = eps) or Max(eps) -> [Expand to x's shape] -> Div(x, .)
//   -> [Mul by a scalar or a vector along the last axis] -> [Mul ...]
// a reduction pass over x and an elementwise pass that reads x again (and, unfused, the chain's
// intermediates). The fused node is one LayerNormalization over the last axis carrying
// `onda.l2_norm` (the kernel divides each row by max(||row||, eps): NormalizeSpec::l2), its scale
// the product of the Muls' operands (an initializer; ones without a Mul).
#pragma once
#include <cstddef>
#include <string_view>

#include "graph/graph.h"

namespace onda {

// Marks a LayerNormalization that divides by the row's Euclidean norm instead of standardizing
// (onda-internal attribute name, not ONNX's).
inline constexpr std::string_view kL2NormAttribute = "onda.l2_norm";

// Fuses every match whose intermediates nothing else reads and whose epsilon and Mul operands are
// initializers, in models importing opset 17 or later (LayerNormalization's; older models keep the
// unfused ops). Needs static shapes (run after simplify_graph). Returns the number fused.
size_t fuse_l2_norms(Graph& graph);

}  // namespace onda
