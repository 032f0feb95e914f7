#include "graph/fuse_rotate_half.h"

#include <optional>
#include <string>
#include <vector>

#include "graph/fuse_attention.h"
#include "graph/fuse_elementwise.h"

namespace onda {
namespace {

// Where a Concat input comes from: output `piece` of Split node `split`, through `negations` Negs;
// `nodes` the chain's nodes between them.
struct Chain {
  size_t split = 0;
  size_t piece = 0;
  int negations = 0;
  std::vector<size_t> nodes;
};

std::optional<Chain> trace_back(const Graph& graph, const ValueUses& uses, std::string value) {
  Chain chain;
  for (int depth = 0; depth < 8; ++depth) {
    const std::optional<size_t> p = producer_read_once(uses, value);
    if (!p) return std::nullopt;
    const Node& node = graph.nodes[*p];
    if (is_onnx_op(node, "Split")) {
      chain.split = *p;
      for (size_t k = 0; k < node.outputs.size(); ++k)
        if (node.outputs[k] == value) chain.piece = k;
      return chain;
    }
    if (!(is_onnx_op(node, "Neg") || is_onnx_op(node, "Squeeze") || is_onnx_op(node, "Unsqueeze")) ||
        node.inputs.empty() || node.outputs.size() != 1)
      return std::nullopt;
    chain.negations += is_onnx_op(node, "Neg") ? 1 : 0;
    chain.nodes.push_back(*p);
    value = node.inputs[0];
  }
  return std::nullopt;
}

// The axis attribute of `node` normalized against `rank`, or nullopt when out of range.
std::optional<int64_t> axis_of(const Node& node, int64_t fallback, size_t rank) {
  int64_t axis = node.attribute_int("axis", fallback);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) return std::nullopt;
  return axis;
}

// The Split cuts the last axis of its input (static `shape`) into two halves.
bool splits_last_axis_in_halves(const Graph& graph, const Node& split, const Shape& shape) {
  if (split.outputs.size() != 2 || shape.empty() || shape.back() % 2 != 0) return false;
  const auto axis = axis_of(split, 0, shape.size());
  if (!axis || *axis != static_cast<int64_t>(shape.size()) - 1) return false;
  std::vector<int64_t> sizes;
  if (split.inputs.size() > 1 && !split.inputs[1].empty()) {
    auto it = graph.initializers.find(split.inputs[1]);
    if (it == graph.initializers.end()) return false;
    sizes = it->second.to_int64();
  } else {
    sizes = split.attribute_ints("split", {});
  }
  const int64_t half = shape.back() / 2;
  return sizes.empty() || sizes == std::vector<int64_t>{half, half};
}

}  // namespace

size_t fuse_rotate_half(Graph& graph) {
  const ValueUses uses = value_uses(graph);
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& concat = graph.nodes[i];
    if (!is_onnx_op(concat, "Concat") || concat.inputs.size() != 2 || concat.outputs.size() != 1) continue;
    const std::optional<Shape> shape = static_shape_of(graph, concat.outputs[0]);
    if (!shape || shape->empty()) continue;
    const auto axis = axis_of(concat, 0, shape->size());
    if (!axis || *axis != static_cast<int64_t>(shape->size()) - 1) continue;
    const auto first = trace_back(graph, uses, concat.inputs[0]);
    const auto second = trace_back(graph, uses, concat.inputs[1]);
    if (!first || !second || first->split != second->split || first->piece != 1 || second->piece != 0 ||
        first->negations % 2 != 1 || second->negations != 0)
      continue;
    const Node& split = graph.nodes[first->split];
    if (static_shape_of(graph, split.inputs[0]) != shape || !splits_last_axis_in_halves(graph, split, *shape))
      continue;
    // Each chain must give back its piece's shape (its Squeeze and Unsqueeze cancel).
    if (static_shape_of(graph, concat.inputs[0]) != static_shape_of(graph, split.outputs[1]) ||
        static_shape_of(graph, concat.inputs[1]) != static_shape_of(graph, split.outputs[0]))
      continue;
    Node rotate;
    rotate.name =
        concat.name.empty() ? concat.outputs[0] + "/rotate_half" : concat.name + "/onda_rotate_half";
    rotate.domain = std::string(kOndaDomain);
    rotate.op_type = std::string(kRotateHalfOp);
    rotate.inputs = {split.inputs[0]};
    rotate.outputs = concat.outputs;
    for (const Chain* chain : {&*first, &*second})
      for (size_t n : chain->nodes) {
        for (const std::string& out : graph.nodes[n].outputs) graph.values.erase(out);
        removed[n] = true;
      }
    for (const std::string& out : split.outputs) graph.values.erase(out);
    removed[first->split] = true;
    graph.nodes[i] = std::move(rotate);
    ++fused;
  }
  erase_marked_nodes(graph, removed);
  return fused;
}

size_t fold_rotate_half_into_elementwise(Graph& graph) {
  const ValueUses uses = value_uses(graph);
  std::vector<bool> removed(graph.nodes.size(), false);
  std::vector<std::pair<size_t, Node>> added;  // the views of the RotateHalfs' inputs, by reader
  size_t folded = 0;
  for (size_t f = 0; f < graph.nodes.size(); ++f) {
    if (graph.nodes[f].domain != kOndaDomain || graph.nodes[f].op_type != kFusedElementwiseOp ||
        graph.nodes[f].outputs.size() != 1)
      continue;
    const std::optional<Shape> out_shape = static_shape_of(graph, graph.nodes[f].outputs[0]);
    if (!out_shape || out_shape->empty() || out_shape->back() % 2 != 0) continue;
    std::vector<int64_t> rotated = graph.nodes[f].attribute_ints(kRotatedInputsAttribute, {});
    for (size_t k = 0; k < graph.nodes[f].inputs.size(); ++k) {
      const std::string value = graph.nodes[f].inputs[k];
      if (static_shape_of(graph, value) != out_shape || sole_reader(uses, value) != f) continue;
      std::optional<size_t> p = producer_read_once(uses, value);
      std::optional<size_t> reshape;
      if (p && is_onnx_op(graph.nodes[*p], "Reshape") && !removed[*p]) {
        reshape = p;
        p = producer_read_once(uses, graph.nodes[*p].inputs.at(0));
      }
      if (!p || removed[*p] || graph.nodes[*p].domain != kOndaDomain || graph.nodes[*p].op_type != kRotateHalfOp)
        continue;
      const std::string x = graph.nodes[*p].inputs.at(0);
      const std::optional<Shape> x_shape = static_shape_of(graph, x);
      const ValueInfo* info = graph.find_value(x);
      if (!x_shape || x_shape->empty() || x_shape->back() != 2 || !info || !info->dtype ||
          (*info->dtype != DType::f32 && *info->dtype != DType::f16))
        continue;
      std::string read = x;
      if (*x_shape != *out_shape) {  // x viewed in the reader's shape (a Reshape is a view)
        added.emplace_back(f, reshape_view(graph, x, *out_shape, *info->dtype, "pairs"));
        read = added.back().second.outputs[0];
      }
      for (const size_t n : {*p, reshape.value_or(*p)}) {
        removed[n] = true;
        graph.values.erase(graph.nodes[n].outputs.at(0));
      }
      graph.nodes[f].inputs[k] = read;
      rotated.push_back(static_cast<int64_t>(k));
      ++folded;
    }
    if (!rotated.empty()) graph.nodes[f].set_attribute(kRotatedInputsAttribute, std::move(rotated));
  }
  if (folded == 0) return 0;
  // Each view goes right before its reader (after x's producer, which the reader followed already).
  std::vector<Node> nodes;
  nodes.reserve(graph.nodes.size() + added.size());
  auto next_view = added.begin();
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (; next_view != added.end() && next_view->first == n; ++next_view) nodes.push_back(std::move(next_view->second));
    if (!removed[n]) nodes.push_back(std::move(graph.nodes[n]));
  }
  graph.nodes = std::move(nodes);
  return folded;
}

}  // namespace onda
