#include "graph/fuse_group_norm.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/broadcast.h"
#include "graph/simplify.h"

namespace onda {

size_t fuse_group_norms(Graph& graph) {
  const ValueUses u = value_uses(graph);
  // The initializer operand of a binary node whose other operand is `value`.
  auto constant_operand = [&](const Node& node, const std::string& value) -> const HostTensor* {
    if (node.inputs.size() != 2) return nullptr;
    const std::string& other = node.inputs[0] == value ? node.inputs[1] : node.inputs[0];
    if (other == value) return nullptr;
    return graph.find_initializer(other);
  };

  std::vector<bool> removed(graph.nodes.size(), false);
  size_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& norm = graph.nodes[i];
    if (removed[i] || !is_onnx_op(norm, "InstanceNormalization") || norm.inputs.size() != 3 ||
        norm.outputs.size() != 1 || norm.has_attribute(kFusedGroupsAttribute))
      continue;
    const HostTensor* group_scale = graph.find_initializer(norm.inputs[1]);
    const HostTensor* group_bias = graph.find_initializer(norm.inputs[2]);
    if (!group_scale || !group_bias) continue;
    // Reshape [N, C, ...] -> [N, G, ...] in front.
    const std::optional<size_t> before = u.producer(norm.inputs[0]);
    if (!before || !is_onnx_op(graph.nodes[*before], "Reshape") || !sole_reader(u, norm.inputs[0]))
      continue;
    const size_t split_index = *before;
    const std::string x = graph.nodes[split_index].inputs.at(0);
    const auto x_shape = static_shape_of(graph, x), grouped = static_shape_of(graph, norm.inputs[0]);
    if (!x_shape || !grouped || x_shape->size() < 2 || grouped->size() < 3) continue;
    const int64_t batch = (*x_shape)[0], channels = (*x_shape)[1], groups = (*grouped)[1];
    if ((*grouped)[0] != batch || groups <= 0 || channels % groups != 0 || group_scale->numel() != groups ||
        group_bias->numel() != groups)
      continue;
    // Reshape back to x's shape after.
    auto merge = sole_reader(u, norm.outputs[0]);
    if (!merge || !is_onnx_op(graph.nodes[*merge], "Reshape") ||
        static_shape_of(graph, graph.nodes[*merge].outputs[0]) != x_shape)
      continue;
    std::vector<size_t> absorbed{split_index, *merge};
    std::string out = graph.nodes[*merge].outputs[0];
    std::vector<double> weight(static_cast<size_t>(channels), 1.0), beta(static_cast<size_t>(channels), 0.0);
    // Optional per-channel Mul, then optional per-channel Add.
    for (const char* op : {"Mul", "Add"}) {
      auto next = sole_reader(u, out);
      if (!next || !is_onnx_op(graph.nodes[*next], op) || graph.nodes[*next].outputs.size() != 1) continue;
      const HostTensor* operand = constant_operand(graph.nodes[*next], out);
      if (!operand || operand->dtype() != group_scale->dtype()) continue;
      const auto values = per_channel_values(*operand, *x_shape);
      if (!values || static_shape_of(graph, graph.nodes[*next].outputs[0]) != x_shape) continue;
      if (std::string_view(op) == "Mul") {
        weight = *values;
      } else {
        beta = *values;
      }
      absorbed.push_back(*next);
      out = graph.nodes[*next].outputs[0];
    }
    const std::vector<double> s = group_scale->to_double(), b = group_bias->to_double();
    std::vector<double> scale(weight.size()), bias(weight.size());
    const int64_t per_group = channels / groups;
    for (int64_t c = 0; c < channels; ++c) {
      const size_t g = static_cast<size_t>(c / per_group), k = static_cast<size_t>(c);
      scale[k] = s[g] * weight[k];
      bias[k] = b[g] * weight[k] + beta[k];
    }
    const std::string base = (norm.name.empty() ? out : norm.name) + "/onda_group_norm";
    graph.set_initializer(base + "_scale", HostTensor::from_double(group_scale->dtype(), {channels}, scale));
    graph.set_initializer(base + "_bias", HostTensor::from_double(group_scale->dtype(), {channels}, bias));
    for (size_t a : absorbed) {
      for (const std::string& o : graph.nodes[a].outputs)
        if (o != out) graph.values.erase(o);
      removed[a] = true;
    }
    graph.values.erase(norm.outputs[0]);
    graph.values.erase(norm.inputs[0]);
    norm.inputs = {x, base + "_scale", base + "_bias"};
    norm.outputs = {out};
    norm.set_attribute(kFusedGroupsAttribute, groups);
    ++fused;
  }
  erase_marked_nodes(graph, removed);
  if (fused > 0) remove_dead_nodes(graph);  // the Reshapes' shapes and the folded parameters
  return fused;
}

}  // namespace onda
