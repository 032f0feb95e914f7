// ONNX Reduce* ops (axes as attribute before opset 18, as input from 18; keepdims;
// noop_with_empty_axes) onto the reduce kernel.
#include <fmt/format.h>

#include <algorithm>

#include "graph/model_error.h"
#include "kernels/elementwise/elementwise_kernel.h"
#include "kernels/reduce/reduce_kernel.h"
#include "ops/kernel_plans.h"
#include "ops/onnx_vocabulary.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

void elementwise(OpContext& context, kernels::ElementwiseOp op, std::vector<Tensor> inputs,
                 const Tensor& out) {
  record_elementwise(context, op, inputs, out);
}

// ReduceLogSum = log(sum x); ReduceLogSumExp = m + log(sum exp(x - m)) with m the maximum over the
// axes (no overflow of exp): composed from the reduce and elementwise kernels.
void record_log_sum(OpContext& context, const Tensor& x, const std::vector<int64_t>& axes, bool of_exp,
                    const Tensor& y) {
  const Shape kept = kernels::reduced_shape(x.shape(), axes, true);
  Tensor sum = context.allocate(x.dtype(), kept);
  const Tensor out = y.reshape(kept);
  if (!of_exp) {
    record_reduce(context, kernels::ReduceOp::Sum, x, axes, sum);
    return elementwise(context, kernels::ElementwiseOp::Log, {sum}, out);
  }
  Tensor max = context.allocate(x.dtype(), kept);
  record_reduce(context, kernels::ReduceOp::Max, x, axes, max);
  Tensor shifted = context.allocate(x.dtype(), x.shape());
  Tensor exps = context.allocate(x.dtype(), x.shape());
  elementwise(context, kernels::ElementwiseOp::Sub, {x, max}, shifted);
  elementwise(context, kernels::ElementwiseOp::Exp, {shifted}, exps);
  record_reduce(context, kernels::ReduceOp::Sum, exps, axes, sum);
  Tensor log_sum = context.allocate(x.dtype(), kept);
  elementwise(context, kernels::ElementwiseOp::Log, {sum}, log_sum);
  elementwise(context, kernels::ElementwiseOp::Add, {log_sum, max}, out);
}

std::vector<Value> reduce(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  // ReduceSum moved axes to an input in opset 13, the others in 18.
  const bool axes_input = context.opset >= (node.op_type == "ReduceSum" ? 13 : 18);
  std::vector<int64_t> axes;
  if (axes_input) {
    if (inputs.size() > 1 && inputs[1].defined()) {
      if (!inputs[1].on_host()) throw ModelError(node.describe() + ": axes must be a constant");
      axes = inputs[1].host.to_int64();
    }
  } else {
    axes = node.attribute_ints("axes", {});
  }
  const bool keepdims = node.attribute_int("keepdims", 1) != 0;
  if (axes.empty()) {
    if (node.attribute_int("noop_with_empty_axes", 0) != 0) return {x};
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  for (auto& a : axes) {
    if (a < -rank || a >= rank) throw ModelError(fmt::format("{}: axis {} out of range for rank {}", node.describe(), a, rank));
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  Value y;
  y.device = context.allocate(x.dtype(), kernels::reduced_shape(x.shape(), axes, keepdims));
  try {
    if (node.op_type == "ReduceLogSum" || node.op_type == "ReduceLogSumExp") {
      record_log_sum(context, context.to_device(x), axes, node.op_type == "ReduceLogSumExp", y.device);
    } else {
      record_reduce(context, reduce_op_from_onnx(node.op_type), context.to_device(x), axes, y.device);
    }
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
  return {y};
}

}  // namespace

void register_reduction_ops(std::vector<OpEntry>& ops) {
  for (const char* name :
       {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
        "ReduceLogSum", "ReduceLogSumExp"}) {
    ops.push_back({"", name, 1, reduce, "f32/f16, any axes, f32 accumulation"});
  }
}

}  // namespace onda::ops
