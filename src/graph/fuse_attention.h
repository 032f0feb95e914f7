// Plan-time fusion of scaled dot-product attention as exporters write it:
//   scores = MatMul(Q, K^T)           K^T from a Transpose of K, or any tensor [.., D, Lk]
//   scores = Mul/Div(scores, c)       optional; or the scale on Q or on K before the MatMul
//   probs  = Softmax(scores, last axis)
//   out    = MatMul(probs, V)
// becomes one node Attention(Q, K, V) of onda's own domain, which the fused kernel
// (kernels/attention) runs in one pass over the keys: the [.., Lq, Lk] scores (BS-RoFormer:
// 496 x 801 x 801 floats per layer) are never written. PyTorch's nn.MultiheadAttention
// (HTDemucs, MP-SENet) and hand-written attention (BS-RoFormer's `attend`) both export this way.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "graph/graph.h"

namespace onda {

// The fused node: domain kOndaDomain, op kFusedAttentionOp, inputs Q [.., Lq, D], K [.., Lk, D]
// (or K^T [.., D, Lk] when kAttentionKTransposed is 1), V [.., Lk, Dv], one output [.., Lq, Dv];
// the batch dims (..) are equal in all four. The scores are multiplied by kAttentionScale.
inline constexpr std::string_view kOndaDomain = "onda";
inline constexpr std::string_view kFusedAttentionOp = "Attention";
inline constexpr std::string_view kAttentionScale = "scale";
inline constexpr std::string_view kAttentionKTransposed = "k_transposed";

// Head dims the fused kernel holds in registers (kernels/attention: kAttentionMaxHeadDim).
inline constexpr int64_t kFusableMaxHeadDim = 256;

// Fuses every match whose intermediates nothing else reads, with static shapes, float operands of
// one dtype, equal batch dims (no broadcasting), the Softmax over the last axis and scales that are
// scalar initializers. Run after simplify_graph. Returns the number of fused attentions.
size_t fuse_attention(Graph& graph);

}  // namespace onda
