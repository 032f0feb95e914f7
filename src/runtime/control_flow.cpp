#include "runtime/control_flow.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "graph/broadcast.h"
#include "graph/model_error.h"

namespace onda::runtime {
namespace {

std::string describe_value(const ops::Value& value) {
  if (!value.defined()) return "missing";
  if (value.is_sequence()) return "a sequence";
  return fmt::format("{} of shape {}", dtype_name(value.dtype()), shape_to_string(value.shape()));
}

// The one element of a scalar (or one-element) input; `what` names it in the error.
int64_t scalar_of(GraphWalk& walk, const Node& node, const ops::Value& value, const std::string& what,
                  bool boolean) {
  const bool dtype_ok = value.defined() && !value.is_sequence() &&
                        (boolean ? value.dtype() == DType::boolean
                                 : value.dtype() == DType::i64 || value.dtype() == DType::i32);
  if (!dtype_ok || shape_numel(value.shape()) != 1)
    throw ModelError(fmt::format("{}: {} must be a single {}, it is {}", node.describe(), what,
                                 boolean ? "bool" : "int64", describe_value(value)));
  return walk.host_value(value).to_int64()[0];
}

// Walks `body` (planned for these inputs) in a scope inside `scope`; returns its outputs.
std::vector<ops::Value> run_body(GraphWalk& walk, WalkPlan& owner, const Node& node, const Graph& body,
                                 const std::vector<ops::Value>& inputs, const Scope& scope) {
  WalkPlan& plan = walk.subplan(owner, node, body, inputs, scope);
  Scope inner{&plan.graph, &scope, {}};
  for (size_t i = 0; i < inputs.size(); ++i) inner.values[plan.graph.inputs[i]] = inputs[i];
  walk.walk(plan, inner);
  std::vector<ops::Value> outputs;
  for (const std::string& name : plan.graph.outputs) outputs.push_back(walk.lookup(inner, node, name));
  return outputs;
}

Node synthetic_node(const Node& owner, std::string op_type, size_t inputs,
                    std::vector<Attribute> attributes) {
  Node node;
  node.op_type = std::move(op_type);
  node.name = owner.name + "/" + node.op_type;
  for (size_t i = 0; i < inputs; ++i) node.inputs.push_back(fmt::format("in{}", i));
  node.outputs = {"out"};
  node.attributes = std::move(attributes);
  return node;
}

// values[k] stacked along a new axis `axis` (of the result's rank): Unsqueeze then Concat.
ops::Value stack(GraphWalk& walk, const Node& owner, const std::vector<ops::Value>& values, int64_t axis) {
  const Node unsqueeze = synthetic_node(owner, "Unsqueeze", 2, {});
  const ops::Value axes{.host = HostTensor::from_values<int64_t>({1}, {axis})};
  std::vector<ops::Value> expanded;
  for (const ops::Value& v : values) expanded.push_back(walk.run_op(unsqueeze, 13, {v, axes}).at(0));
  if (expanded.size() == 1) return expanded[0];
  const Node concat = synthetic_node(owner, "Concat", expanded.size(), {{"axis", axis}});
  return walk.run_op(concat, 13, expanded).at(0);
}

// An empty scan output (zero iterations): [0] of the dtype the body declares.
ops::Value empty_scan_output(const Graph& body, size_t output) {
  const ValueInfo* info = body.find_value(body.outputs[output]);
  return ops::Value{.host = HostTensor(info && info->dtype ? *info->dtype : DType::f32, {0})};
}

const Graph& branch_of(const Node& node, const char* name) {
  if (!node.has_attribute(name)) throw ModelError(fmt::format("{}: has no {}", node.describe(), name));
  return node.attribute_graph(name);
}

std::vector<ops::Value> run_if(GraphWalk& walk, WalkPlan& owner, const Node& node,
                               const std::vector<ops::Value>& args, const Scope& scope) {
  if (args.empty()) throw ModelError(fmt::format("{}: has no condition input", node.describe()));
  const bool condition =
      scalar_of(walk, node, args[0], fmt::format("its condition '{}'", node.inputs[0]), true);
  const char* taken = condition ? "then_branch" : "else_branch";
  const Graph& branch = branch_of(node, taken);
  if (branch.outputs.size() != node.outputs.size())
    throw ModelError(fmt::format("{}: its {} has {} outputs, the If has {}", node.describe(), taken,
                                 branch.outputs.size(), node.outputs.size()));
  return run_body(walk, owner, node, branch, {}, scope);
}

std::vector<ops::Value> run_loop(GraphWalk& walk, WalkPlan& owner, const Node& node,
                                 const std::vector<ops::Value>& args, const Scope& scope) {
  const Graph& body = branch_of(node, "body");
  const size_t carried = args.size() < 2 ? 0 : args.size() - 2;
  if (args.size() < 2 || body.inputs.size() != carried + 2 || body.outputs.size() < carried + 1)
    throw ModelError(fmt::format(
        "{}: a Loop with {} carried values needs a body of {} inputs and at least {} outputs, "
        "it has {} and {}",
        node.describe(), carried, carried + 2, carried + 1, body.inputs.size(), body.outputs.size()));
  const size_t scanned = body.outputs.size() - 1 - carried;
  if (node.outputs.size() > carried + scanned)
    throw ModelError(fmt::format("{}: has {} outputs, its body gives {}", node.describe(),
                                 node.outputs.size(), carried + scanned));
  int64_t trip_count = std::numeric_limits<int64_t>::max();
  if (args[0].defined())
    trip_count = scalar_of(walk, node, args[0], fmt::format("its trip count '{}'", node.inputs[0]), false);
  if (trip_count < 0)
    throw ModelError(fmt::format("{}: its trip count is negative ({})", node.describe(), trip_count));
  bool condition = true;
  if (args[1].defined())
    condition = scalar_of(walk, node, args[1], fmt::format("its condition '{}'", node.inputs[1]), true);
  if (!args[0].defined() && !args[1].defined())
    throw ModelError(
        fmt::format("{}: has neither a trip count nor a condition, so it would never end", node.describe()));

  std::vector<ops::Value> state(args.begin() + 2, args.end());
  std::vector<std::vector<ops::Value>> scans(scanned);
  for (int64_t iteration = 0; iteration < trip_count && condition; ++iteration) {
    std::vector<ops::Value> inputs{
        ops::Value{.host = HostTensor::from_values<int64_t>({}, {iteration})},
        // Always true on entry: constant, so a body that
        // passes it on unchanged is seen to (see below).
        ops::Value{.host = HostTensor::from_int64(DType::boolean, {}, {1}), .constant = true}};
    inputs.insert(inputs.end(), state.begin(), state.end());
    std::vector<ops::Value> outputs = run_body(walk, owner, node, body, inputs, scope);
    condition = scalar_of(walk, node, outputs[0],
                          fmt::format("its body's condition output '{}'", body.outputs[0]), true);
    if (condition && outputs[0].constant && !args[0].defined())
      throw ModelError(
          fmt::format("{}: its body's condition is always true and it has no trip count, so it would "
                      "never end",
                      node.describe()));
    std::copy(outputs.begin() + 1, outputs.begin() + 1 + carried, state.begin());
    for (size_t k = 0; k < scanned; ++k) scans[k].push_back(outputs[1 + carried + k]);
  }
  std::vector<ops::Value> results = state;
  for (size_t k = 0; k < scanned; ++k)
    results.push_back(scans[k].empty() ? empty_scan_output(body, 1 + carried + k)
                                       : stack(walk, node, scans[k], 0));
  return results;
}

std::vector<int64_t> per_value_attribute(const Node& node, const char* name, size_t count) {
  std::vector<int64_t> values = node.attribute_ints(name, std::vector<int64_t>(count, 0));
  if (values.size() != count)
    throw ModelError(
        fmt::format("{}: {} has {} entries, it needs {}", node.describe(), name, values.size(), count));
  return values;
}

// Scan (opset 9+) over `state` and `scan_inputs`; `result` receives the final state then the
// stacked scan outputs.
std::vector<ops::Value> scan(GraphWalk& walk, WalkPlan& owner, const Node& node,
                             std::vector<ops::Value> state, const std::vector<ops::Value>& scan_inputs,
                             const std::vector<int64_t>& input_axes,
                             const std::vector<int64_t>& input_directions, const Scope& scope) {
  const Graph& body = branch_of(node, "body");
  const size_t carried = state.size();
  if (body.inputs.size() != carried + scan_inputs.size() || body.outputs.size() < carried)
    throw ModelError(
        fmt::format("{}: its body has {} inputs and {} outputs, the Scan gives {} states and {} scan inputs",
                    node.describe(), body.inputs.size(), body.outputs.size(), carried, scan_inputs.size()));
  const size_t scanned = body.outputs.size() - carried;
  const std::vector<int64_t> output_axes = per_value_attribute(node, "scan_output_axes", scanned);
  const std::vector<int64_t> output_directions = per_value_attribute(node, "scan_output_directions", scanned);
  int64_t length = -1;
  std::vector<Node> slicers;
  for (size_t j = 0; j < scan_inputs.size(); ++j) {
    const ops::Value& input = scan_inputs[j];
    if (!input.defined() || input.is_sequence())
      throw ModelError(fmt::format("{}: scan input {} is {}", node.describe(), j, describe_value(input)));
    const int64_t rank = static_cast<int64_t>(input.shape().size());
    const int64_t axis = normalize_axis(input_axes[j], rank, "Scan scan_input_axes");
    if (length >= 0 && input.shape()[axis] != length)
      throw ModelError(fmt::format("{}: scan inputs have different lengths ({} and {})", node.describe(),
                                   length, input.shape()[axis]));
    length = input.shape()[axis];
    slicers.push_back(synthetic_node(node, "Gather", 2, {{"axis", axis}}));
  }
  std::vector<std::vector<ops::Value>> scans(scanned);
  for (int64_t iteration = 0; iteration < std::max<int64_t>(length, 0); ++iteration) {
    std::vector<ops::Value> inputs = state;
    for (size_t j = 0; j < scan_inputs.size(); ++j) {
      const int64_t index = input_directions[j] ? length - 1 - iteration : iteration;
      const ops::Value at{.host = HostTensor::from_values<int64_t>({}, {index})};
      inputs.push_back(walk.run_op(slicers[j], 13, {scan_inputs[j], at}).at(0));
    }
    std::vector<ops::Value> outputs = run_body(walk, owner, node, body, inputs, scope);
    std::copy(outputs.begin(), outputs.begin() + carried, state.begin());
    for (size_t k = 0; k < scanned; ++k) scans[k].push_back(outputs[carried + k]);
  }
  std::vector<ops::Value> results = state;
  for (size_t k = 0; k < scanned; ++k) {
    if (scans[k].empty()) {
      results.push_back(empty_scan_output(body, carried + k));
      continue;
    }
    if (output_directions[k]) std::reverse(scans[k].begin(), scans[k].end());
    const int64_t rank = static_cast<int64_t>(scans[k][0].shape().size()) + 1;
    results.push_back(
        stack(walk, node, scans[k], normalize_axis(output_axes[k], rank, "Scan scan_output_axes")));
  }
  return results;
}

std::vector<ops::Value> run_scan(GraphWalk& walk, WalkPlan& owner, const Node& node,
                                 const std::vector<ops::Value>& args, const Scope& scope, int64_t opset) {
  const int64_t num_scan_inputs = node.attribute_int("num_scan_inputs");
  const size_t first_state = opset < 9 ? 1 : 0;  // opset 8: sequence_lens first
  if (num_scan_inputs < 1 || static_cast<size_t>(num_scan_inputs) + first_state > args.size())
    throw ModelError(fmt::format("{}: num_scan_inputs is {} with {} inputs", node.describe(), num_scan_inputs,
                                 args.size()));
  const size_t scan_inputs = static_cast<size_t>(num_scan_inputs);
  const size_t carried = args.size() - first_state - scan_inputs;
  const std::vector<ops::Value> state(args.begin() + first_state, args.begin() + first_state + carried);
  const std::vector<ops::Value> inputs(args.begin() + first_state + carried, args.end());
  if (opset >= 9)
    return scan(walk, owner, node, state, inputs, per_value_attribute(node, "scan_input_axes", scan_inputs),
                per_value_attribute(node, "scan_input_directions", scan_inputs), scope);

  // Opset 8: every state and scan input has a batch axis 0 (scan axis 1); rows run one at a time.
  const std::vector<int64_t> directions = per_value_attribute(node, "directions", scan_inputs);
  if (args[0].defined()) {
    const HostTensor lengths = walk.host_value(args[0]);
    for (int64_t n : lengths.to_int64())
      if (inputs.empty() || n != inputs[0].shape().at(1))
        throw ModelError(
            fmt::format("{}: sequence_lens shorter than the scan inputs are not supported", node.describe()));
  }
  if (inputs[0].shape().empty())
    throw ModelError(fmt::format("{}: scan input 0 has no batch axis", node.describe()));
  const int64_t batch = inputs[0].shape()[0];
  const Node row_of = synthetic_node(node, "Gather", 2, {{"axis", int64_t{0}}});
  std::vector<std::vector<ops::Value>> rows;
  for (int64_t b = 0; b < batch; ++b) {
    const ops::Value at{.host = HostTensor::from_values<int64_t>({}, {b})};
    std::vector<ops::Value> row_state, row_inputs;
    for (const ops::Value& v : state) row_state.push_back(walk.run_op(row_of, 13, {v, at}).at(0));
    for (const ops::Value& v : inputs) row_inputs.push_back(walk.run_op(row_of, 13, {v, at}).at(0));
    rows.push_back(scan(walk, owner, node, row_state, row_inputs, std::vector<int64_t>(scan_inputs, 0),
                        directions, scope));
  }
  std::vector<ops::Value> results;
  for (size_t k = 0; !rows.empty() && k < rows[0].size(); ++k) {
    std::vector<ops::Value> column;
    for (const auto& row : rows) column.push_back(row[k]);
    results.push_back(stack(walk, node, column, 0));
  }
  return results;
}

}  // namespace

bool is_control_flow_op(const Node& node) {
  return canonical_domain(node.domain).empty() &&
         (node.op_type == "If" || node.op_type == "Loop" || node.op_type == "Scan");
}

std::vector<ops::Value> run_control_flow(GraphWalk& walk, WalkPlan& owner, const Node& node,
                                         const std::vector<ops::Value>& args, const Scope& scope) {
  if (node.op_type == "If") return run_if(walk, owner, node, args, scope);
  if (node.op_type == "Loop") return run_loop(walk, owner, node, args, scope);
  return run_scan(walk, owner, node, args, scope, owner.graph.opset_version(node.domain));
}

}  // namespace onda::runtime
