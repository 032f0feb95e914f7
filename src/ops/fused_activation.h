// The activation fused into a Conv / ConvTranspose / MatMul / Gemm node at plan time
// (graph/fuse_activations.h), as the kernels' epilogue knows it.
#pragma once
#include "graph/graph.h"
#include "kernels/gemm/gemm_epilogue.h"

namespace onda::ops {

struct FusedActivation {
  kernels::gemm::Activation activation = kernels::gemm::Activation::none;
  float alpha = 0.01f;  // LeakyRelu's negative slope
};

// None when the node carries no fused activation; a ModelError naming the node for an unknown one.
FusedActivation fused_activation_of(const Node& node);

// The GEMM epilogue that applies it (alpha and beta left at 1).
kernels::gemm::GemmEpilogue fused_epilogue(const Node& node);

}  // namespace onda::ops
