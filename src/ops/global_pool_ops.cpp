// ONNX GlobalAveragePool / GlobalMaxPool: the reduce kernel's Mean / Max over every spatial dim,
// keeping them as 1s.
#include <fmt/format.h>

#include "graph/model_error.h"
#include "kernels/reduce/reduce_kernel.h"
#include "ops/kernel_plans.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

std::vector<Value> global_pool(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  if (rank < 3) throw ModelError(fmt::format("{}: input must be [N, C, spatial...]", node.describe()));
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  Value y;
  y.device = context.allocate(x.dtype(), kernels::reduced_shape(x.shape(), axes, true));
  rethrow_naming_node(node, [&] {
    record_reduce(context, node.op_type == "GlobalMaxPool" ? kernels::ReduceOp::Max : kernels::ReduceOp::Mean,
                  context.to_device(x), axes, y.device);
  });
  return {y};
}

}  // namespace

void register_global_pool_ops(std::vector<OpEntry>& ops) {
  for (const char* name : {"GlobalAveragePool", "GlobalMaxPool"}) {
    ops.push_back({"", name, 1, global_pool, "f32/f16: the reduce kernel over the spatial dims"});
  }
}

}  // namespace onda::ops
