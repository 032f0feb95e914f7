#include "graph/fuse_activations.h"

#include <map>
#include <string>

namespace onda {
namespace {

// The kernels' name for an ONNX activation op, or "" if it cannot be fused.
std::string fusable_activation(const Node& node) {
  if (!canonical_domain(node.domain).empty() || node.inputs.size() != 1 || node.outputs.size() != 1)
    return "";
  if (node.op_type == "Relu") return "relu";
  if (node.op_type == "LeakyRelu") return "leaky_relu";
  if (node.op_type == "Sigmoid") return "sigmoid";
  if (node.op_type == "Tanh") return "tanh";
  return "";
}

// A node whose kernels apply an activation at the store of its output 0: Conv, ConvTranspose, MatMul,
// Gemm, and the recurrent layers' Y (not their states, outputs 1 and 2).
bool takes_activation(const Node& node) {
  if (node.has_attribute(kFusedActivationAttribute) || node.outputs.empty() || node.outputs[0].empty())
    return false;
  if (is_onnx_recurrent(node)) return true;
  return canonical_domain(node.domain).empty() &&
         (node.op_type == "Conv" || node.op_type == "ConvTranspose" || node.op_type == "MatMul" ||
          node.op_type == "Gemm") &&
         node.outputs.size() == 1;
}

}  // namespace

size_t fuse_activations(Graph& graph) {
  const ValueUses uses = value_uses(graph);

  std::vector<bool> removed(graph.nodes.size(), false);
  size_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& activation = graph.nodes[i];
    const std::string kind = fusable_activation(activation);
    if (kind.empty() || activation.inputs[0].empty()) continue;
    const std::string& y = activation.inputs[0];
    std::optional<size_t> p = producer_read_once(uses, y);
    // A recurrent layer's Y reaches its activation through the Reshape of PyTorch's export ([seq,
    // batch, directions, hidden] -> [seq, batch, directions x hidden]): the activation commutes with
    // it, so the layer applies it and the Reshape reads the activated Y.
    std::optional<size_t> reshape;
    if (p && is_onnx_op(graph.nodes[*p], "Reshape") && !graph.nodes[*p].inputs.empty()) {
      const std::optional<size_t> layer = producer_read_once(uses, graph.nodes[*p].inputs[0]);
      if (layer && is_onnx_recurrent(graph.nodes[*layer]) && graph.nodes[*layer].outputs[0] == graph.nodes[*p].inputs[0]) {
        reshape = p;
        p = layer;
      }
    }
    if (!p || !takes_activation(graph.nodes[*p])) continue;
    Node& producer_node = graph.nodes[*p];
    producer_node.set_attribute(kFusedActivationAttribute, kind);
    producer_node.set_attribute(kFusedActivationAlphaAttribute,
                                activation.attribute_float("alpha", 0.01f));  // LeakyRelu's default
    if (reshape) {
      graph.nodes[*reshape].outputs[0] = activation.outputs[0];
    } else {
      producer_node.outputs[0] = activation.outputs[0];
    }
    graph.values.erase(y);
    removed[i] = true;
    ++fused;
  }
  erase_marked_nodes(graph, removed);
  return fused;
}

}  // namespace onda
