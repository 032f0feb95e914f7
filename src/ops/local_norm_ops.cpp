// ONNX LRN and MeanVarianceNormalization, composed from kernels onda has. LRN's sum of squares over
// a window of channels is an AveragePool (count_include_pad, so the mean is the sum / size) over the
// squares viewed as [N, 1, C, rest]; MVN is (x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9) with
// ReduceMean, as ONNX's function body defines it.
#include <fmt/format.h>

#include <algorithm>

#include "graph/model_error.h"
#include "kernels/elementwise/elementwise_kernel.h"
#include "kernels/layout/pool.h"
#include "kernels/reduce/reduce_kernel.h"
#include "ops/kernel_plans.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

Tensor elementwise(OpContext& context, kernels::ElementwiseOp op, const std::vector<Tensor>& inputs,
                   const Shape& shape) {
  Tensor out = context.allocate(inputs[0].dtype(), shape);
  record_elementwise(context, op, inputs, out);
  return out;
}

Tensor scalar(OpContext& context, DType dtype, double value) {
  Value v;
  v.host = HostTensor::from_double(dtype, {}, {value});
  return context.to_device(v);
}

std::vector<Value> lrn(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const Shape& shape = x.shape();
  if (!is_float(x.dtype()) || shape.size() < 3) {
    throw ModelError(fmt::format("{}: input must be float16/float32 [N, C, ...]", node.describe()));
  }
  const int64_t size = node.attribute_int("size");
  if (size < 1) throw ModelError(fmt::format("{}: size must be positive, got {}", node.describe(), size));
  const double alpha = node.attribute_float("alpha", 1e-4f), beta = node.attribute_float("beta", 0.75f),
               bias = node.attribute_float("bias", 1.0f);
  int64_t rest = 1;
  for (size_t d = 2; d < shape.size(); ++d) rest *= shape[d];
  const Shape view = {shape[0], 1, shape[1], rest};
  Value y;
  rethrow_naming_node(node, [&] {
    const Tensor input = context.to_device(x);
    const Tensor squares = elementwise(context, kernels::ElementwiseOp::Mul, {input, input}, shape);
    kernels::Pool2dAttributes pool;
    pool.kind = kernels::PoolKind::Average;
    pool.kernel_h = size;
    pool.pad_top = (size - 1) / 2;
    pool.pad_bottom = size - 1 - (size - 1) / 2;
    pool.count_include_pad = true;
    Tensor mean = context.allocate(x.dtype(), view);
    kernels::record_pool2d(context.kernels, context.recorder, squares.reshape(view), pool, mean);
    const Tensor scaled = elementwise(context, kernels::ElementwiseOp::Mul,
                                      {mean.reshape(shape), scalar(context, x.dtype(), alpha)}, shape);
    const Tensor shifted =
        elementwise(context, kernels::ElementwiseOp::Add, {scaled, scalar(context, x.dtype(), bias)}, shape);
    const Tensor denominator =
        elementwise(context, kernels::ElementwiseOp::Pow, {shifted, scalar(context, x.dtype(), beta)}, shape);
    y.device = elementwise(context, kernels::ElementwiseOp::Div, {input, denominator}, shape);
  });
  return {y};
}

std::vector<Value> mean_variance_normalization(const Node& node, OpContext& context,
                                               const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const Shape& shape = x.shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (!is_float(x.dtype()))
    throw ModelError(fmt::format("{}: float16/float32 input required", node.describe()));
  std::vector<int64_t> axes = node.attribute_ints("axes", {0, 2, 3});
  for (auto& a : axes) a = normalize_axis(node, a, rank);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  const Shape kept = kernels::reduced_shape(shape, axes, true);
  Value y;
  rethrow_naming_node(node, [&] {
    const Tensor input = context.to_device(x);
    Tensor mean = context.allocate(x.dtype(), kept);
    record_reduce(context, kernels::ReduceOp::Mean, input, axes, mean);
    const Tensor centred = elementwise(context, kernels::ElementwiseOp::Sub, {input, mean}, shape);
    Tensor variance = context.allocate(x.dtype(), kept);
    record_reduce(context, kernels::ReduceOp::SumSquare, centred, axes, variance);
    int64_t count = 1;
    for (int64_t a : axes) count *= shape[a];
    const Tensor mean_square = elementwise(context, kernels::ElementwiseOp::Div,
                                           {variance, scalar(context, x.dtype(), double(count))}, kept);
    const Tensor deviation = elementwise(context, kernels::ElementwiseOp::Sqrt, {mean_square}, kept);
    const Tensor denominator = elementwise(context, kernels::ElementwiseOp::Add,
                                           {deviation, scalar(context, x.dtype(), 1e-9)}, kept);
    y.device = elementwise(context, kernels::ElementwiseOp::Div, {centred, denominator}, shape);
  });
  return {y};
}

}  // namespace

void register_local_norm_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "LRN", 1, lrn, "f32/f16: squares, AveragePool over the channel window, Pow, Div"});
  ops.push_back({"", "MeanVarianceNormalization", 9, mean_variance_normalization,
                 "f32/f16: ReduceMean, SumSquare of the centred values, Div (ONNX's function body)"});
}

}  // namespace onda::ops
