// Plan-time fusion of the elementwise chains exporters write: a connected group of elementwise
// nodes whose intermediate values nothing outside the group reads becomes one node
// FusedElementwise of onda's own domain, which the fused kernel (kernels/elementwise/
// fused_elementwise.h) runs in one dispatch: every output element is computed from the group's
// inputs through its ops in registers. MDX23C's 99 exact GELUs (Div, Erf, Add, Mul, Mul over conv
// outputs of ~100 MB each), BS-RoFormer's RMSNorm tails (Clip, Expand, Div, Mul, Mul), rotary
// embeddings and gates, HTDemucs's GELUs and layer scales: each group was one full read and write
// of a large tensor per op.
//
// The fused node keeps the group's nodes as they were, in a subgraph attribute `body` whose inputs
// are the fused node's inputs (the values the group reads from outside, scalar constants excepted)
// and whose initializers are the scalar constants it reads (folded into the kernel's uniforms) and
// Expand's shapes; its one output is the group's exit (the only member read from outside).
#pragma once
#include <cstddef>
#include <string_view>

#include "graph/graph.h"

namespace onda {

inline constexpr std::string_view kFusedElementwiseOp = "FusedElementwise";  // in kOndaDomain
inline constexpr std::string_view kFusedElementwiseBody = "body";

// The most inputs of one fused node (the kernel's kMaxFusedInputs: WebGPU's 8 storage buffers per
// stage, one the output), and the most nodes in one group (a bound on the generated shader).
inline constexpr size_t kMaxFusedElementwiseInputs = 7;
inline constexpr size_t kMaxFusedElementwiseNodes = 32;

// Fuses every group of two or more default-domain elementwise nodes (the unary and binary math and
// logic ops, Where, Cast, Clip with constant bounds, Pow, 2-input Sum/Max/Min, Expand to a constant
// shape) with static shapes and float or bool results, where each member but the exit is read only
// by members (no other node, subgraph or graph output), that read at least one value computed at
// run time. Groups stay within the limits above (a larger chain becomes several nodes). Run after
// simplify_graph and the other fusions (fuse_attention matches the Mul/Div it absorbs). Returns the
// number of fused nodes made.
size_t fuse_elementwise(Graph& graph);

}  // namespace onda
