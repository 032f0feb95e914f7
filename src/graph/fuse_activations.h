// Plan-time fusion of an activation into the Conv / ConvTranspose that feeds it: Conv -> Relu
// becomes one Conv node whose kernels apply the activation at their store (the conv kernels'
// epilogue, kernels/conv ConvOptions::activation), saving a full read and write of the output.
// UVR's VR networks have ~100 Conv -> Relu / LeakyRelu pairs.
#pragma once
#include <cstddef>
#include <string_view>

#include "graph/graph.h"

namespace onda {

// The attributes a fused node carries (onda-internal names, not ONNX's): the activation's name as
// the conv kernels know it ("relu", "leaky_relu", "sigmoid", "tanh") and LeakyRelu's alpha.
inline constexpr std::string_view kFusedActivationAttribute = "onda.activation";
inline constexpr std::string_view kFusedActivationAlphaAttribute = "onda.activation_alpha";

// Fuses every default-domain Relu, LeakyRelu, Sigmoid or Tanh whose only input is the output Y of
// a default-domain Conv / ConvTranspose that nothing else reads (no other node, subgraph or graph
// output): the conv takes over the activation's output name and attributes, the activation node is
// removed. Returns the number of fused pairs.
size_t fuse_conv_activations(Graph& graph);

}  // namespace onda
