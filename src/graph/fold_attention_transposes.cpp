#include "graph/fold_attention_transposes.h"

#include <optional>
#include <string>

#include "graph/fuse_attention.h"

namespace onda {
namespace {

bool is_fused_attention(const Node& node) {
  return node.domain == kOndaDomain && node.op_type == kFusedAttentionOp && node.inputs.size() == 3 &&
         node.outputs.size() == 1;
}

// A rank-3 Transpose's permutation (ONNX's default reverses the dims), or nullopt.
std::optional<std::vector<int64_t>> rank3_perm(const Graph& graph, const Node& transpose) {
  if (!is_onnx_op(transpose, "Transpose") || transpose.inputs.size() != 1 || transpose.outputs.size() != 1)
    return std::nullopt;
  const std::optional<Shape> shape = static_shape_of(graph, transpose.inputs[0]);
  if (!shape || shape->size() != 3) return std::nullopt;
  std::vector<int64_t> perm = transpose.attribute_ints("perm", {2, 1, 0});
  if (perm.size() != 3) return std::nullopt;
  bool seen[3] = {false, false, false};
  for (int64_t p : perm) {
    if (p < 0 || p > 2 || seen[p]) return std::nullopt;
    seen[p] = true;
  }
  return perm;
}

}  // namespace

Shape attention_operand_shape(const Node& node, size_t input, const Shape& shape) {
  if (input > 2 || !node.has_attribute(kAttentionInputPerms[input])) return shape;
  const std::vector<int64_t> perm = node.attribute_ints(kAttentionInputPerms[input], {});
  Shape logical(perm.size());
  for (size_t i = 0; i < perm.size() && static_cast<size_t>(perm[i]) < shape.size(); ++i)
    logical[i] = shape[static_cast<size_t>(perm[i])];
  return logical;
}

size_t fold_attention_transposes(Graph& graph) {
  const ValueUses uses = value_uses(graph);
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t folded = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!is_fused_attention(graph.nodes[i])) continue;
    for (size_t input = 0; input < 3; ++input) {
      Node& attention = graph.nodes[i];
      const std::string& name = attention.inputs[input];
      const std::optional<size_t> p = name.empty() ? std::nullopt : producer_read_once(uses, name);
      if (!p || removed[*p] || attention.has_attribute(kAttentionInputPerms[input])) continue;
      const std::optional<std::vector<int64_t>> perm = rank3_perm(graph, graph.nodes[*p]);
      if (!perm) continue;
      attention.inputs[input] = graph.nodes[*p].inputs[0];
      attention.set_attribute(kAttentionInputPerms[input], *perm);
      graph.values.erase(name);
      removed[*p] = true;
      ++folded;
    }
    // The output: a Transpose that is its only reader.
    Node& attention = graph.nodes[i];
    const std::string& out = attention.outputs[0];
    const std::optional<size_t> reader = sole_reader(uses, out);
    if (!reader) continue;
    const Node& transpose = graph.nodes[*reader];
    const std::optional<std::vector<int64_t>> perm = rank3_perm(graph, transpose);
    if (!perm || removed[*reader] || attention.has_attribute(kAttentionOutputPerm)) continue;
    graph.values.erase(out);
    attention.outputs[0] = transpose.outputs[0];
    attention.set_attribute(kAttentionOutputPerm, *perm);
    removed[*reader] = true;
    ++folded;
  }
  erase_marked_nodes(graph, removed);
  return folded;
}

}  // namespace onda
