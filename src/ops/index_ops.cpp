// ONNX ops that produce or consume indices: ArgMax / ArgMin (the reduce family's arg kernel),
// Hardmax (ArgMax, then a compare with the positions along the axis), GatherElements (the layout
// family).
#include <fmt/format.h>

#include "graph/model_error.h"
#include "kernels/elementwise/elementwise_kernel.h"
#include "kernels/layout/gather_elements.h"
#include "kernels/layout/gather_nd.h"
#include "kernels/layout/scatter_elements.h"
#include "kernels/reduce/arg_reduce.h"
#include "kernels/reduce/reduce_kernel.h"
#include "kernels/reduce/top_k.h"
#include "ops/kernel_plans.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

std::vector<Value> arg_reduce(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  if (!is_float(x.dtype())) {
    throw ModelError(
        fmt::format("{}: float16/float32 input required, got {}", node.describe(), dtype_name(x.dtype())));
  }
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  if (rank == 0) throw ModelError(node.describe() + ": the input is a scalar (no axis to reduce)");
  const int64_t axis = normalize_axis(node, node.attribute_int("axis", 0), rank);
  const bool keepdims = node.attribute_int("keepdims", 1) != 0;
  const bool last = node.attribute_int("select_last_index", 0) != 0;
  Value y;
  y.device = context.allocate(DType::i64, kernels::reduced_shape(x.shape(), {axis}, keepdims));
  rethrow_naming_node(node, [&] {
    kernels::record_arg_reduce(
        context.kernels, context.recorder,
        node.op_type == "ArgMax" ? kernels::ArgReduceOp::Max : kernels::ArgReduceOp::Min,
        context.to_device(x), axis, last, y.device);
  });
  return {y};
}

std::vector<Value> gather_elements(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& data = inputs.at(0);
  const Value& indices = inputs.at(1);
  const int64_t rank = static_cast<int64_t>(data.shape().size());
  const int64_t axis = normalize_axis(node, node.attribute_int("axis", 0), rank);
  std::vector<int64_t> host;
  if (indices.on_host()) host = indices.host.to_int64();
  Value y;
  y.device = context.allocate(data.dtype(), indices.shape());
  rethrow_naming_node(node, [&] {
    kernels::record_gather_elements(
        context.kernels, context.recorder, context.to_device(data), context.to_device(indices), axis,
        y.device, indices.on_host() ? std::optional<std::span<const int64_t>>(host) : std::nullopt);
  });
  return {y};
}

// Hardmax: 1 at the first maximum along the axis, 0 elsewhere. Before opset 13 the input is seen
// as 2-D [outer, inner] split at the axis (the old coerced semantics), from 13 on the one axis.
std::vector<Value> hardmax(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  if (!is_float(x.dtype())) {
    throw ModelError(
        fmt::format("{}: float16/float32 input required, got {}", node.describe(), dtype_name(x.dtype())));
  }
  const Shape& shape = x.shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) throw ModelError(node.describe() + ": the input is a scalar");
  const bool coerced = context.opset < 13;
  int64_t axis = normalize_axis(node, node.attribute_int("axis", coerced ? 1 : -1), rank);
  Shape view = shape;
  if (coerced) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= shape[d];
    view = {outer, inner};
    axis = 1;
  }
  Shape index_shape = view;
  index_shape[axis] = 1;
  std::vector<int64_t> positions(static_cast<size_t>(view[axis]));
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int64_t>(i);
  Shape position_shape(view.size(), 1);
  position_shape[axis] = view[axis];
  Value y;
  y.device = context.allocate(x.dtype(), shape);
  rethrow_naming_node(node, [&] {
    const Tensor input = context.to_device(x).reshape(view);
    Tensor index = context.allocate(DType::i64, index_shape);
    kernels::record_arg_reduce(context.kernels, context.recorder, kernels::ArgReduceOp::Max, input, axis,
                               false, index);
    Value position;
    position.host = HostTensor::from_int64(DType::i64, position_shape, positions);
    Tensor hit = context.allocate(DType::boolean, view);
    const std::vector<Tensor> compare = {index, context.to_device(position)};
    record_elementwise(context, kernels::ElementwiseOp::Equal, compare, hit);
    kernels::ElementwiseAttributes to;
    to.to = x.dtype();
    const std::vector<Tensor> cast = {hit};
    record_elementwise(context, kernels::ElementwiseOp::Cast, cast, y.device.reshape(view), to);
  });
  return {y};
}

Tensor elementwise(OpContext& context, kernels::ElementwiseOp op, const std::vector<Tensor>& inputs,
                   DType dtype, const Shape& shape, const kernels::ElementwiseAttributes& attributes = {}) {
  Tensor out = context.allocate(dtype, shape);
  record_elementwise(context, op, inputs, out, attributes);
  return out;
}

// OneHot: values[1] where the (negative-wrapped) index equals the position along the new axis,
// values[0] elsewhere: Equal of the indices against the positions, then Where.
std::vector<Value> one_hot(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& indices = inputs.at(0);
  const std::vector<double> depths = constant_doubles(node, inputs.at(1), "depth");
  if (depths.size() != 1 || !(depths[0] >= 1) || depths[0] > (1 << 24)) {
    throw ModelError(fmt::format("{}: depth must be one value in [1, 2^24]", node.describe()));
  }
  const int64_t depth = static_cast<int64_t>(depths[0]);
  const Value& values = inputs.at(2);
  if (values.shape().size() != 1 || values.shape()[0] != 2) {
    throw ModelError(fmt::format("{}: values must hold 2 elements [off, on]", node.describe()));
  }
  const int64_t out_rank = static_cast<int64_t>(indices.shape().size()) + 1;
  const int64_t axis = normalize_axis(node, node.attribute_int("axis", -1), out_rank);
  Shape out_shape = indices.shape();
  out_shape.insert(out_shape.begin() + axis, depth);
  Shape index_view = indices.shape();
  index_view.insert(index_view.begin() + axis, 1);
  Shape position_shape(out_rank, 1);
  position_shape[axis] = depth;
  std::vector<int64_t> positions(depth);
  for (int64_t i = 0; i < depth; ++i) positions[i] = i;
  Value y;
  rethrow_naming_node(node, [&] {
    Tensor idx = context.to_device(indices);
    if (idx.dtype() != DType::i64) {
      kernels::ElementwiseAttributes to;
      to.to = DType::i64;
      idx = elementwise(context, kernels::ElementwiseOp::Cast, {idx}, DType::i64, idx.shape(), to);
    }
    Value depth_value, zero, position;
    depth_value.host = HostTensor::from_int64(DType::i64, {}, {depth});
    zero.host = HostTensor::from_int64(DType::i64, {}, {0});
    position.host = HostTensor::from_int64(DType::i64, position_shape, positions);
    const Tensor negative = elementwise(context, kernels::ElementwiseOp::Less, {idx, context.to_device(zero)},
                                        DType::boolean, idx.shape());
    const Tensor wrapped = elementwise(context, kernels::ElementwiseOp::Add,
                                       {idx, context.to_device(depth_value)}, DType::i64, idx.shape());
    idx = elementwise(context, kernels::ElementwiseOp::Where, {negative, wrapped, idx}, DType::i64,
                      idx.shape());
    const Tensor hit =
        elementwise(context, kernels::ElementwiseOp::Equal,
                    {idx.reshape(index_view), context.to_device(position)}, DType::boolean, out_shape);
    const Tensor v = context.to_device(values);
    y.device = elementwise(context, kernels::ElementwiseOp::Where,
                           {hit, v.slice_outer(1, 2).reshape({}), v.slice_outer(0, 1).reshape({})},
                           values.dtype(), out_shape);
  });
  return {y};
}

// ScatterElements (and opset 9's Scatter): reduction none / add / mul / max / min.
std::vector<Value> scatter_elements(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& data = inputs.at(0);
  const Value& indices = inputs.at(1);
  const Value& updates = inputs.at(2);
  const int64_t axis =
      normalize_axis(node, node.attribute_int("axis", 0), static_cast<int64_t>(data.shape().size()));
  const std::string name = node.attribute_string("reduction", "none");
  kernels::ScatterReduction reduction;
  if (name == "none") {
    reduction = kernels::ScatterReduction::None;
  } else if (name == "add") {
    reduction = kernels::ScatterReduction::Add;
  } else if (name == "mul") {
    reduction = kernels::ScatterReduction::Mul;
  } else if (name == "max") {
    reduction = kernels::ScatterReduction::Max;
  } else if (name == "min") {
    reduction = kernels::ScatterReduction::Min;
  } else {
    throw ModelError(
        fmt::format("{}: reduction must be none, add, mul, max or min, got '{}'", node.describe(), name));
  }
  std::vector<int64_t> host;
  if (indices.on_host()) host = indices.host.to_int64();
  Value y;
  y.device = context.allocate(data.dtype(), data.shape());
  rethrow_naming_node(node, [&] {
    kernels::record_scatter_elements(
        context.kernels, context.recorder, context.to_device(data), context.to_device(indices),
        context.to_device(updates), axis, reduction, y.device,
        indices.on_host() ? std::optional<std::span<const int64_t>>(host) : std::nullopt);
  });
  return {y};
}

std::vector<Value> gather_nd(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& data = inputs.at(0);
  const Value& indices = inputs.at(1);
  const int64_t batch_dims = node.attribute_int("batch_dims", 0);
  Value y;
  rethrow_naming_node(node, [&] {
    y.device = context.allocate(data.dtype(),
                                kernels::gather_nd_output_shape(data.shape(), indices.shape(), batch_dims));
    kernels::record_gather_nd(context.kernels, context.recorder, context.to_device(data),
                              context.to_device(indices), batch_dims, y.device);
  });
  return {y};
}

// TopK: the k largest / smallest along an axis (k known before the run), sorted, with int64
// indices; the reduce family's top-k kernel.
std::vector<Value> top_k(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  if (!is_float(x.dtype())) {
    throw ModelError(
        fmt::format("{}: float16/float32 input required, got {}", node.describe(), dtype_name(x.dtype())));
  }
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  if (rank == 0) throw ModelError(node.describe() + ": the input is a scalar (no axis to take from)");
  const int64_t axis = normalize_axis(node, node.attribute_int("axis", -1), rank);
  int64_t k = 0;
  if (context.opset < 10) {
    k = node.attribute_int("k");
  } else {
    const std::vector<int64_t> ks = constant_ints(node, inputs.at(1), "K");
    if (ks.size() != 1)
      throw ModelError(fmt::format("{}: K must be one value, got {}", node.describe(), ks.size()));
    k = ks[0];
  }
  if (k < 0 || k > x.shape()[axis]) {
    throw ModelError(fmt::format("{}: K = {} outside 0..{} (the length of axis {})", node.describe(), k,
                                 x.shape()[axis], axis));
  }
  // sorted = 0 lets the output come in any order: the sorted order is one of them.
  Shape out = x.shape();
  out[axis] = k;
  Value values, indices;
  values.device = context.allocate(x.dtype(), out);
  indices.device = context.allocate(DType::i64, out);
  rethrow_naming_node(node, [&] {
    kernels::record_top_k(context.kernels, context.recorder, context.to_device(x), axis, k,
                          node.attribute_int("largest", 1) != 0, values.device, indices.device);
  });
  return {values, indices};
}

// ReverseSequence: along time_axis, the first sequence_lens[b] steps of batch b reversed, the rest
// kept. Lowered onto GatherElements with a host-built index per element (the lengths must be
// known before the run).
std::vector<Value> reverse_sequence(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const Shape& shape = x.shape();
  if (shape.size() < 2)
    throw ModelError(fmt::format("{}: input must have rank >= 2, got {}", node.describe(), shape.size()));
  const int64_t time_axis = node.attribute_int("time_axis", 0),
                batch_axis = node.attribute_int("batch_axis", 1);
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0))) {
    throw ModelError(fmt::format("{}: time_axis {} and batch_axis {} must be 0 and 1 in some order",
                                 node.describe(), time_axis, batch_axis));
  }
  const std::vector<int64_t> lengths = constant_ints(node, inputs.at(1), "sequence_lens");
  const int64_t batch = shape[batch_axis], steps = shape[time_axis];
  if (static_cast<int64_t>(lengths.size()) != batch) {
    throw ModelError(
        fmt::format("{}: {} sequence lengths for a batch of {}", node.describe(), lengths.size(), batch));
  }
  for (int64_t length : lengths) {
    if (length < 0 || length > steps)
      throw ModelError(fmt::format("{}: sequence length {} outside 0..{}", node.describe(), length, steps));
  }
  int64_t inner = 1;
  for (size_t d = 2; d < shape.size(); ++d) inner *= shape[d];
  std::vector<int64_t> index(static_cast<size_t>(shape_numel(shape)));
  for (int64_t a = 0; a < shape[0]; ++a)
    for (int64_t b = 0; b < shape[1]; ++b) {
      const int64_t t = time_axis == 0 ? a : b, length = lengths[time_axis == 0 ? b : a];
      const int64_t source = t < length ? length - 1 - t : t;
      for (int64_t i = 0; i < inner; ++i) index[(a * shape[1] + b) * inner + i] = source;
    }
  Value indices;
  indices.host = HostTensor::from_int64(DType::i64, shape, index);
  Value y;
  y.device = context.allocate(x.dtype(), shape);
  rethrow_naming_node(node, [&] {
    kernels::record_gather_elements(context.kernels, context.recorder, context.to_device(x),
                                    context.to_device(indices), time_axis, y.device,
                                    std::span<const int64_t>(index));
  });
  return {y};
}

}  // namespace

void register_index_ops(std::vector<OpEntry>& ops) {
  for (const char* name : {"ArgMax", "ArgMin"}) {
    ops.push_back({"", name, 1, arg_reduce, "f32/f16, one invocation per output column, select_last_index"});
  }
  ops.push_back(
      {"", "OneHot", 9, one_hot, "Equal against the positions, then Where; depth known before the run"});
  ops.push_back({"", "ScatterElements", 11, scatter_elements,
                 "f32/f16, every reduction: a gather over the updates (no atomics, no write races)"});
  ops.push_back({"", "GatherND", 11, gather_nd, "any dtype (bits moved), batch_dims; GPU indices clamped"});
  ops.push_back({"", "Scatter", 9, scatter_elements, "as ScatterElements (opset 9-10)"});
  ops.push_back({"", "TopK", 1, top_k,
                 "f32/f16, sorted; each element ranks itself against its row (O(length) each); K known "
                 "before the run"});
  ops.push_back({"", "ReverseSequence", 10, reverse_sequence,
                 "GatherElements with host-built indices; sequence_lens known before the run"});
  ops.push_back(
      {"", "Hardmax", 1, hardmax, "f32/f16: ArgMax, then a compare with the positions along the axis"});
  ops.push_back({"", "GatherElements", 11, gather_elements,
                 "any dtype (bits moved); host-known indices checked, GPU indices clamped"});
}

}  // namespace onda::ops
