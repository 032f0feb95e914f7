// ONNX GridSample (opset 16: modes bilinear / nearest / bicubic; opset 20: linear / nearest / cubic,
// any spatial rank, here 1 to 3): attributes parsed into the layout family's kernel
// (kernels/layout/grid_sample.h).
#include <fmt/format.h>

#include "graph/model_error.h"
#include "kernels/layout/grid_sample.h"
#include "ops/enum_attribute.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

using kernels::GridSampleMode;
using kernels::GridSamplePadding;

std::vector<Value> grid_sample(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = input_or_empty(inputs, 0);
  const Value& grid = input_or_empty(inputs, 1);
  if (!x.defined() || !grid.defined() || x.is_sequence() || grid.is_sequence())
    throw ModelError(node.describe() + ": needs an input tensor and a grid");
  if (!is_float(x.dtype()) || !is_float(grid.dtype()))
    throw ModelError(fmt::format("{}: input and grid must be float, got {} and {}", node.describe(),
                                 dtype_name(x.dtype()), dtype_name(grid.dtype())));
  kernels::GridSampleAttributes attributes;
  attributes.mode = context.opset >= 20
                        ? enum_attribute<GridSampleMode>(node, "mode", "linear",
                                                         {{"linear", GridSampleMode::Linear},
                                                          {"nearest", GridSampleMode::Nearest},
                                                          {"cubic", GridSampleMode::Cubic}})
                        : enum_attribute<GridSampleMode>(node, "mode", "bilinear",
                                                         {{"bilinear", GridSampleMode::Linear},
                                                          {"nearest", GridSampleMode::Nearest},
                                                          {"bicubic", GridSampleMode::Cubic}});
  attributes.padding = enum_attribute<GridSamplePadding>(node, "padding_mode", "zeros",
                                                         {{"zeros", GridSamplePadding::Zeros},
                                                          {"border", GridSamplePadding::Border},
                                                          {"reflection", GridSamplePadding::Reflection}});
  attributes.align_corners = node.attribute_int("align_corners", 0) != 0;
  Shape out_shape;
  rethrow_naming_node(node, [&] { out_shape = kernels::grid_sample_output_shape(x.shape(), grid.shape()); });
  if (context.opset < 20 && x.shape().size() != 4)
    throw ModelError(fmt::format("{}: opset {} GridSample takes a 4-D input, got {}", node.describe(),
                                 context.opset, shape_to_string(x.shape())));
  Value y;
  y.device = context.allocate(x.dtype(), out_shape);
  rethrow_naming_node(node, [&] {
    kernels::record_grid_sample(context.kernels, context.recorder, context.to_device(x),
                                context.to_device(grid), attributes, y.device);
  });
  return {y};
}

}  // namespace

void register_grid_sample_ops(std::vector<OpEntry>& ops) {
  ops.push_back(
      {"", "GridSample", 16, grid_sample,
       "nearest / linear / cubic (A = -0.75), zeros / border / reflection padding, 1-3 spatial dims"});
}

}  // namespace onda::ops
