// Value lifetimes over the node order, for a liveness-based memory plan: a runtime can release
// (or reuse) a value's buffer right after the last node that reads it, so peak memory follows the
// widest point of the graph instead of the sum of all intermediates.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace onda {

struct ValueLifetime {
  std::string name;
  // Index of the producing node; graph inputs are live from before node 0 (produced_by = npos).
  size_t produced_by;
  // Index of the last node reading it (its subgraphs included); npos when nothing reads it.
  size_t last_read_by;
  bool is_graph_output;  // live until the end of the run
};

constexpr size_t kBeforeFirstNode = static_cast<size_t>(-1);

// Every run-time value (graph inputs and node outputs, not initializers), in order of production.
std::vector<ValueLifetime> value_lifetimes(const Graph& graph);

// For each node index: the run-time values that are dead once that node has run (read last by it, or
// produced by it and never read), graph outputs excluded.
std::vector<std::vector<std::string>> values_released_after(const Graph& graph);

}  // namespace onda
