// Control flow: If runs only when its condition is known at plan time. Exporters emit If for
// choices that depend on constants or input shapes (a sample-rate switch, "pad when frames % hop
// != 0"); simplify_graph (graph/simplify.h) folds such a condition and inlines the taken branch,
// so an If that reaches the recorder has a condition computed from input values, which a GPU
// program recorded ahead of time cannot branch on.
#include <fmt/format.h>

#include "graph/model_error.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

std::vector<Value> if_with_unknown_condition(const Node& node, OpContext&, const std::vector<Value>&) {
  const std::string condition = node.inputs.empty() ? std::string("(none)") : node.inputs[0];
  throw ModelError(fmt::format(
      "{}: its condition '{}' depends on input values, which are not known when the run is planned; onda "
      "runs If only when the condition folds from constants and input shapes, by inlining the taken branch",
      node.describe(), condition));
}

}  // namespace

void register_control_flow_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "If", 1, if_with_unknown_condition,
                 "condition must fold from constants and input shapes: the taken branch is inlined"});
}

}  // namespace onda::ops
