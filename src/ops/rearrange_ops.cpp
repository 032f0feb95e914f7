// ONNX DepthToSpace / SpaceToDepth: a reshape to 6-D, one transpose (the layout family's), and a
// reshape back, with the DCR / CRD orders of ONNX's definition.
#include <fmt/format.h>

#include "graph/model_error.h"
#include "kernels/layout/transpose.h"
#include "ops/kernel_plans.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

Value transposed(const Node& node, OpContext& context, const Value& x, const Shape& view,
                 const std::vector<int64_t>& perm, const Shape& out_shape) {
  Value y;
  y.device = context.allocate(x.dtype(), out_shape);
  rethrow_naming_node(node, [&] {
    const Tensor input = context.to_device(x).reshape(view);
    const Tensor output = y.device.reshape(kernels::transpose_output_shape(view, perm));
    record_layout(context, kernels::LayoutProblem::transpose(view, x.dtype(), perm, output.shape()),
                  std::span(&input, 1), std::span(&output, 1));
  });
  return y;
}

std::vector<Value> depth_to_space(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const Shape& s = x.shape();
  const int64_t b = node.attribute_int("blocksize");
  if (s.size() != 4) throw ModelError(fmt::format("{}: input must be 4-D [N, C, H, W]", node.describe()));
  if (b <= 0 || s[1] % (b * b) != 0) {
    throw ModelError(fmt::format("{}: blocksize {} must divide the {} channels into blocksize^2 groups",
                                 node.describe(), b, s[1]));
  }
  const int64_t n = s[0], c = s[1] / (b * b), h = s[2], w = s[3];
  const std::string mode = node.attribute_string("mode", "DCR");
  const Shape out = {n, c, h * b, w * b};
  if (mode == "DCR") return {transposed(node, context, x, {n, b, b, c, h, w}, {0, 3, 4, 1, 5, 2}, out)};
  if (mode == "CRD") return {transposed(node, context, x, {n, c, b, b, h, w}, {0, 1, 4, 2, 5, 3}, out)};
  throw ModelError(fmt::format("{}: mode must be DCR or CRD, got '{}'", node.describe(), mode));
}

std::vector<Value> space_to_depth(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const Shape& s = x.shape();
  const int64_t b = node.attribute_int("blocksize");
  if (s.size() != 4) throw ModelError(fmt::format("{}: input must be 4-D [N, C, H, W]", node.describe()));
  if (b <= 0 || s[2] % b != 0 || s[3] % b != 0) {
    throw ModelError(
        fmt::format("{}: blocksize {} must divide H {} and W {}", node.describe(), b, s[2], s[3]));
  }
  const int64_t n = s[0], c = s[1], h = s[2] / b, w = s[3] / b;
  return {transposed(node, context, x, {n, c, h, b, w, b}, {0, 3, 5, 1, 2, 4}, {n, c * b * b, h, w})};
}

}  // namespace

void register_rearrange_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "DepthToSpace", 1, depth_to_space, "DCR / CRD: one transpose of a 6-D view"});
  ops.push_back({"", "SpaceToDepth", 1, space_to_depth, "one transpose of a 6-D view"});
}

}  // namespace onda::ops
