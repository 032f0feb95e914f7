// The plan step's fusions, in the one order both the main graph (Session) and each specialized
// control-flow body (GraphWalk) run them after simplify_graph.
#pragma once
#include <cstddef>
#include <span>

#include "graph/graph.h"

namespace onda {

// One fusion pass: its name (benchmarks time each) and the function, which returns how many
// rewrites it made.
struct FusionPass {
  const char* name;
  size_t (*run)(Graph& graph);
};

// Zero Pads into the convolutions that read them, linear layers' biases into their MatMuls,
// activations into their producers (after the biases, so MatMul -> Add -> Relu fuses whole), GroupNorm
// patterns, PRelus into the InstanceNorms before them, attention (then the Transposes around it),
// rotary embeddings' rotate_half (before the elementwise groups could take its Neg), then the
// elementwise groups (after attention, which absorbs the Mul/Div of its scale) and the groups that
// become a normalization's or GEMM's epilogue (which need fuse_elementwise's groups), then the
// layout changes after products that their stores take (column parts, a head split's transpose).
std::span<const FusionPass> fusion_passes();

// Every pass of fusion_passes(), in order.
void run_fusion_passes(Graph& graph);

}  // namespace onda
