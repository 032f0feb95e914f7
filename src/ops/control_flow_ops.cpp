// Control flow: If, Loop and Scan walk their subgraphs, which only the runtime can do (it owns the
// run's values, plans and recorder: runtime/control_flow.h), so the runtime runs them before it
// would look for an op here. These entries list them as supported, for coverage checks and the
// generated table of supported ops.
#include <fmt/format.h>

#include "graph/model_error.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

std::vector<Value> runs_in_the_runtime(const Node& node, OpContext&, const std::vector<Value>&) {
  throw ModelError(
      fmt::format("internal: {} reached the op layer; the runtime walks its subgraphs", node.describe()));
}

}  // namespace

void register_control_flow_ops(std::vector<OpEntry>& ops) {
  ops.push_back(
      {"", "If", 1, runs_in_the_runtime,
       "a condition that folds at plan time inlines the branch; otherwise read on the host (or read back "
       "from the GPU) per run, a plan kept per branch"});
  ops.push_back({"", "Loop", 1, runs_in_the_runtime,
                 "trip count and condition read on the host per iteration (read back when on the GPU)"});
  ops.push_back(
      {"", "Scan", 8, runs_in_the_runtime, "slices per iteration; opset 8 needs full sequence_lens"});
}

}  // namespace onda::ops
