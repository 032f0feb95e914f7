#include "graph/fuse_elementwise.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "graph/fuse_attention.h"
#include "graph/onnx_data_type.h"
#include "graph/simplify.h"

namespace onda {
namespace {

// The ONNX ops the fused kernel evaluates (the elementwise catalog, src/ops/elementwise_ops.cpp),
// besides Cast, Clip, Pow, Expand and the variadic ones, which have conditions below.
bool is_elementwise_op_type(std::string_view op) {
  static const std::set<std::string_view> ops = {"Relu",
                                                 "LeakyRelu",
                                                 "Sigmoid",
                                                 "HardSigmoid",
                                                 "HardSwish",
                                                 "Tanh",
                                                 "Erf",
                                                 "Gelu",
                                                 "Sqrt",
                                                 "Exp",
                                                 "Log",
                                                 "Reciprocal",
                                                 "Sin",
                                                 "Cos",
                                                 "Atan",
                                                 "Floor",
                                                 "Ceil",
                                                 "Round",
                                                 "Softplus",
                                                 "Softsign",
                                                 "Elu",
                                                 "Selu",
                                                 "ThresholdedRelu",
                                                 "Abs",
                                                 "Neg",
                                                 "Sign",
                                                 "PRelu",
                                                 "Add",
                                                 "Sub",
                                                 "Mul",
                                                 "Div",
                                                 "Mod",
                                                 "Equal",
                                                 "Less",
                                                 "LessOrEqual",
                                                 "Greater",
                                                 "GreaterOrEqual",
                                                 "And",
                                                 "Or",
                                                 "Xor",
                                                 "Not",
                                                 "IsNaN",
                                                 "IsInf",
                                                 "Where",
                                                 "Tan",
                                                 "Asin",
                                                 "Acos",
                                                 "Sinh",
                                                 "Cosh",
                                                 "Asinh",
                                                 "Acosh",
                                                 "Atanh",
                                                 "Celu",
                                                 "Mish",
                                                 "Shrink"};
  return ops.count(op) != 0;
}

bool is_float_or_bool(DType t) {
  return is_float(t) || t == DType::boolean;
}

class ElementwiseGrouper {
 public:
  explicit ElementwiseGrouper(Graph& graph) : graph_(graph) {
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      for (const std::string& name : values_read_by(graph.nodes[i])) readers_[name].insert(i);
      for (const std::string& name : graph.nodes[i].outputs) producer_[name] = i;
    }
    graph_outputs_.insert(graph.outputs.begin(), graph.outputs.end());
  }

  // A scalar initializer, folded into the kernel's uniforms rather than bound.
  bool is_scalar_constant(const std::string& name) const {
    const HostTensor* t = graph_.find_initializer(name);
    return t && t->numel() == 1 && dtype_from_onnx(onnx_data_type(t->dtype())).has_value();
  }

  // The inputs of `node` that are operands of the fused kernel (bound or folded), in order;
  // Expand's shape and Clip's bounds are parameters instead.
  std::vector<std::string> operands(const Node& node) const {
    if (is_onnx_op(node, "Expand") || is_onnx_op(node, "Clip")) return {node.inputs[0]};
    return node.inputs;
  }

  bool fusable(const Node& node) const {
    if (!canonical_domain(node.domain).empty() || node.outputs.size() != 1 || node.outputs[0].empty() ||
        node.inputs.empty())
      return false;
    for (const Attribute& a : node.attributes)
      if (a.type() == AttributeType::graph) return false;
    const std::string& op = node.op_type;
    const auto out_type = type_of(node.outputs[0]);
    if (!out_type || !is_float_or_bool(out_type->first)) return false;
    // Every operand of a static shape and known type; every one but Cast's float or bool (integer
    // values are shapes and indices, which the runtime may keep on the host).
    const std::vector<std::string> read = operands(node);
    for (size_t k = 0; k < read.size(); ++k) {
      const auto t = type_of(read[k]);
      if (read[k].empty() || !t) return false;
      // Pow's exponent may be an integer constant (converted to the base's type).
      const bool converted = op == "Pow" && k == 1 && is_scalar_constant(read[k]);
      if (!is_float_or_bool(t->first) && op != "Cast" && !converted) return false;
    }
    if (op == "Clip") {
      // Bounds absent or scalar constants (opset 11+), or attributes (before).
      for (size_t k = 1; k < node.inputs.size(); ++k)
        if (!node.inputs[k].empty() && !is_scalar_constant(node.inputs[k])) return false;
      return is_float(type_of(node.inputs[0])->first);
    }
    if (op == "Expand") return node.inputs.size() == 2 && graph_.is_initializer(node.inputs[1]);
    if (op == "Cast") {
      const int64_t to = node.attribute_int("to", 0);
      return dtype_from_onnx(to).has_value() && !carried_integer_width(to).has_value();
    }
    if (op == "Pow") {
      // The exponent of another type than the base: only a constant (converted once).
      return node.inputs.size() == 2 && (type_of(node.inputs[1])->first == type_of(node.inputs[0])->first ||
                                         is_scalar_constant(node.inputs[1]));
    }
    if (op == "Sum" || op == "Max" || op == "Min") return node.inputs.size() == 2;
    if (op == "Gelu") {
      const std::string approximate = node.attribute_string("approximate", "none");
      return approximate == "none" || approximate == "tanh";
    }
    // Mod of floats needs fmod = 1 (the node's own error otherwise).
    if (op == "Mod") return node.attribute_int("fmod", 0) == 1;
    return is_elementwise_op_type(op);
  }

  // Groups of node indices, each in graph order, its last member the exit.
  std::vector<std::vector<size_t>> groups() {
    const size_t n = graph_.nodes.size();
    std::vector<int> group_of(n, -1);
    std::vector<Group> groups;
    std::vector<bool> fusable_node(n);
    for (size_t i = 0; i < n; ++i) fusable_node[i] = fusable(graph_.nodes[i]);
    // From the last node back: a node joins the group of its readers when they all are in one
    // group and it is read by nothing else; so every member but the first assigned (the exit) is
    // read only inside its group, and a path leaving the group never comes back to it.
    for (size_t i = n; i-- > 0;) {
      if (!fusable_node[i]) continue;
      const Node& node = graph_.nodes[i];
      const std::string& out = node.outputs[0];
      int target = -1;
      auto readers = readers_.find(out);
      if (!graph_outputs_.count(out) && readers != readers_.end() && !readers->second.empty()) {
        target = group_of[*readers->second.begin()];
        for (size_t r : readers->second)
          if (group_of[r] != target) target = -1;
      }
      if (target >= 0 && joins(groups[target], node)) {
        group_of[i] = target;
        continue;
      }
      group_of[i] = static_cast<int>(groups.size());
      groups.emplace_back();
      joins(groups.back(), node);
    }
    std::vector<std::vector<size_t>> members(groups.size());
    for (size_t i = 0; i < n; ++i)
      if (group_of[i] >= 0) members[group_of[i]].push_back(i);
    std::vector<std::vector<size_t>> fused;
    for (size_t g = 0; g < groups.size(); ++g) {
      if (members[g].size() < 2) continue;
      // Groups of constants only are left to constant folding (and to the host, for small ones).
      bool reads_run_time_value = false;
      for (const std::string& name : groups[g].inputs)
        reads_run_time_value = reads_run_time_value || !graph_.is_initializer(name);
      if (!reads_run_time_value) continue;
      // A group of Expands alone only copies.
      bool computes = false;
      for (size_t i : members[g]) computes = computes || !is_onnx_op(graph_.nodes[i], "Expand");
      if (computes) fused.push_back(members[g]);
    }
    return fused;
  }

  // The fused node for a group (`members` in graph order, the exit last).
  Node fused_node(const std::vector<size_t>& members) const {
    std::set<std::string> produced;
    for (size_t i : members) produced.insert(graph_.nodes[i].outputs[0]);
    auto body = std::make_shared<Graph>();
    const Node& exit = graph_.nodes[members.back()];
    body->name = (exit.name.empty() ? exit.outputs[0] : exit.name) + "/onda_fused_elementwise";
    body->ir_version = graph_.ir_version;
    body->opset_imports = graph_.opset_imports;
    std::set<std::string> inputs_seen;
    auto note_value = [&](const std::string& name) {
      if (const ValueInfo* info = graph_.find_value(name)) body->values[name] = *info;
    };
    for (size_t i : members) {
      const Node& node = graph_.nodes[i];
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const std::string& name = node.inputs[k];
        if (name.empty() || produced.count(name)) continue;
        const bool parameter = k > 0 && (is_onnx_op(node, "Expand") || is_onnx_op(node, "Clip"));
        if (parameter || is_scalar_constant(name)) {
          body->set_initializer(name, *graph_.find_initializer(name));
        } else if (inputs_seen.insert(name).second) {
          body->inputs.push_back(name);
          note_value(name);
        }
      }
      body->nodes.push_back(node);
      note_value(node.outputs[0]);
    }
    body->outputs = {exit.outputs[0]};
    Node fused;
    fused.op_type = std::string(kFusedElementwiseOp);
    fused.domain = std::string(kOndaDomain);
    fused.name = body->name;
    fused.inputs = body->inputs;
    fused.outputs = {exit.outputs[0]};
    fused.set_attribute(kFusedElementwiseBody, std::shared_ptr<const Graph>(std::move(body)));
    return fused;
  }

 private:
  struct Group {
    std::set<std::string> inputs;  // values read from outside (bound), so far
    size_t nodes = 0;
  };

  std::optional<std::pair<DType, Shape>> type_of(const std::string& name) const {
    const ValueInfo* info = graph_.find_value(name);
    const auto shape = static_shape_of(graph_, name);
    if (!info || !info->dtype || !shape) return std::nullopt;
    return std::make_pair(*info->dtype, *shape);
  }

  // Adds `node` to `g` unless the group would pass a limit; its output stops being an input.
  bool joins(Group& g, const Node& node) const {
    if (g.nodes + 1 > kMaxFusedElementwiseNodes) return false;
    std::set<std::string> inputs = g.inputs;
    inputs.erase(node.outputs[0]);
    for (const std::string& name : operands(node))
      if (!is_scalar_constant(name)) inputs.insert(name);
    if (inputs.size() > kMaxFusedElementwiseInputs) return false;
    g.inputs = std::move(inputs);
    ++g.nodes;
    return true;
  }

  Graph& graph_;
  std::map<std::string, std::set<size_t>> readers_;
  std::map<std::string, size_t> producer_;
  std::set<std::string> graph_outputs_;
};

}  // namespace

size_t fuse_elementwise(Graph& graph) {
  std::vector<std::vector<size_t>> groups;
  std::vector<Node> fused_nodes;
  {
    ElementwiseGrouper grouper(graph);
    groups = grouper.groups();
    for (const auto& members : groups) fused_nodes.push_back(grouper.fused_node(members));
  }
  if (groups.empty()) return 0;
  std::vector<bool> removed(graph.nodes.size(), false);
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<size_t>& members = groups[g];
    for (size_t m = 0; m + 1 < members.size(); ++m) {
      removed[members[m]] = true;
      graph.values.erase(graph.nodes[members[m]].outputs[0]);
    }
    // The fused node takes the exit's place: every value it reads is produced before its members.
    graph.nodes[members.back()] = std::move(fused_nodes[g]);
  }
  erase_marked_nodes(graph, removed);
  remove_dead_nodes(graph);  // the scalar constants now held by the bodies
  return groups.size();
}

}  // namespace onda
