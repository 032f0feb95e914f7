// ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (a loss is also evaluated at inference,
// e.g. to score a model's outputs), composed from kernels onda has: the picked log-probabilities by
// GatherElements along the class axis, the class weights by Gather, ignore_index as an Equal mask
// with Where, the reduction by ReduceSum (mean divides by the summed weights); SoftmaxCrossEntropy
// puts a LogSoftmax over the class axis in front.
#include <fmt/format.h>

#include "graph/model_error.h"
#include "kernels/elementwise/elementwise_kernel.h"
#include "kernels/layout/gather.h"
#include "kernels/layout/gather_elements.h"
#include "kernels/reduce/reduce_kernel.h"
#include "kernels/softmax/softmax_kernel.h"
#include "ops/kernel_plans.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

Tensor elementwise(OpContext& context, kernels::ElementwiseOp op, const std::vector<Tensor>& inputs,
                   DType dtype, const Shape& shape) {
  Tensor out = context.allocate(dtype, shape);
  record_elementwise(context, op, inputs, out);
  return out;
}

Tensor sum_all(OpContext& context, const Tensor& x) {
  std::vector<int64_t> axes(x.shape().size());
  for (size_t d = 0; d < axes.size(); ++d) axes[d] = static_cast<int64_t>(d);
  Tensor out = context.allocate(x.dtype(), {});
  record_reduce(context, kernels::ReduceOp::Sum, x, axes, out);
  return out;
}

Tensor scalar(OpContext& context, DType dtype, double value) {
  Value v;
  v.host = is_float(dtype) ? HostTensor::from_double(dtype, {}, {value})
                           : HostTensor::from_int64(dtype, {}, {static_cast<int64_t>(value)});
  return context.to_device(v);
}

// loss[n, d...] = -log_prob[n, target[n, d...], d...] * weight[target[n, d...]], 0 where target is
// ignore_index; reduced by `reduction`.
Tensor nll(const Node& node, OpContext& context, const Tensor& log_prob, const Value& target,
           const Value& weight) {
  const Shape& shape = log_prob.shape();
  const DType dtype = log_prob.dtype();
  if (!is_float(dtype)) throw ModelError(fmt::format("{}: float16/float32 input required", node.describe()));
  if (shape.size() < 2) throw ModelError(fmt::format("{}: input must be [N, C, ...]", node.describe()));
  Shape loss_shape = shape;
  loss_shape.erase(loss_shape.begin() + 1);
  if (target.shape() != loss_shape) {
    throw ModelError(fmt::format("{}: target {} must be the input {} without its class dim", node.describe(),
                                 shape_to_string(target.shape()), shape_to_string(shape)));
  }
  const std::string reduction = node.attribute_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    throw ModelError(
        fmt::format("{}: reduction must be none, sum or mean, got '{}'", node.describe(), reduction));
  }
  const bool has_ignore = node.has_attribute("ignore_index");
  const int64_t ignore = node.attribute_int("ignore_index", 0);
  const Tensor t = context.to_device(target);
  Shape picked_shape = shape;
  picked_shape[1] = 1;
  // Targets equal to ignore_index may lie outside [0, C): the GPU clamps them, and the mask below
  // zeroes what they picked.
  Tensor picked = context.allocate(dtype, picked_shape);
  kernels::record_gather_elements(context.kernels, context.recorder, log_prob, t.reshape(picked_shape), 1,
                                  picked);
  Tensor loss =
      elementwise(context, kernels::ElementwiseOp::Neg, {picked.reshape(loss_shape)}, dtype, loss_shape);
  Tensor w;  // the weight of each element (undefined: all 1)
  if (weight.defined()) {
    w = context.allocate(dtype, loss_shape);
    record_gather(context, context.to_device(weight), t, 0, w);
  }
  if (has_ignore) {
    const Tensor kept =
        elementwise(context, kernels::ElementwiseOp::Not,
                    {elementwise(context, kernels::ElementwiseOp::Equal,
                                 {t, scalar(context, t.dtype(), ignore)}, DType::boolean, loss_shape)},
                    DType::boolean, loss_shape);
    w = elementwise(context, kernels::ElementwiseOp::Where,
                    {kept, w.defined() ? w : scalar(context, dtype, 1.0), scalar(context, dtype, 0.0)}, dtype,
                    loss_shape);
  }
  if (w.defined()) loss = elementwise(context, kernels::ElementwiseOp::Mul, {loss, w}, dtype, loss_shape);
  if (reduction == "none") return loss;
  const Tensor total = sum_all(context, loss);
  if (reduction == "sum") return total;
  const Tensor count = w.defined() ? sum_all(context, w)
                                   : scalar(context, dtype, static_cast<double>(shape_numel(loss_shape)));
  return elementwise(context, kernels::ElementwiseOp::Div, {total, count}, dtype, {});
}

std::vector<Value> negative_log_likelihood(const Node& node, OpContext& context,
                                           const std::vector<Value>& inputs) {
  Value out;
  rethrow_naming_node(node, [&] {
    out.device = nll(node, context, context.to_device(inputs.at(0)), inputs.at(1), input_or_empty(inputs, 2));
  });
  return {out};
}

std::vector<Value> softmax_cross_entropy(const Node& node, OpContext& context,
                                         const std::vector<Value>& inputs) {
  const Value& scores = inputs.at(0);
  if (!is_float(scores.dtype()))
    throw ModelError(fmt::format("{}: float16/float32 scores required", node.describe()));
  if (scores.shape().size() < 2)
    throw ModelError(fmt::format("{}: scores must be [N, C, ...]", node.describe()));
  std::vector<Value> outputs(node.outputs.size());
  rethrow_naming_node(node, [&] {
    Tensor log_prob = context.allocate(scores.dtype(), scores.shape());
    record_softmax(context, context.to_device(scores), 1, true, log_prob);
    outputs[0].device = nll(node, context, log_prob, inputs.at(1), input_or_empty(inputs, 2));
    if (outputs.size() > 1) outputs[1].device = log_prob;
  });
  return outputs;
}

}  // namespace

void register_loss_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "NegativeLogLikelihoodLoss", 12, negative_log_likelihood,
                 "f32/f16: GatherElements + Gather of the weights + masks and ReduceSum"});
  ops.push_back({"", "SoftmaxCrossEntropyLoss", 12, softmax_cross_entropy,
                 "f32/f16: LogSoftmax over the class axis, then as NegativeLogLikelihoodLoss"});
}

}  // namespace onda::ops
