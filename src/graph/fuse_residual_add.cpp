#include "graph/fuse_residual_add.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/fuse_attention.h"
#include "graph/fuse_elementwise.h"
#include "graph/fuse_epilogue.h"

namespace onda {
namespace {

// A GEMM whose store can take the sum: a matrix product with one output, no epilogue yet, at most
// its bias as input 2.
bool takes_residual(const Graph& graph, const Node& node) {
  if (!is_static_matrix_product(graph, node)) return false;
  if (node.has_attribute(kFusedEpilogueAttribute) || node.outputs.size() != 1 || node.inputs.size() > 3)
    return false;
  return !node.outputs[0].empty();
}

bool is_float_type(const std::optional<DType>& t) {
  return t && (*t == DType::f32 || *t == DType::f16);
}

// Whether `value` is computed from node `target`'s output (walking producers back from it). The
// nodes are in topological order, so a producer before `target` cannot depend on it: the walk stops
// there. (Unpruned, it went back to the graph's inputs for every candidate sum: 75 of BS-RoFormer's
// 230 ms of fusion passes on this repository's development CPU.)
bool depends_on(const Graph& graph, const ValueUses& uses, const std::string& value, size_t target) {
  std::vector<size_t> stack;
  std::vector<bool> seen(graph.nodes.size(), false);
  auto push_producer = [&](const std::string& name) {
    if (name.empty()) return;
    const std::optional<size_t> p = uses.producer(name);
    if (!p || *p < target || seen[*p]) return;  // a graph input, an initializer, an earlier node
    seen[*p] = true;
    stack.push_back(*p);
  };
  push_producer(value);
  while (!stack.empty()) {
    const size_t n = stack.back();
    stack.pop_back();
    if (n == target) return true;
    for (const std::string& input : values_read_by(graph.nodes[n])) push_producer(input);
  }
  return false;
}

// The sum's body with the GEMM's operand first: `sum` itself for a FusedElementwise (its inputs
// reordered), a body of the one Add otherwise.
std::shared_ptr<const Graph> residual_body(const Graph& graph, const Node& sum, size_t gemm_operand) {
  auto body = std::make_shared<Graph>();
  if (sum.domain == kOndaDomain) {
    *body = sum.attribute_graph(kFusedElementwiseBody);
    if (gemm_operand == 1) std::swap(body->inputs[0], body->inputs[1]);
    return body;
  }
  body->name = (sum.name.empty() ? sum.outputs[0] : sum.name) + "/onda_residual";
  body->ir_version = graph.ir_version;
  body->opset_imports = graph.opset_imports;
  body->inputs = {sum.inputs[gemm_operand], sum.inputs[1 - gemm_operand]};
  for (const std::string& name : {sum.inputs[0], sum.inputs[1], sum.outputs[0]})
    if (const ValueInfo* info = graph.find_value(name)) body->values[name] = *info;
  body->nodes = {sum};
  body->outputs = {sum.outputs[0]};
  return body;
}

}  // namespace

size_t fuse_residual_adds(Graph& graph) {
  const ValueUses uses = value_uses(graph);
  std::vector<bool> removed(graph.nodes.size(), false), claimed(graph.nodes.size(), false);
  std::vector<Node> added;
  size_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& sum = graph.nodes[i];
    const bool is_add = is_onnx_op(sum, "Add") && sum.inputs.size() == 2;
    const bool is_group = sum.domain == kOndaDomain && sum.op_type == kFusedElementwiseOp && sum.inputs.size() == 2;
    if ((!is_add && !is_group) || sum.outputs.size() != 1 || sum.inputs[0] == sum.inputs[1]) continue;
    const std::string& out = sum.outputs[0];
    const ValueInfo* out_info = graph.find_value(out);
    const std::optional<Shape> out_shape = static_shape_of(graph, out);
    if (!out_info || !is_float_type(out_info->dtype) || !out_shape) continue;
    for (size_t k = 0; k < 2; ++k) {
      const std::string& operand = sum.inputs[k];
      const std::string& residual = sum.inputs[1 - k];
      // Both operands have the output's shape and dtype: no broadcast in the sum.
      bool same_type = true;
      for (const std::string& name : {operand, residual}) {
        const ValueInfo* info = graph.find_value(name);
        same_type = same_type && info && info->dtype == out_info->dtype && static_shape_of(graph, name) == out_shape;
      }
      if (!same_type) continue;
      const std::optional<size_t> p = producer_read_once(uses, operand);
      if (!p || claimed[*p]) continue;
      std::optional<size_t> reshape;
      size_t gemm_index = *p;
      if (is_onnx_op(graph.nodes[*p], "Reshape")) {
        const std::optional<size_t> q = producer_read_once(uses, graph.nodes[*p].inputs[0]);
        if (!q || claimed[*q]) continue;
        reshape = *p;
        gemm_index = *q;
      }
      Node& gemm = graph.nodes[gemm_index];
      if (!takes_residual(graph, gemm)) continue;
      const std::optional<Shape> gemm_shape = static_shape_of(graph, gemm.outputs[0]);
      if (!gemm_shape || depends_on(graph, uses, residual, gemm_index)) continue;
      std::string residual_input = residual;
      if (reshape) {  // the residual viewed in the GEMM's output shape, as the sum was
        added.push_back(reshape_view(graph, residual, *gemm_shape, *out_info->dtype, "residual"));
        residual_input = added.back().outputs[0];
      }
      Attribute epilogue{std::string(kFusedEpilogueAttribute), residual_body(graph, sum, k)};
      gemm.attributes.push_back(std::move(epilogue));
      gemm.inputs.resize(4);
      gemm.inputs[3] = residual_input;
      if (reshape) {
        // GEMM (with the sum) -> Reshape -> the sum's output: the reshape now carries the sum.
        graph.values.erase(graph.nodes[*reshape].outputs[0]);
        graph.nodes[*reshape].outputs[0] = out;
      } else {
        graph.values.erase(gemm.outputs[0]);
        gemm.outputs[0] = out;
      }
      claimed[gemm_index] = true;
      if (reshape) claimed[*reshape] = true;
      removed[i] = true;
      ++fused;
      break;
    }
  }
  if (fused == 0) return 0;
  erase_marked_nodes(graph, removed);
  for (Node& node : added) graph.nodes.push_back(std::move(node));
  // The GEMM now reads the residual, which may have been computed after it.
  graph.sort_topologically();
  return fused;
}

}  // namespace onda
