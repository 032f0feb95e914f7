// Plan-time fusion of a residual connection into the GEMM that feeds it: y = MatMul/Gemm(...), then
// out = y + x (an Add, or a FusedElementwise group of y and x alone) where x is a tensor of the
// output's shape computed before. The GEMM reads x at each element it stores (its epilogue's second
// input, kernels/gemm/gemm_epilogue.h) and writes `out` directly, so y is never written and read
// back. Transformers export one per attention and one per feed-forward block: MP-SENet's 16 (after a
// Gemm, through a Reshape of its 2-D output), BS-RoFormer's 48 (407 MB each for the FFN).
#pragma once
#include <cstddef>

#include "graph/graph.h"

namespace onda {

// Fuses every default-domain Add with two inputs, and every FusedElementwise with two inputs (scalar
// constants aside) whose result has their shape and dtype, where one input is the output of a default-domain MatMul or Gemm without a fused
// epilogue that nothing else reads (directly, or through one Reshape that nothing else reads), and
// the other (the residual) has the output's static shape and float dtype and does not depend on the
// GEMM. The GEMM takes the residual as input 3 (viewed in its own output shape by a new Reshape when
// the sum was through one) and the sum as its epilogue body; the sum node goes. Run after
// fuse_epilogues. Returns the number fused.
size_t fuse_residual_adds(Graph& graph);

}  // namespace onda
