#include "graph/fold_rnn_output_transposes.h"

#include <string>
#include <vector>

namespace onda {
namespace {

bool is_recurrent_layer(const Node& node) {
  return is_onnx_recurrent(node) && !node.outputs.empty() && !node.outputs[0].empty() && node.attribute_int("layout", 0) == 0 &&
         !node.has_attribute(kRnnOutputPerm);
}

}  // namespace

size_t fold_rnn_output_transposes(Graph& graph) {
  const ValueUses uses = value_uses(graph);
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t folded = 0;
  for (Node& layer : graph.nodes) {
    if (!is_recurrent_layer(layer)) continue;
    const std::string& y = layer.outputs[0];
    const std::optional<size_t> reader = sole_reader(uses, y);
    if (!reader) continue;
    const Node& transpose = graph.nodes[*reader];
    if (!is_onnx_op(transpose, "Transpose") || transpose.inputs.size() != 1 || transpose.outputs.size() != 1 ||
        transpose.attribute_ints("perm", {}) != std::vector<int64_t>{0, 2, 1, 3})
      continue;
    graph.values.erase(y);
    layer.outputs[0] = transpose.outputs[0];
    layer.set_attribute(kRnnOutputPerm, std::vector<int64_t>{0, 2, 1, 3});
    removed[*reader] = true;
    ++folded;
  }
  erase_marked_nodes(graph, removed);
  return folded;
}

}  // namespace onda
