// Plan-time fusion of an activation into the Conv / ConvTranspose / MatMul / Gemm that feeds it:
// Conv -> Relu becomes one Conv node whose kernels apply the activation at their store (the conv
// kernels' and the GEMM's epilogue), saving a dispatch and a full read and write of the output.
// UVR's VR networks have ~100 Conv -> Relu / LeakyRelu pairs; linear layers (Gemm -> Sigmoid mask
// heads, MatMul -> Relu) are the rest.
#pragma once
#include <cstddef>
#include <string_view>

#include "graph/graph.h"

namespace onda {

// The attributes a fused node carries (onda-internal names, not ONNX's): the activation's name as
// the kernels know it ("relu", "leaky_relu", "sigmoid", "tanh") and LeakyRelu's alpha.
inline constexpr std::string_view kFusedActivationAttribute = "onda.activation";
inline constexpr std::string_view kFusedActivationAlphaAttribute = "onda.activation_alpha";

// Fuses every default-domain Relu, LeakyRelu, Sigmoid or Tanh whose only input is the output Y of
// a default-domain Conv / ConvTranspose / MatMul / Gemm that nothing else reads (no other node,
// subgraph or graph output): that node takes over the activation's output name and attributes, the
// activation node is removed. Returns the number of fused pairs.
size_t fuse_activations(Graph& graph);

}  // namespace onda
