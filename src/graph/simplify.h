// Graph simplification for concrete input shapes: bind the inputs' shapes, fold every node whose
// inputs are all constant (shape arithmetic chains: Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape, Range, ConstantOfShape, ...) and every If whose condition becomes constant, infer static
// dtypes and shapes of everything else, and remove nodes whose results nobody reads. Exported audio graphs
// carry hundreds of such shape nodes (htdemucs6: 190 Shape, 270 Reshape); after this the runtime sees only
// tensor work.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace onda {

struct SimplifyOptions {
  // Results of other than view ops (Reshape, Squeeze, ...) with more elements than this stay nodes,
  // so folding never turns a cheap GPU op into a large initializer.
  int64_t max_folded_elements = int64_t{1} << 16;
  bool fold_constants = true;
  bool remove_dead_nodes = true;
};

struct SimplifyReport {
  size_t folded_nodes = 0;      // replaced by initializers
  size_t inlined_branches = 0;  // If nodes with a constant condition, replaced by their branch
  size_t removed_dead_nodes = 0;
  size_t removed_initializers = 0;  // no longer read by anything
  size_t nodes_with_unknown_outputs = 0;
  std::map<std::string, size_t> unknown_by_op;  // op type -> nodes whose output types stayed unknown
};

// `input_shapes`: a concrete shape for each graph input whose declared shape is not static (and
// optionally for others, which must agree). ModelError for an unknown input name, a shape that
// contradicts the model, or a node whose inputs contradict it (naming the node).
SimplifyReport simplify_graph(Graph& graph, const std::map<std::string, Shape>& input_shapes,
                              const SimplifyOptions& options = {});

// Removes nodes whose outputs no node, subgraph or graph output reads, and initializers nobody
// reads. Returns {nodes removed, initializers removed}.
std::pair<size_t, size_t> remove_dead_nodes(Graph& graph);

}  // namespace onda
