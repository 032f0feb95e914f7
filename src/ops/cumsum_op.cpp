// ONNX CumSum: the running sum along one axis (the 'axis' input, known before the run), inclusive
// or exclusive, forwards or reversed, on the reduce family's cumulative-sum kernel (float tensors;
// a DOUBLE graph runs it in float32, see graph/onnx_data_type.h).
#include <fmt/format.h>

#include "graph/model_error.h"
#include "kernels/reduce/cumulative_sum.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

std::vector<Value> cumsum(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  if (!is_float(x.dtype())) {
    throw ModelError(
        fmt::format("{}: float16/float32 input required (integer CumSum is not supported), got {}",
                    node.describe(), dtype_name(x.dtype())));
  }
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  if (rank == 0) throw ModelError(node.describe() + ": the input is a scalar (no axis to sum along)");
  const std::vector<int64_t> axes = constant_ints(node, input_or_empty(inputs, 1), "axis");
  if (axes.size() != 1)
    throw ModelError(fmt::format("{}: axis must be one value, got {}", node.describe(), axes.size()));
  const int64_t axis = normalize_axis(node, axes[0], rank);
  kernels::CumulativeSumOptions options;
  options.exclusive = node.attribute_int("exclusive", 0) != 0;
  options.reverse = node.attribute_int("reverse", 0) != 0;
  Value y;
  y.device = context.allocate(x.dtype(), x.shape());
  rethrow_naming_node(node, [&] {
    kernels::record_cumulative_sum(context.kernels, context.recorder, context.to_device(x), axis, options,
                                   y.device);
  });
  return {y};
}

}  // namespace

void register_cumsum_ops(std::vector<OpEntry>& ops) {
  ops.push_back(
      {"", "CumSum", 11, cumsum,
       "f32/f16, one invocation per column walks the axis (Kahan-compensated); axis known before the run"});
}

}  // namespace onda::ops
