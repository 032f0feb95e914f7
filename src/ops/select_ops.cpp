// Ops whose output shape depends on the input's values: NonZero and Compress. Both count the
// selected elements on the GPU (kernels/layout/nonzero.h), read the count back mid-run (the same
// read-back as an If whose condition only the GPU holds, ops::OpContext::read_back: the work
// recorded so far is submitted and waited for, and the run is never replayed from a capture), then
// record the rest at the size now known. A value already on the host is selected on the host.
#include <fmt/format.h>

#include "graph/model_error.h"
#include "kernels/layout/gather.h"
#include "kernels/layout/nonzero.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

// The row-major positions of the nonzero elements of a host value (NaN counts as nonzero).
std::vector<int64_t> host_nonzero_positions(const HostTensor& x) {
  std::vector<int64_t> positions;
  const std::vector<double> values = x.to_double();
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] != 0.0) positions.push_back(static_cast<int64_t>(i));
  return positions;
}

void require_read_back(const Node& node, const OpContext& context) {
  if (!context.read_back)
    throw ModelError(
        fmt::format("{}: its output's shape depends on values only the GPU holds, and this "
                    "context cannot read them back",
                    node.describe()));
}

// [rank (1 for a scalar), count] int64 coordinates of the nonzero elements of `x`.
Value nonzero_indices(const Node& node, OpContext& context, const Value& x) {
  const Shape& shape = x.shape();
  const int64_t rank = std::max<int64_t>(static_cast<int64_t>(shape.size()), 1);
  if (x.on_host()) {
    const std::vector<int64_t> positions = host_nonzero_positions(x.host);
    const int64_t count = static_cast<int64_t>(positions.size());
    std::vector<int64_t> coordinates(static_cast<size_t>(rank * count));
    for (int64_t k = 0; k < count; ++k) {
      int64_t rest = positions[k];
      for (int64_t d = rank - 1; d >= 0; --d) {
        const int64_t size = shape.empty() ? 1 : shape[d];
        coordinates[d * count + k] = rest % size;
        rest /= size;
      }
    }
    return Value{.host = HostTensor::from_values<int64_t>({rank, count}, coordinates)};
  }
  require_read_back(node, context);
  Value result;
  rethrow_naming_node(node, [&] {
    const Tensor input = context.to_device(x);
    const kernels::NonzeroCount counted =
        kernels::record_nonzero_count(context.kernels, context.recorder, context.pool, input);
    const int64_t count = context.read_back(Value{.device = counted.count}).to_int64().at(0);
    result.device = context.allocate(DType::i64, {rank, count});
    kernels::record_nonzero_indices(context.kernels, context.recorder, input, counted, result.device);
  });
  return result;
}

std::vector<Value> nonzero(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  if (!x.defined()) throw ModelError(node.describe() + ": has no input");
  return {nonzero_indices(node, context, x)};
}

// Compress: the slices of `input` along `axis` (or of the flattened input, without an axis) whose
// entry of the 1-D bool `condition` is true; a condition shorter than the axis leaves the rest out.
// Its positions are NonZero's, then a Gather along the axis.
std::vector<Value> compress(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const Value& condition = input_or_empty(inputs, 1);
  if (!x.defined() || !condition.defined())
    throw ModelError(node.describe() + ": needs an input and a condition");
  if (condition.shape().size() != 1 || condition.dtype() != DType::boolean)
    throw ModelError(fmt::format("{}: condition must be a 1-D bool tensor, it is {} of shape {}",
                                 node.describe(), dtype_name(condition.dtype()),
                                 shape_to_string(condition.shape())));
  const bool flatten = !node.has_attribute("axis");
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  const int64_t axis = flatten ? 0 : normalize_axis(node, node.attribute_int("axis"), rank);
  if (!flatten && rank == 0) throw ModelError(node.describe() + ": an axis is given for a scalar input");
  const Shape data_shape = flatten ? Shape{shape_numel(x.shape())} : x.shape();
  if (condition.shape()[0] > data_shape[axis])
    throw ModelError(fmt::format("{}: condition has {} entries, the axis only {}", node.describe(),
                                 condition.shape()[0], data_shape[axis]));
  Value positions = nonzero_indices(node, context, condition);
  const int64_t count = positions.shape()[1];
  Shape out_shape = data_shape;
  out_shape[axis] = count;
  Value y;
  y.device = context.allocate(x.dtype(), out_shape);
  if (count == 0) return {y};
  rethrow_naming_node(node, [&] {
    const Tensor indices = positions.on_host()
                               ? context.to_device(Value{.host = positions.host.reshaped({count})})
                               : positions.device.reshape({count});
    kernels::record_gather(context.kernels, context.recorder, context.to_device(x).reshape(data_shape),
                           indices, axis, y.device);
  });
  return {y};
}

}  // namespace

void register_select_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "NonZero", 9, nonzero,
                 "GPU stream compaction (block counts, scan, scatter); the count is read back mid-run"});
  ops.push_back({"", "Compress", 9, compress,
                 "NonZero of the condition (read back mid-run unless known before the run), then Gather"});
}

}  // namespace onda::ops
