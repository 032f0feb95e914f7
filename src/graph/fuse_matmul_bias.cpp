#include "graph/fuse_matmul_bias.h"

#include <string>
#include <vector>

namespace onda {
namespace {

// `name` is an initializer of `dtype` holding one value per column of a [.., N] value of `rank`.
bool is_column_bias(const Graph& graph, const std::string& name, DType dtype, int64_t n, size_t rank) {
  auto it = graph.initializers.find(name);
  if (it == graph.initializers.end() || it->second.dtype() != dtype) return false;
  const Shape& shape = it->second.shape();
  if (shape.empty() || shape.size() > rank || shape.back() != n) return false;
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    if (shape[d] != 1) return false;
  return true;
}

}  // namespace

size_t fuse_matmul_bias(Graph& graph) {
  const ValueUses uses = value_uses(graph);

  std::vector<bool> removed(graph.nodes.size(), false);
  size_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& add = graph.nodes[i];
    if (!is_onnx_op(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    for (size_t side = 0; side < 2; ++side) {
      const std::string& y = add.inputs[side];
      const std::string& bias = add.inputs[1 - side];
      const std::optional<size_t> p = producer_read_once(uses, y);
      if (y.empty() || y == bias || !p) continue;
      Node& matmul = graph.nodes[*p];
      if (!is_onnx_op(matmul, "MatMul") || matmul.inputs.size() != 2 || matmul.outputs.size() != 1) continue;
      const ValueInfo* info = graph.find_value(y);
      const std::optional<Shape> shape = static_shape_of(graph, y);
      if (!info || !info->dtype || !is_float(*info->dtype) || !shape || shape->size() < 2) continue;
      if (!is_column_bias(graph, bias, *info->dtype, shape->back(), shape->size())) continue;
      matmul.inputs.push_back(bias);
      matmul.outputs[0] = add.outputs[0];
      graph.values.erase(y);
      removed[i] = true;
      ++fused;
      break;
    }
  }
  erase_marked_nodes(graph, removed);
  return fused;
}

}  // namespace onda
