#include "graph/simplify.h"

#include <algorithm>
#include <deque>
#include <set>
#include <string_view>
#include <unordered_set>

#include "graph/host_ops.h"
#include "graph/model_error.h"
#include "graph/shape_functions.h"
#include "graph/shape_inference.h"

namespace onda {

namespace {

void bind_input_shapes(Graph& graph, const std::map<std::string, Shape>& input_shapes) {
  for (const auto& [name, shape] : input_shapes) {
    if (std::find(graph.inputs.begin(), graph.inputs.end(), name) == graph.inputs.end())
      throw ModelError("a shape is given for '" + name + "', which is not an input of the model");
    ValueInfo& info = graph.value(name);
    if (info.shape) {
      bool agrees = info.shape->size() == shape.size();
      for (size_t i = 0; agrees && i < shape.size(); ++i)
        agrees = (*info.shape)[i] < 0 || (*info.shape)[i] == shape[i];
      if (!agrees)
        throw ModelError("input '" + name + "' is given shape " + shape_to_string(shape) +
                         ", the model declares " + shape_to_string(*info.shape));
    }
    for (int64_t dim : shape)
      if (dim < 0) throw ModelError("input '" + name + "' is given a negative dimension");
    shape_numel(shape);  // throws on a product that overflows
    info.shape = shape;
    info.dim_params.assign(shape.size(), "");
  }
}

std::optional<TensorType> known_type(const Graph& graph, const std::string& name) {
  if (name.empty()) return std::nullopt;
  const ValueInfo* info = graph.find_value(name);
  if (!info || !info->dtype || !info->has_static_shape()) return std::nullopt;
  return TensorType{*info->dtype, *info->shape};
}

// Records an inferred type; a static type the model declared must agree.
void record_type(Graph& graph, const Node& node, const std::string& name, const TensorType& type) {
  ValueInfo& info = graph.value(name);
  if (info.dtype && *info.dtype != type.dtype)
    throw ModelError("node " + node.describe() + ": output '" + name + "' is inferred as " +
                     std::string(dtype_name(type.dtype)) + ", the model declares " +
                     std::string(dtype_name(*info.dtype)));
  if (info.has_static_shape() && *info.shape != type.shape)
    throw ModelError("node " + node.describe() + ": output '" + name + "' is inferred with shape " +
                     shape_to_string(type.shape) + ", the model declares " + shape_to_string(*info.shape));
  info.dtype = type.dtype;
  info.shape = type.shape;
  info.dim_params.assign(type.shape.size(), "");
}

bool within(int64_t elements, const SimplifyOptions& options) {
  return elements <= options.max_folded_elements;
}

// Folds or types one node; true when the node was replaced by initializers.
bool simplify_node(Graph& graph, const Node& node, const SimplifyOptions& options, SimplifyReport& report) {
  const bool default_domain = canonical_domain(node.domain).empty();
  std::vector<std::optional<TensorType>> input_types;
  std::vector<const HostTensor*> constants;
  bool all_constant = true;
  for (const std::string& input : node.inputs) {
    input_types.push_back(known_type(graph, input));
    constants.push_back(input.empty() ? nullptr : graph.find_initializer(input));
    all_constant &= input.empty() || constants.back() != nullptr;
  }
  std::vector<std::optional<TensorType>> output_types;
  try {
    output_types = infer_output_types(node, input_types, constants);
  } catch (const ModelError& error) {
    throw ModelError(std::string(error.what()) + " (at node " + node.describe() + ")");
  }

  // Shape and Size of a statically shaped value are constants even when the value is not.
  if (options.fold_constants && default_domain && (node.op_type == "Shape" || node.op_type == "Size") &&
      input_types.size() == 1 && input_types[0]) {
    if (node.outputs.size() != 1 || node.outputs[0].empty())  // found by fuzz/fuzz_model_loader
      throw ModelError("node " + node.describe() + " must have one output, it has " +
                       std::to_string(node.outputs.size()) + (node.outputs.empty() ? "" : " (or an empty name)"));
    graph.set_initializer(node.outputs[0],
                          node.op_type == "Shape"
                              ? shape_op_result(node, input_types[0]->shape)
                              : HostTensor::from_values<int64_t>({}, {shape_numel(input_types[0]->shape)}));
    return true;
  }
  const HostOp host_op = default_domain && options.fold_constants ? find_host_op(node.op_type) : nullptr;
  if (host_op && all_constant && !node.inputs.empty()) {
    bool small = is_view_op(node.op_type);
    if (!small && !output_types.empty()) {
      small = true;
      for (const HostTensor* constant : constants) small &= !constant || within(constant->numel(), options);
      for (const std::optional<TensorType>& type : output_types)
        small &= type && within(shape_numel(type->shape), options);
    }
    if (small) {
      std::vector<HostTensor> inputs;
      for (const HostTensor* constant : constants) inputs.push_back(constant ? *constant : HostTensor());
      std::vector<HostTensor> results;
      try {
        results = host_op(node, inputs);
      } catch (const ModelError& error) {
        throw ModelError(std::string(error.what()) + " (folding node " + node.describe() + ")");
      }
      for (size_t i = 0; i < node.outputs.size() && i < results.size(); ++i)
        if (!node.outputs[i].empty()) graph.set_initializer(node.outputs[i], std::move(results[i]));
      return true;
    }
  }
  if (output_types.empty()) {
    ++report.nodes_with_unknown_outputs;
    ++report.unknown_by_op[node.op_type];
    return false;
  }
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (output_types[i]) record_type(graph, node, node.outputs[i], *output_types[i]);
  return false;
}

// Renames values in a subgraph and every subgraph nested in it (names are unique across scopes in
// ONNX, so no inner definition can shadow a renamed one).
Graph with_renamed_values(const Graph& source, const std::map<std::string, std::string>& renamed) {
  auto rename = [&](const std::string& name) {
    auto found = renamed.find(name);
    return found == renamed.end() ? name : found->second;
  };
  Graph graph = source;
  graph.initializers.clear();
  for (const auto& [name, tensor] : source.initializers) graph.initializers.emplace(rename(name), tensor);
  graph.values.clear();
  for (const auto& [name, info] : source.values) {
    ValueInfo copy = info;
    copy.name = rename(name);
    graph.values.emplace(copy.name, std::move(copy));
  }
  for (std::string& name : graph.inputs) name = rename(name);
  for (std::string& name : graph.outputs) name = rename(name);
  for (Node& node : graph.nodes) {
    for (std::string& name : node.inputs) name = rename(name);
    for (std::string& name : node.outputs) name = rename(name);
    for (Attribute& attribute : node.attributes)
      if (attribute.type() == AttributeType::graph)
        attribute.value = std::make_shared<const Graph>(
            with_renamed_values(*std::get<std::shared_ptr<const Graph>>(attribute.value), renamed));
  }
  return graph;
}

// An If whose condition folded to a constant is replaced by the taken branch: its initializers
// join the graph, its nodes run in the If's place (reading outer-scope values by their names), and
// Identity nodes carry its outputs to the If's output names. A branch-local name that the enclosing
// graph already knows (two Ifs inlining branches with the same local names, or a name reused
// across scopes) is renamed "<If output>/<name>" first. Exported code such as "pad when length %
// hop != 0" or a sample-rate switch becomes branch-free once the input shapes are known.
std::optional<std::vector<Node>> taken_branch_of_constant_if(Graph& graph, const Node& node) {
  if (node.op_type != "If" || !canonical_domain(node.domain).empty() || node.inputs.empty())
    return std::nullopt;
  const HostTensor* condition = graph.find_initializer(node.inputs[0]);
  if (!condition) return std::nullopt;
  if (condition->numel() != 1)
    throw ModelError("node " + node.describe() + ": the condition '" + node.inputs[0] + "' has " +
                     std::to_string(condition->numel()) + " elements, an If needs a single one");
  const char* taken = condition->to_int64()[0] ? "then_branch" : "else_branch";
  const Graph& declared = node.attribute_graph(taken);
  if (declared.outputs.size() != node.outputs.size())
    throw ModelError("node " + node.describe() + ": its " + taken + " has " +
                     std::to_string(declared.outputs.size()) + " outputs, the If has " +
                     std::to_string(node.outputs.size()));
  std::map<std::string, std::string> renamed;
  auto rename_if_known = [&](const std::string& name) {
    if (name.empty() || !graph.find_value(name) || renamed.count(name)) return;
    const std::string base = (node.outputs.empty() || node.outputs[0].empty() ? node.name : node.outputs[0]) + "/" + name;
    std::string fresh = base;
    for (int suffix = 1; graph.find_value(fresh); ++suffix) fresh = base + "." + std::to_string(suffix);
    renamed[name] = fresh;
  };
  for (const auto& [name, tensor] : declared.initializers) rename_if_known(name);
  for (const Node& inner : declared.nodes)
    for (const std::string& output : inner.outputs) rename_if_known(output);
  const Graph branch = renamed.empty() ? declared : with_renamed_values(declared, renamed);

  for (const auto& [name, tensor] : branch.initializers) graph.set_initializer(name, tensor);
  for (const auto& [name, info] : branch.values)
    if (!graph.find_value(name)) graph.values[name] = info;  // outer values keep what the graph knows
  std::vector<Node> nodes = branch.nodes;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i].empty()) continue;
    Node identity;
    identity.op_type = "Identity";
    identity.name = node.name + "/" + node.outputs[i];
    identity.inputs = {branch.outputs[i]};
    identity.outputs = {node.outputs[i]};
    nodes.push_back(std::move(identity));
  }
  return nodes;
}

}  // namespace

SimplifyReport simplify_graph(Graph& graph, const std::map<std::string, Shape>& input_shapes,
                              const SimplifyOptions& options) {
  bind_input_shapes(graph, input_shapes);
  SimplifyReport report;
  std::deque<Node> pending(std::make_move_iterator(graph.nodes.begin()),
                           std::make_move_iterator(graph.nodes.end()));
  graph.nodes.clear();
  std::vector<Node> kept;
  while (!pending.empty()) {
    Node node = std::move(pending.front());
    pending.pop_front();
    if (options.fold_constants) {
      if (std::optional<std::vector<Node>> branch = taken_branch_of_constant_if(graph, node)) {
        ++report.inlined_branches;
        pending.insert(pending.begin(), std::make_move_iterator(branch->begin()),
                       std::make_move_iterator(branch->end()));
        continue;
      }
    }
    if (simplify_node(graph, node, options, report)) {
      ++report.folded_nodes;
      continue;
    }
    kept.push_back(std::move(node));
  }
  graph.nodes = std::move(kept);
  if (options.remove_dead_nodes)
    std::tie(report.removed_dead_nodes, report.removed_initializers) = remove_dead_nodes(graph);
  return report;
}

std::pair<size_t, size_t> remove_dead_nodes(Graph& graph) {
  // Names are views of the graph's own strings, hashed: ordered sets of copied names were a tenth of
  // a large model's plan. The views are used only before the nodes move below.
  std::unordered_set<std::string_view> needed(graph.outputs.begin(), graph.outputs.end());
  std::vector<bool> live(graph.nodes.size(), false);
  std::vector<std::vector<std::string>> subgraph_reads;  // owns the names read through subgraphs
  for (size_t n = graph.nodes.size(); n-- > 0;) {
    const Node& node = graph.nodes[n];
    for (const std::string& output : node.outputs)
      live[n] = live[n] || (!output.empty() && needed.count(output));
    if (!live[n]) continue;
    const bool nested = std::any_of(node.attributes.begin(), node.attributes.end(),
                                    [](const Attribute& a) { return a.type() == AttributeType::graph; });
    if (!nested) {
      for (const std::string& input : node.inputs)
        if (!input.empty()) needed.insert(input);
      continue;
    }
    subgraph_reads.push_back(values_read_by(node));
    needed.insert(subgraph_reads.back().begin(), subgraph_reads.back().end());
  }

  size_t removed_initializers = 0;
  for (auto it = graph.initializers.begin(); it != graph.initializers.end();) {
    if (needed.count(it->first)) {
      ++it;
    } else {
      graph.values.erase(it->first);
      it = graph.initializers.erase(it);
      ++removed_initializers;
    }
  }
  // Forget values that nothing defines or reads any more.
  std::unordered_set<std::string_view> referenced(needed);
  referenced.insert(graph.inputs.begin(), graph.inputs.end());
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (live[n]) referenced.insert(graph.nodes[n].outputs.begin(), graph.nodes[n].outputs.end());
  for (auto it = graph.values.begin(); it != graph.values.end();)
    it = referenced.count(it->first) ? std::next(it) : graph.values.erase(it);

  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (live[n]) kept.push_back(std::move(graph.nodes[n]));
  const size_t removed_nodes = graph.nodes.size() - kept.size();
  graph.nodes = std::move(kept);
  return {removed_nodes, removed_initializers};
}

}  // namespace onda
