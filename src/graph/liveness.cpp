#include "graph/liveness.h"

#include <set>
#include <unordered_map>

namespace onda {

std::vector<ValueLifetime> value_lifetimes(const Graph& graph) {
  std::vector<ValueLifetime> lifetimes;
  std::unordered_map<std::string, size_t> index;
  const std::set<std::string> outputs(graph.outputs.begin(), graph.outputs.end());
  auto add = [&](const std::string& name, size_t producer) {
    if (name.empty() || graph.is_initializer(name) || index.count(name)) return;
    index.emplace(name, lifetimes.size());
    lifetimes.push_back({name, producer, kBeforeFirstNode, outputs.count(name) != 0});
  };
  for (const std::string& input : graph.inputs) add(input, kBeforeFirstNode);
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    for (const std::string& output : graph.nodes[n].outputs) add(output, n);
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    for (const std::string& read : values_read_by(graph.nodes[n])) {
      auto found = index.find(read);
      if (found != index.end()) lifetimes[found->second].last_read_by = n;
    }
  return lifetimes;
}

std::vector<std::vector<std::string>> values_released_after(const Graph& graph) {
  std::vector<std::vector<std::string>> released(graph.nodes.size());
  for (const ValueLifetime& lifetime : value_lifetimes(graph)) {
    if (lifetime.is_graph_output) continue;
    const size_t step =
        lifetime.last_read_by != kBeforeFirstNode ? lifetime.last_read_by : lifetime.produced_by;
    if (step != kBeforeFirstNode) released[step].push_back(lifetime.name);
  }
  return released;
}

}  // namespace onda
