// A readable listing of a graph for debugging and `onda inspect`-style output, one node a line:
//   %sum: float32[6, 4] = Add(%flat: float32[6, 4], %zeros) {axis: 0}   # adder
// Initializers print as "$name" with their dtype and shape; unknown types are left out.
#pragma once
#include <cstddef>
#include <string>

#include "graph/graph.h"

namespace onda {

// Inputs, outputs, initializer summary, then the nodes (at most `max_nodes`); subgraphs indented.
std::string graph_to_text(const Graph& graph, size_t max_nodes = static_cast<size_t>(-1));

// One attribute value: 3, 0.5, "SAME_UPPER", [1, 2], tensor int64[2], graph 'then' (4 nodes).
std::string attribute_to_text(const Attribute& attribute);

}  // namespace onda
