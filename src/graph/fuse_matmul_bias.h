// Plan-time fusion of a linear layer's bias into its MatMul: MatMul -> Add(bias) becomes one
// MatMul node with the bias as a third input, which the GEMM adds at its store (its epilogue's
// addend) instead of a separate pass over the product. PyTorch exports nn.Linear over 3-D inputs
// this way (BS-RoFormer: 282 such pairs, its FFN products 407 MB each); the activation that often
// follows is then fused too (graph/fuse_activations.h), and a longer elementwise tail becomes the
// GEMM's epilogue (graph/fuse_epilogue.h).
#pragma once
#include <cstddef>

#include "graph/graph.h"

namespace onda {

// Fuses every default-domain MatMul with two inputs whose output Y is read only by one
// default-domain Add whose other operand is a float initializer of Y's dtype with one value per
// output column: shape [N] or [1, .., 1, N] of at most Y's rank, N the last dim of Y (static).
// The MatMul takes the Add's output name and the bias as input 2; the Add is removed. Run before
// fuse_activations. Returns the number of fused pairs.
size_t fuse_matmul_bias(Graph& graph);

}  // namespace onda
