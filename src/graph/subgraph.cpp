#include "graph/subgraph.h"

#include <set>

#include "graph/model_error.h"
#include "graph/simplify.h"

namespace onda {

std::vector<std::string> outer_values_read(const Graph& subgraph) {
  std::set<std::string> defined(subgraph.inputs.begin(), subgraph.inputs.end());
  for (const auto& [name, tensor] : subgraph.initializers) defined.insert(name);
  for (const Node& node : subgraph.nodes) defined.insert(node.outputs.begin(), node.outputs.end());
  std::vector<std::string> read;
  std::set<std::string> seen;
  auto note = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) read.push_back(name);
  };
  for (const Node& node : subgraph.nodes)
    for (const std::string& name : values_read_by(node)) note(name);
  for (const std::string& name : subgraph.outputs) note(name);
  return read;
}

Graph specialized_subgraph(const Graph& subgraph, const Node& owner, const std::vector<SubgraphValue>& inputs,
                           const std::map<std::string, SubgraphValue>& outer_values) {
  if (inputs.size() != subgraph.inputs.size())
    throw ModelError("node " + owner.describe() + ": its subgraph '" + subgraph.name + "' has " +
                     std::to_string(subgraph.inputs.size()) + " inputs, it is given " +
                     std::to_string(inputs.size()));
  Graph graph = subgraph;
  // Declared shapes inside a subgraph describe every iteration or branch at once (often loosely):
  // the shapes come from what this specialization is given.
  for (auto& [name, info] : graph.values) {
    if (graph.is_initializer(name)) continue;
    info.shape.reset();
    info.dim_params.clear();
  }
  auto set_type = [&](const std::string& name, const SubgraphValue& value) {
    ValueInfo& info = graph.value(name);
    if (value.type) {
      info.dtype = value.type->dtype;
      info.shape = value.type->shape;
      info.dim_params.assign(value.type->shape.size(), "");
    } else {
      info.dtype.reset();
      info.shape.reset();
    }
  };
  for (size_t i = 0; i < inputs.size(); ++i) set_type(graph.inputs[i], inputs[i]);
  for (const auto& [name, value] : outer_values) {
    if (value.constant) {
      graph.set_initializer(name, *value.constant);
    } else {
      set_type(name, value);
    }
  }
  simplify_graph(graph, {});
  return graph;
}

}  // namespace onda
