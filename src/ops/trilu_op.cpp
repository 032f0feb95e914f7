// ONNX Trilu: keeps the upper (or lower) triangle of the last two dims from diagonal k, zeroes the
// rest. Lowered onto the elementwise Where with a host-built [rows, cols] mask broadcast over the
// batch: the mask depends only on the shape and k, so it is built once per shape, and the one
// dispatch handles every dtype Where does.
#include <fmt/format.h>

#include "graph/model_error.h"
#include "kernels/elementwise/elementwise_kernel.h"
#include "ops/kernel_plans.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

std::vector<Value> trilu(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const Shape& shape = x.shape();
  if (shape.size() < 2)
    throw ModelError(fmt::format("{}: input must have rank >= 2, got {}", node.describe(), shape.size()));
  int64_t k = 0;
  if (const Value& kv = input_or_empty(inputs, 1); kv.defined()) {
    const std::vector<int64_t> ks = constant_ints(node, kv, "k");
    if (ks.size() != 1)
      throw ModelError(fmt::format("{}: k must be a scalar, got {} values", node.describe(), ks.size()));
    k = ks[0];
  }
  const bool upper = node.attribute_int("upper", 1) != 0;
  const int64_t rows = shape[shape.size() - 2], cols = shape[shape.size() - 1];
  std::vector<int64_t> mask(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) mask[i * cols + j] = upper ? (j - i >= k) : (j - i <= k);
  Value condition;
  condition.host = HostTensor::from_int64(DType::boolean, {rows, cols}, mask);
  Value zero;
  zero.host = is_float(x.dtype()) ? HostTensor::from_double(x.dtype(), {}, {0.0})
                                  : HostTensor::from_int64(x.dtype(), {}, {0});
  Value y;
  y.device = context.allocate(x.dtype(), shape);
  rethrow_naming_node(node, [&] {
    const std::vector<Tensor> args = {context.to_device(condition), context.to_device(x),
                                      context.to_device(zero)};
    record_elementwise(context, kernels::ElementwiseOp::Where, args, y.device);
  });
  return {y};
}

}  // namespace

void register_trilu_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "Trilu", 14, trilu,
                 "elementwise Where with a host-built triangle mask; k must be known before the run"});
}

}  // namespace onda::ops
