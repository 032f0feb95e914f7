// A graph node built in a test (graph/graph.h), for the graph passes' tests that lay out a few nodes
// by hand.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace onda::test {

inline Node graph_node(const std::string& op, std::vector<std::string> inputs,
                       std::vector<std::string> outputs) {
  Node n;
  n.op_type = op;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

// Declares `name` a float32 value of `shape` in `graph` (what a pass reads of a value it matches).
inline void declare_f32(Graph& graph, const std::string& name, const Shape& shape) {
  ValueInfo info;
  info.name = name;
  info.dtype = DType::f32;
  info.shape = shape;
  graph.values[name] = info;
}

// Sets `name` to an int64 vector initializer (a Reshape's or Split's constant operand).
inline void set_ints(Graph& graph, const std::string& name, const std::vector<int64_t>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  graph.set_initializer(name, HostTensor::from_values<int64_t>({n}, values));
}

}  // namespace onda::test
