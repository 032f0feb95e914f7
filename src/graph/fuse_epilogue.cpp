#include "graph/fuse_epilogue.h"

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/fuse_attention.h"
#include "graph/fuse_elementwise.h"

namespace onda {
namespace {

// A normalization or GEMM whose kernel takes an epilogue: its only output is Y (LayerNormalization's
// Mean and InvStdDev omitted).
bool takes_epilogue(const Node& node) {
  if (!is_onnx_op(node, "InstanceNormalization") && !is_onnx_op(node, "LayerNormalization") &&
      !is_onnx_op(node, "MatMul") && !is_onnx_op(node, "Gemm"))
    return false;
  if (node.has_attribute(kFusedEpilogueAttribute) || node.outputs.empty() || node.outputs[0].empty())
    return false;
  for (size_t k = 1; k < node.outputs.size(); ++k)
    if (!node.outputs[k].empty()) return false;
  return true;
}

// The body computes one value of Y's shape and type per element of Y: its one input is Y, its
// constants are finite scalars (kernel literals), its output has Y's shape and type.
bool is_pointwise_of(const Graph& graph, const Graph& body, const std::string& y) {
  if (body.inputs.size() != 1 || body.outputs.size() != 1) return false;
  for (const auto& [name, tensor] : body.initializers) {
    // Expand's shape is no operand; any other constant is a folded scalar.
    bool expand_shape = false;
    for (const Node& node : body.nodes)
      expand_shape =
          expand_shape || (node.op_type == "Expand" && node.inputs.size() > 1 && node.inputs[1] == name);
    if (expand_shape) continue;
    for (double v : tensor.to_double())
      if (!std::isfinite(v) || std::abs(v) > 3.4e38) return false;
  }
  const ValueInfo* in = graph.find_value(y);
  const ValueInfo* out = body.find_value(body.outputs[0]);
  return in && out && in->dtype && in->dtype == out->dtype &&
         (*in->dtype == DType::f32 || *in->dtype == DType::f16) && static_shape_of(graph, y) &&
         static_shape_of(body, body.outputs[0]) == static_shape_of(graph, y);
}

}  // namespace

size_t fuse_epilogues(Graph& graph) {
  const ValueUses uses = value_uses(graph);

  std::vector<bool> removed(graph.nodes.size(), false);
  size_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& group = graph.nodes[i];
    if (group.domain != kOndaDomain || group.op_type != kFusedElementwiseOp || group.inputs.size() != 1)
      continue;
    const std::string& y = group.inputs[0];
    const std::optional<size_t> p = producer_read_once(uses, y);
    if (!p || !takes_epilogue(graph.nodes[*p])) continue;
    const Attribute* body = group.find_attribute(kFusedElementwiseBody);
    if (!body || body->type() != AttributeType::graph) continue;
    if (!is_pointwise_of(graph, *std::get<std::shared_ptr<const Graph>>(body->value), y)) continue;
    Node& norm = graph.nodes[*p];
    Attribute epilogue = *body;
    epilogue.name = std::string(kFusedEpilogueAttribute);
    norm.attributes.push_back(std::move(epilogue));
    norm.outputs[0] = group.outputs[0];
    graph.values.erase(y);
    removed[i] = true;
    ++fused;
  }
  erase_marked_nodes(graph, removed);
  return fused;
}

}  // namespace onda
