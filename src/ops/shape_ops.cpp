// Ops that only relabel a GPU tensor (Reshape, Flatten, Squeeze, Unsqueeze: views, no copy) or
// read its static shape (Shape, Size: host values). The runtime evaluates them on the host instead
// when their inputs are host values.
#include <fmt/format.h>

#include "graph/host_ops.h"
#include "graph/shape_functions.h"
#include "graph/model_error.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"
#include "ops/value_view.h"

namespace onda::ops {
namespace {

std::vector<Value> reshape(const Node& node, OpContext&, const std::vector<Value>& inputs) {
  const std::vector<int64_t> requested = constant_ints(node, inputs.at(1), "shape");
  return {reshaped_view(inputs[0], reshape_output_shape(node, inputs[0].shape(), requested))};
}

std::vector<Value> flatten(const Node& node, OpContext&, const std::vector<Value>& inputs) {
  const Shape& s = inputs.at(0).shape();
  int64_t axis = node.attribute_int("axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(s.size());
  if (axis < 0 || axis > static_cast<int64_t>(s.size())) throw ModelError(node.describe() + ": axis out of range");
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= s[d];
  return {reshaped_view(inputs[0], {outer, shape_numel(s) / std::max<int64_t>(outer, 1)})};
}

std::vector<Value> squeeze(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  std::optional<std::vector<int64_t>> axes;
  if (context.opset >= 13) {
    if (inputs.size() > 1 && inputs[1].defined()) axes = constant_ints(node, inputs[1], "axes");
  } else if (node.has_attribute("axes")) {
    axes = node.attribute_ints("axes");
  }
  return {reshaped_view(inputs.at(0), squeeze_output_shape(node, inputs[0].shape(), axes))};
}

std::vector<Value> unsqueeze(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const std::vector<int64_t> axes = context.opset >= 13 ? constant_ints(node, inputs.at(1), "axes") : node.attribute_ints("axes");
  return {reshaped_view(inputs.at(0), unsqueeze_output_shape(node, inputs[0].shape(), axes))};
}

std::vector<Value> shape(const Node& node, OpContext&, const std::vector<Value>& inputs) {
  Value out;
  out.host = shape_op_result(node, inputs.at(0).shape());
  return {out};
}

std::vector<Value> size(const Node&, OpContext&, const std::vector<Value>& inputs) {
  Value out;
  out.host = HostTensor::from_int64(DType::i64, {}, {shape_numel(inputs.at(0).shape())});
  return {out};
}

// Ops evaluated on the host because their inputs are constants once input shapes are known (Range
// in exported position embeddings): the result is tiny shape-like data; a GPU-valued input is an error.
std::vector<Value> host_only(const Node& node, OpContext&, const std::vector<Value>& inputs) {
  std::vector<HostTensor> args;
  for (const auto& v : inputs) {
    if (v.defined() && !v.on_host()) {
      throw ModelError(node.describe() + ": inputs must be constants (known before the run)");
    }
    args.push_back(v.host);
  }
  std::vector<Value> out;
  for (auto& t : find_host_op(node.op_type)(node, args)) out.push_back(Value{std::move(t), Tensor()});
  return out;
}

}  // namespace

void register_shape_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "Reshape", 5, reshape, "view, no copy; shape must be constant"});
  ops.push_back({"", "Flatten", 1, flatten, "view, no copy"});
  ops.push_back({"", "Squeeze", 1, squeeze, "view, no copy"});
  ops.push_back({"", "Unsqueeze", 1, unsqueeze, "view, no copy"});
  ops.push_back({"", "Shape", 1, shape, "static: a host value"});
  ops.push_back({"", "Size", 1, size, "static: a host value"});
  ops.push_back({"", "Range", 11, host_only, "host value: start/limit/delta must be constants"});
}

}  // namespace onda::ops
