// ONNX Det: determinants of the square matrices in the last two dims, on the reduce family's
// determinant kernel (partial pivoting in f32; matrices up to 16x16).
#include <fmt/format.h>

#include "graph/model_error.h"
#include "kernels/reduce/determinant.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

std::vector<Value> det(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const Shape& shape = x.shape();
  if (shape.size() < 2 || shape[shape.size() - 1] != shape[shape.size() - 2])
    throw ModelError(fmt::format("{}: input {} is not [..., n, n]", node.describe(), shape_to_string(shape)));
  if (!is_float(x.dtype())) {
    throw ModelError(
        fmt::format("{}: float16/float32 input required, got {}", node.describe(), dtype_name(x.dtype())));
  }
  Value y;
  y.device = context.allocate(x.dtype(), Shape(shape.begin(), shape.end() - 2));
  rethrow_naming_node(node, [&] {
    kernels::record_determinant(context.kernels, context.recorder, context.to_device(x), y.device);
  });
  return {y};
}

}  // namespace

void register_det_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "Det", 11, det, "f32/f16, one invocation per matrix, partial pivoting in f32, n <= 16"});
}

}  // namespace onda::ops
