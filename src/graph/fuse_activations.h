// Plan-time fusion of an activation into the Conv / ConvTranspose / MatMul / Gemm / LSTM / GRU / RNN
// that feeds it: Conv -> Relu becomes one Conv node whose kernels apply the activation at their
// store (the conv kernels' and the GEMM's epilogue, the recurrent cell's store of Y), saving a
// dispatch and a full read and write of the output. UVR's VR networks have ~100 Conv -> Relu /
// LeakyRelu pairs; linear layers (Gemm -> Sigmoid mask heads, MatMul -> Relu) and MP-SENet's GRU ->
// Reshape -> LeakyRelu (the Reshape of PyTorch's export in between) are the rest.
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
// subgraph or graph output), or a recurrent layer's Y that only a Reshape reads, read in turn only by
// the activation: that node takes the activation's attributes and (or its Reshape) its output name,
// the activation node is removed. Returns the number of fused pairs.
size_t fuse_activations(Graph& graph);

}  // namespace onda
