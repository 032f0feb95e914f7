#include "graph/fuse_l2_norm.h"

#include <optional>
#include <string>
#include <vector>

#include "graph/simplify.h"

namespace onda {
namespace {

// Whether ReduceL2 reduces only the last axis of an input of rank `rank`, keeping it.
bool reduces_last_axis(const Graph& graph, const Node& reduce, size_t rank) {
  if (reduce.attribute_int("keepdims", 1) != 1 || reduce.attribute_int("noop_with_empty_axes", 0) != 0) return false;
  std::vector<int64_t> axes;
  if (reduce.inputs.size() > 1 && !reduce.inputs[1].empty()) {  // opset 18: axes as an input
    const HostTensor* t = graph.find_initializer(reduce.inputs[1]);
    if (!t) return false;
    axes = t->to_int64();
  } else {
    axes = reduce.attribute_ints("axes", {});
  }
  const int64_t last = static_cast<int64_t>(rank) - 1;
  return axes.size() == 1 && (axes[0] == last || axes[0] == -1);
}

}  // namespace

size_t fuse_l2_norms(Graph& graph) {
  // The fused node is a LayerNormalization, which exists from opset 17.
  if (graph.opset_version("") < 17) return 0;
  const ValueUses u = value_uses(graph);
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& reduce = graph.nodes[i];
    if (removed[i] || !is_onnx_op(reduce, "ReduceL2") || reduce.outputs.size() != 1) continue;
    const std::string x = reduce.inputs.at(0);
    const auto x_shape = static_shape_of(graph, x);
    const auto info = graph.values.find(x);
    if (!x_shape || x_shape->empty() || info == graph.values.end() || !info->second.dtype ||
        !is_float(*info->second.dtype) || !reduces_last_axis(graph, reduce, x_shape->size()))
      continue;
    const DType x_dtype = *info->second.dtype;
    const int64_t row = x_shape->back();
    // Clip(norm, eps) (min as an input: opset >= 11) or Max(norm, eps).
    auto clip = sole_reader(u, reduce.outputs[0]);
    if (!clip) continue;
    const Node& floor = graph.nodes[*clip];
    std::optional<double> epsilon;
    if (is_onnx_op(floor, "Clip") && floor.inputs.at(0) == reduce.outputs[0]) {
      if (floor.inputs.size() == 2 || (floor.inputs.size() == 3 && floor.inputs[2].empty()))
        epsilon = float_scalar_initializer(graph, floor.inputs[1]);
    } else if (is_onnx_op(floor, "Max") && floor.inputs.size() == 2) {
      epsilon = float_scalar_initializer(graph, floor.inputs[floor.inputs[0] == reduce.outputs[0] ? 1 : 0]);
    }
    if (!epsilon || !(*epsilon >= 0) || floor.outputs.size() != 1) continue;
    std::vector<size_t> absorbed{i, *clip};
    std::string denominator = floor.outputs[0];
    auto next = sole_reader(u, denominator);
    if (next && is_onnx_op(graph.nodes[*next], "Expand") && graph.nodes[*next].inputs.at(0) == denominator &&
        static_shape_of(graph, graph.nodes[*next].outputs.at(0)) == x_shape) {
      absorbed.push_back(*next);
      denominator = graph.nodes[*next].outputs[0];
      next = sole_reader(u, denominator);
    }
    if (!next || !is_onnx_op(graph.nodes[*next], "Div") || graph.nodes[*next].inputs.size() != 2 ||
        graph.nodes[*next].inputs[0] != x || graph.nodes[*next].inputs[1] != denominator ||
        static_shape_of(graph, graph.nodes[*next].outputs.at(0)) != x_shape)
      continue;
    absorbed.push_back(*next);
    std::string out = graph.nodes[*next].outputs[0];
    // Muls by scalars or vectors along the last axis: the scale.
    std::vector<double> scale(static_cast<size_t>(row), 1.0);
    for (int m = 0; m < 2; ++m) {
      auto mul = sole_reader(u, out);
      if (!mul || !is_onnx_op(graph.nodes[*mul], "Mul") || graph.nodes[*mul].inputs.size() != 2 ||
          static_shape_of(graph, graph.nodes[*mul].outputs.at(0)) != x_shape)
        break;
      const Node& node = graph.nodes[*mul];
      const std::string& other = node.inputs[0] == out ? node.inputs[1] : node.inputs[0];
      const HostTensor* operand = other == out ? nullptr : graph.find_initializer(other);
      if (!operand || operand->dtype() != x_dtype) break;
      // A scalar, or [row] / [1, ..., 1, row] of no higher rank than x.
      const Shape& s = operand->shape();
      bool along_row = s.size() <= x_shape->size() && (operand->numel() == 1 || (!s.empty() && s.back() == row));
      for (size_t d = 0; d + 1 < s.size(); ++d) along_row = along_row && s[d] == 1;
      if (!along_row) break;
      const std::vector<double> values = operand->to_double();
      for (size_t k = 0; k < scale.size(); ++k) scale[k] *= values.size() == 1 ? values[0] : values[k];
      absorbed.push_back(*mul);
      out = node.outputs[0];
    }
    const std::string name = (reduce.name.empty() ? out : reduce.name) + "/onda_l2_norm";
    graph.set_initializer(name + "_scale", HostTensor::from_double(x_dtype, {row}, scale));
    for (size_t a : absorbed) {
      for (const std::string& o : graph.nodes[a].outputs)
        if (o != out) graph.values.erase(o);
      removed[a] = true;
    }
    Node norm;
    norm.op_type = "LayerNormalization";
    norm.name = name;
    norm.inputs = {x, name + "_scale"};
    norm.outputs = {out};
    norm.set_attribute("axis", int64_t{-1});
    norm.set_attribute("epsilon", static_cast<float>(*epsilon));
    norm.set_attribute(kL2NormAttribute, int64_t{1});
    // In the place of the chain's last node, where every input is ready.
    graph.nodes[absorbed.back()] = std::move(norm);
    removed[absorbed.back()] = false;
    ++fused;
  }
  erase_marked_nodes(graph, removed);
  if (fused > 0) remove_dead_nodes(graph);  // the folded Muls' operands, the Expand's shape
  return fused;
}

}  // namespace onda
