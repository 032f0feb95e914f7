// ONNX MaxUnpool: the inverse of MaxPool with indices: an output of zeros with each input value
// written at its index (an index into the whole flattened output, as MaxPool's Indices give it).
// Output shape: `output_shape` when given, else (in - 1) * stride + kernel - pad_begin - pad_end per
// spatial dim. Lowered onto Expand (the zeros) and ScatterElements along the flattened output.
#include <fmt/format.h>

#include "graph/model_error.h"
#include "kernels/layout/expand_tile.h"
#include "kernels/layout/scatter_elements.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

std::vector<Value> max_unpool(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = input_or_empty(inputs, 0);
  const Value& indices = input_or_empty(inputs, 1);
  if (!x.defined() || !indices.defined()) throw ModelError(node.describe() + ": needs X and I");
  if (!is_float(x.dtype()))
    throw ModelError(fmt::format("{}: X must be float, got {}", node.describe(), dtype_name(x.dtype())));
  const Shape& xs = x.shape();
  if (xs.size() < 3 || indices.shape() != xs)
    throw ModelError(fmt::format("{}: X {} must be [N, C, spatial...] and I of the same shape, I is {}",
                                 node.describe(), shape_to_string(xs), shape_to_string(indices.shape())));
  const size_t spatial = xs.size() - 2;
  const std::vector<int64_t> kernel = node.attribute_ints("kernel_shape");
  const std::vector<int64_t> strides = node.attribute_ints("strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads = node.attribute_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  if (kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial)
    throw ModelError(fmt::format("{}: kernel_shape, strides and pads must have {}, {} and {} entries",
                                 node.describe(), spatial, spatial, 2 * spatial));
  Shape inferred = {xs[0], xs[1]};
  for (size_t d = 0; d < spatial; ++d)
    inferred.push_back((xs[2 + d] - 1) * strides[d] + kernel[d] - pads[d] - pads[spatial + d]);
  Shape out_shape = inferred;
  if (const Value& given = input_or_empty(inputs, 2); given.defined()) {
    out_shape = constant_ints(node, given, "output_shape");
    if (out_shape.size() != xs.size())
      throw ModelError(fmt::format("{}: output_shape {} must have X's rank {}", node.describe(),
                                   shape_to_string(out_shape), xs.size()));
  }
  for (int64_t d : out_shape)
    if (d <= 0)
      throw ModelError(
          fmt::format("{}: output shape {} is empty", node.describe(), shape_to_string(out_shape)));
  const int64_t total = shape_numel(out_shape), count = shape_numel(xs);
  Value y;
  y.device = context.allocate(x.dtype(), out_shape);
  rethrow_naming_node(node, [&] {
    const Tensor zero = context.to_device(Value{.host = HostTensor::from_double(x.dtype(), {1}, {0.0})});
    Tensor zeros = context.allocate(x.dtype(), {total});
    kernels::record_expand(context.kernels, context.recorder, zero, zeros);
    std::optional<std::vector<int64_t>> host;
    if (indices.on_host()) host = indices.host.to_int64();
    Value positions = indices;
    if (out_shape != inferred) {
      // The indices address the inferred shape (as MaxPool gave them); each keeps its coordinates in
      // the larger given shape, as ONNX Runtime places them. Needs their values: read back if only the
      // GPU holds them.
      if (!host) {
        if (!context.read_back) throw ModelError(node.describe() + ": cannot read the indices back");
        host = context.read_back(indices).to_int64();
      }
      for (int64_t& index : *host) {
        int64_t rest = index, moved = 0, stride = 1;
        for (size_t d = inferred.size(); d-- > 0;) {
          const int64_t c = rest % inferred[d];
          rest /= inferred[d];
          if (c >= out_shape[d])
            throw std::out_of_range(
                fmt::format("index {} falls outside output_shape {}", index, shape_to_string(out_shape)));
          moved += c * stride;
          stride *= out_shape[d];
        }
        index = moved;
      }
      positions = Value{.host = HostTensor::from_values<int64_t>(xs, *host)};
    }
    kernels::record_scatter_elements(
        context.kernels, context.recorder, zeros, context.to_device(positions).reshape({count}),
        context.to_device(x).reshape({count}), 0, kernels::ScatterReduction::None, y.device.reshape({total}),
        host ? std::optional<std::span<const int64_t>>(*host) : std::nullopt);
  });
  return {y};
}

}  // namespace

void register_max_unpool_ops(std::vector<OpEntry>& ops) {
  ops.push_back(
      {"", "MaxUnpool", 9, max_unpool, "Expand of zero, then ScatterElements at the flattened indices"});
}

}  // namespace onda::ops
