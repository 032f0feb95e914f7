// Plan-time fusion of rotary embeddings' "rotate half": exporters write rotate_half(x) =
// concat(-x2, x1) along the last axis as Split, Squeeze, Neg, Unsqueeze and Concat (BS-RoFormer's
// rotary-embedding-torch: x viewed as [.., d/2, 2], pairs (x0, x1) -> (-x1, x0), 48 times; 4 dispatches
// and 5 passes over a 100 MB tensor each). The pattern becomes one onda::RotateHalf node
// (kernels/layout/rotate_half.h): one pass.
#pragma once
#include <cstddef>
#include <string_view>

#include "graph/graph.h"

namespace onda {

inline constexpr std::string_view kRotateHalfOp = "RotateHalf";  // in kOndaDomain; input x, output y

// Fuses every default-domain Concat of two values along the last axis whose inputs come from the
// two equal halves of one default-domain Split along the last axis of x (static shapes, Concat's
// output of x's shape): input 0 from the second half through an odd number of Negs, input 1 from the
// first half through none, each chain otherwise only Squeeze/Unsqueeze and read only by the next
// step. The chain's nodes go; RotateHalf(x) produces the Concat's output. Run before
// fuse_elementwise. Returns the number of fused patterns.
size_t fuse_rotate_half(Graph& graph);

// The attribute (onda-internal) on a FusedElementwise: the positions of the inputs it reads with
// their neighbouring pairs rotated (kernels::FusedElementwiseProblem::pair_rotated).
inline constexpr std::string_view kRotatedInputsAttribute = "onda.rotated_inputs";

// Folds every RotateHalf of pairs (its input's last dim is 2: BS-RoFormer's interleaved rotary
// embedding) read, directly or through a Reshape, only by one standalone FusedElementwise (the
// rotary's x cos + rotate_half(x) sin) as an input of the output's shape, into that node: it then
// reads the RotateHalf's input with its pairs rotated, and the RotateHalf's pass over the tensor
// goes. Run after fuse_epilogues (an epilogue's program has no such input). Returns the number folded.
size_t fold_rotate_half_into_elementwise(Graph& graph);

}  // namespace onda
