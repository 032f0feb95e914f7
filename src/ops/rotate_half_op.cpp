// onda::RotateHalf, the node graph/fuse_rotate_half.h puts in place of a rotary embedding's Split,
// Neg and Concat: one kernel over the last axis (kernels/layout/rotate_half.h).
#include <fmt/format.h>

#include "graph/fuse_attention.h"
#include "graph/fuse_rotate_half.h"
#include "graph/model_error.h"
#include "kernels/layout/rotate_half.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

std::vector<Value> rotate_half(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  if (inputs.size() != 1 || !inputs[0].defined()) throw ModelError(node.describe() + ": needs one input");
  Value out;
  out.device = context.allocate(inputs[0].dtype(), inputs[0].shape());
  try {
    kernels::record_rotate_half(context.kernels, context.recorder, context.to_device(inputs[0]), out.device);
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
  return {out};
}

}  // namespace

void register_rotate_half_ops(std::vector<OpEntry>& ops) {
  ops.push_back({std::string(kOndaDomain), std::string(kRotateHalfOp), 0, rotate_half,
                 "internal: a rotary embedding's Split -> Neg -> Concat fused at plan time (one pass)"});
}

}  // namespace onda::ops
