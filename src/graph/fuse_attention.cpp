#include "graph/fuse_attention.h"

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/simplify.h"

namespace onda {
namespace {

std::optional<DType> dtype_of(const Graph& graph, const std::string& name) {
  const ValueInfo* info = graph.find_value(name);
  return info ? info->dtype : std::nullopt;
}

class AttentionMatcher {
 public:
  explicit AttentionMatcher(Graph& graph) : graph_(graph), uses_(value_uses(graph)) {}

  // The node producing `value`, if `value` is read by node `reader` only (no other node, subgraph
  // or graph output), so that absorbing the producer loses nothing.
  std::optional<size_t> private_producer(const std::string& value, size_t reader) const {
    const std::optional<size_t> p = producer_read_once(uses_, value);
    if (!p || uses_.reader(value) != reader) return std::nullopt;
    return p;
  }

  std::optional<size_t> only_reader(const std::string& value) const {
    return sole_reader(uses_, value);
  }

  // The value of a float scalar initializer, or of Pow(scalar, scalar) of two such read only by
  // node `reader` (BS-RoFormer's scale is head_dim ** -0.5 computed in the graph; constant folding
  // leaves Pow to the GPU); `pow_node` is then that Pow, absorbed with its reader.
  std::optional<double> scalar_constant(const std::string& value, size_t reader,
                                        std::optional<size_t>& pow_node) const {
    if (auto direct = float_scalar_initializer(graph_, value)) return direct;
    auto p = private_producer(value, reader);
    if (!p || !is_onnx_op(graph_.nodes[*p], "Pow") || graph_.nodes[*p].inputs.size() != 2)
      return std::nullopt;
    const auto base = float_scalar_initializer(graph_, graph_.nodes[*p].inputs[0]),
               exponent = float_scalar_initializer(graph_, graph_.nodes[*p].inputs[1]);
    const auto shape = static_shape_of(graph_, value);
    if (!base || !exponent || !shape) return std::nullopt;
    for (int64_t d : *shape)
      if (d != 1) return std::nullopt;
    const double result = std::pow(*base, *exponent);
    if (!std::isfinite(result)) return std::nullopt;
    pow_node = *p;
    return result;
  }

  // Strips Mul/Div by scalar initializers in front of `value` (read by `reader`), folding them into
  // `scale` and recording them in `absorbed`; returns the value before them.
  std::string strip_scales(std::string value, size_t reader, double& scale,
                           std::vector<size_t>& absorbed) const {
    while (true) {
      auto p = private_producer(value, reader);
      if (!p) return value;
      const Node& node = graph_.nodes[*p];
      if (!(is_onnx_op(node, "Mul") || is_onnx_op(node, "Div")) || node.inputs.size() != 2 ||
          node.outputs.size() != 1)
        return value;
      const bool divide = node.op_type == "Div";
      // Mul: either operand may be the constant; Div: only the divisor.
      std::optional<double> factor;
      std::string other;
      std::optional<size_t> pow_node;
      for (size_t c = divide ? 1 : 0; c < 2 && !factor; ++c) {
        factor = scalar_constant(node.inputs[c], *p, pow_node);
        other = node.inputs[1 - c];
      }
      if (!factor || (divide && *factor == 0) || graph_.is_initializer(other)) return value;
      // The scalar must not broadcast the other operand to a larger shape.
      if (static_shape_of(graph_, other) != static_shape_of(graph_, value) || !static_shape_of(graph_, value))
        return value;
      scale *= divide ? 1.0 / *factor : *factor;
      if (pow_node) absorbed.push_back(*pow_node);
      absorbed.push_back(*p);  // last: the chain's reader of `other`
      reader = *p;
      value = other;
    }
  }

  // The fused node replacing the pattern that ends in the Softmax at `softmax_index`, or nullopt.
  std::optional<Node> match(size_t softmax_index, std::vector<size_t>& absorbed) const {
    const Node& softmax = graph_.nodes[softmax_index];
    if (!is_onnx_op(softmax, "Softmax") || softmax.inputs.size() != 1 || softmax.outputs.size() != 1)
      return std::nullopt;
    const auto scores_shape = static_shape_of(graph_, softmax.inputs[0]);
    if (!scores_shape || scores_shape->size() < 2) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(scores_shape->size());
    // Before opset 13 Softmax flattens at `axis` (default 1): the last axis alone is the same thing.
    int64_t axis = softmax.attribute_int("axis", graph_.opset_version("") >= 13 ? -1 : 1);
    if (axis < 0) axis += rank;
    if (axis != rank - 1) return std::nullopt;
    // probs -> MatMul(probs, V)
    const auto second_index = only_reader(softmax.outputs[0]);
    if (!second_index) return std::nullopt;
    const Node& second = graph_.nodes[*second_index];
    if (!is_onnx_op(second, "MatMul") || second.inputs.size() != 2 ||
        second.inputs[0] != softmax.outputs[0] || second.inputs[1] == softmax.outputs[0])
      return std::nullopt;
    double scale = 1.0;
    std::vector<size_t> nodes{softmax_index};
    const std::string scores = strip_scales(softmax.inputs[0], softmax_index, scale, nodes);
    const size_t scores_reader = nodes.back();
    const auto first_index = private_producer(scores, scores_reader);
    if (!first_index || !is_onnx_op(graph_.nodes[*first_index], "MatMul")) return std::nullopt;
    const Node& first = graph_.nodes[*first_index];
    if (first.inputs.size() != 2 || first.inputs[0] == first.inputs[1]) return std::nullopt;
    nodes.push_back(*first_index);
    const std::string q = strip_scales(first.inputs[0], *first_index, scale, nodes);
    const size_t before_k = nodes.size();
    std::string k = strip_scales(first.inputs[1], *first_index, scale, nodes);
    const size_t k_reader = nodes.size() > before_k ? nodes.back() : *first_index;
    bool k_transposed = true;
    // K^T = Transpose(K) swapping the last two axes: read K itself.
    if (auto t = private_producer(k, k_reader); t && is_onnx_op(graph_.nodes[*t], "Transpose")) {
      const Node& transpose = graph_.nodes[*t];
      const auto perm = transpose.attribute_ints("perm", {});
      const auto k_shape = static_shape_of(graph_, k);
      bool swaps_last_two = k_shape && perm.size() == k_shape->size() && perm.size() >= 2;
      for (size_t i = 0; swaps_last_two && i < perm.size(); ++i) {
        const size_t expected = i + 2 == perm.size() ? i + 1 : i + 1 == perm.size() ? i - 1 : i;
        swaps_last_two = perm[i] == static_cast<int64_t>(expected);
      }
      if (swaps_last_two && transpose.inputs.size() == 1) {
        nodes.push_back(*t);
        k = strip_scales(transpose.inputs[0], *t, scale, nodes);
        k_transposed = false;
      }
    }
    const std::string& v = second.inputs[1];
    // Shapes: Q [.., Lq, D], K [.., Lk, D] or K^T [.., D, Lk], V [.., Lk, Dv], out [.., Lq, Dv].
    const auto q_shape = static_shape_of(graph_, q), k_shape = static_shape_of(graph_, k),
               v_shape = static_shape_of(graph_, v), out_shape = static_shape_of(graph_, second.outputs[0]);
    if (!q_shape || !k_shape || !v_shape || !out_shape) return std::nullopt;
    const size_t r = q_shape->size();
    if (r < 2 || k_shape->size() != r || v_shape->size() != r || out_shape->size() != r ||
        scores_shape->size() != r)
      return std::nullopt;
    const Shape batch(q_shape->begin(), q_shape->end() - 2);
    for (const Shape* s : {&*k_shape, &*v_shape, &*out_shape, &*scores_shape})
      if (Shape(s->begin(), s->end() - 2) != batch) return std::nullopt;
    const int64_t lq = (*q_shape)[r - 2], d = (*q_shape)[r - 1];
    const int64_t lk = (*v_shape)[r - 2], dv = (*v_shape)[r - 1];
    const Shape k_expected = k_transposed ? Shape{d, lk} : Shape{lk, d};
    if (Shape(k_shape->end() - 2, k_shape->end()) != k_expected ||
        Shape(out_shape->end() - 2, out_shape->end()) != Shape{lq, dv} ||
        Shape(scores_shape->end() - 2, scores_shape->end()) != Shape{lq, lk})
      return std::nullopt;
    if (lk < 1 || d < 1 || dv < 1 || d > kFusableMaxHeadDim || dv > kFusableMaxHeadDim) return std::nullopt;
    const auto dtype = dtype_of(graph_, q);
    if (!dtype || (*dtype != DType::f32 && *dtype != DType::f16)) return std::nullopt;
    for (const std::string& name : {k, v, second.outputs[0]})
      if (dtype_of(graph_, name) != dtype) return std::nullopt;

    Node fused;
    fused.op_type = std::string(kFusedAttentionOp);
    fused.domain = std::string(kOndaDomain);
    fused.name = (softmax.name.empty() ? second.outputs[0] : softmax.name) + "/onda_attention";
    fused.inputs = {q, k, v};
    fused.outputs = {second.outputs[0]};
    fused.set_attribute(kAttentionScale, static_cast<float>(scale));
    fused.set_attribute(kAttentionKTransposed, int64_t{k_transposed ? 1 : 0});
    absorbed = std::move(nodes);
    return fused;
  }

 private:
  Graph& graph_;
  ValueUses uses_;
};

}  // namespace

size_t fuse_attention(Graph& graph) {
  std::vector<bool> removed(graph.nodes.size(), false);
  std::vector<std::pair<size_t, Node>> replacements;  // second MatMul index -> fused node
  {
    const AttentionMatcher matcher(graph);
    std::vector<bool> taken(graph.nodes.size(), false);
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      std::vector<size_t> absorbed;
      auto fused = matcher.match(i, absorbed);
      if (!fused) continue;
      const auto second = matcher.only_reader(graph.nodes[i].outputs[0]);
      bool overlap = taken[*second];
      for (size_t a : absorbed) overlap = overlap || taken[a];
      if (overlap) continue;
      for (size_t a : absorbed) taken[a] = removed[a] = true;
      taken[*second] = true;
      replacements.emplace_back(*second, std::move(*fused));
    }
  }
  if (replacements.empty()) return 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!removed[i]) continue;
    for (const std::string& o : graph.nodes[i].outputs) graph.values.erase(o);
  }
  for (auto& [index, node] : replacements) graph.nodes[index] = std::move(node);
  erase_marked_nodes(graph, removed);
  remove_dead_nodes(graph);  // the scale initializers
  return replacements.size();
}

}  // namespace onda
