// A subgraph (If branch, Loop or Scan body) as a graph of its own, for the runtime to simplify and
// plan like the main graph once it knows what the subgraph is given: the types of its inputs and of
// the enclosing scopes' values it reads. ONNX names are unique across scopes, so copying the outer
// constants it reads into the copy cannot shadow anything.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/shape_inference.h"

namespace onda {

// The names a subgraph reads from enclosing scopes: read by its nodes (and their subgraphs) or
// listed as its outputs, and defined neither as its inputs, its initializers nor its nodes' outputs.
std::vector<std::string> outer_values_read(const Graph& subgraph);

// What the runtime knows of one value a subgraph is given: its type when it is a tensor (nullopt
// for a sequence), and its data when it is the same in every run (an initializer).
struct SubgraphValue {
  std::optional<TensorType> type;
  const HostTensor* constant = nullptr;
};

// A copy of `subgraph` whose inputs (in order) and outer-scope values have the given types, outer
// constants copied in as initializers (so shape arithmetic on them folds), then simplified for those
// types. ModelError when `inputs` does not match the subgraph's input count (naming `owner`).
Graph specialized_subgraph(const Graph& subgraph, const Node& owner, const std::vector<SubgraphValue>& inputs,
                           const std::map<std::string, SubgraphValue>& outer_values);

}  // namespace onda
