// LayerNormalization, InstanceNormalization, GroupNormalization and BatchNormalization (inference)
// onto the normalize kernel, Softmax/LogSoftmax onto the softmax kernel.
#include <fmt/format.h>

#include <cmath>

#include "graph/fuse_group_norm.h"
#include "graph/fuse_l2_norm.h"
#include "graph/fuse_norm_prelu.h"
#include "graph/model_error.h"
#include "kernels/elementwise/elementwise_kernel.h"
#include "kernels/norm/normalize_kernel.h"
#include "kernels/reduce/reduce_kernel.h"
#include "kernels/softmax/softmax_kernel.h"
#include "ops/fused_program.h"
#include "ops/kernel_plans.h"
#include "ops/op_registry.h"
#include "ops/outer_slices.h"

namespace onda::ops {
namespace {

Tensor optional_device(OpContext& context, const std::vector<Value>& inputs, size_t i) {
  return i < inputs.size() && inputs[i].defined() ? context.to_device(inputs[i]) : Tensor();
}

std::vector<Value> normalize(const Node& node, OpContext& context, const std::vector<Value>& inputs,
                             const kernels::NormalizeSpec& spec, size_t scale_input, size_t bias_input) {
  const Value& x = inputs.at(0);
  Value y;
  y.device = context.allocate(x.dtype(), x.shape());
  try {
    // Elementwise ops fused after it at plan time (graph/fuse_epilogue.h), applied at its store.
    const kernels::FusedEpilogue epilogue = fused_epilogue_of(node, x.dtype());
    // A PRelu fused after it at plan time (graph/fuse_norm_prelu.h): its slope, input 3.
    const Tensor slope = node.has_attribute(kFusedPreluAttribute) ? optional_device(context, inputs, 3) : Tensor();
    record_normalize(context, context.to_device(x), optional_device(context, inputs, scale_input),
                     optional_device(context, inputs, bias_input), y.device, spec, epilogue, slope);
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
  return {y};
}

Value elementwise(OpContext& context, kernels::ElementwiseOp op, std::vector<Tensor> inputs,
                  const Shape& shape) {
  Value out;
  out.device = context.allocate(inputs[0].dtype(), shape);
  kernels::record_elementwise(context.kernels, context.recorder, op, inputs, out.device);
  return out;
}

std::vector<Value> layer_norm(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Shape& shape = inputs.at(0).shape();
  const float epsilon = node.attribute_float("epsilon", 1e-5f);
  auto spec = kernels::layer_norm_spec(shape, node.attribute_int("axis", -1), epsilon);
  // A fused F.normalize (graph/fuse_l2_norm.h): rows over their Euclidean norm; no statistics outputs.
  spec.l2 = node.attribute_int(kL2NormAttribute, 0) != 0;
  std::vector<Value> outputs = normalize(node, context, inputs, spec, 1, 2);
  const bool wants_stats = (node.outputs.size() > 1 && !node.outputs[1].empty()) ||
                           (node.outputs.size() > 2 && !node.outputs[2].empty());
  if (!wants_stats) return outputs;
  // The training-style Mean and InvStdDev outputs ([..., 1, ..., 1]): separate reductions, as
  // inference graphs never ask for them.
  std::vector<int64_t> axes;
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t first = node.attribute_int("axis", -1);
  if (first < 0) first += rank;
  for (int64_t d = first; d < rank; ++d) axes.push_back(d);
  const Tensor x = context.to_device(inputs[0]);
  const Shape stat_shape = kernels::reduced_shape(shape, axes, true);
  Value mean;
  mean.device = context.allocate(x.dtype(), stat_shape);
  kernels::record_reduce(context.kernels, context.recorder, context.pool, kernels::ReduceOp::Mean, x, axes, mean.device);
  const Value centered = elementwise(context, kernels::ElementwiseOp::Sub, {x, mean.device}, shape);
  const Value squared =
      elementwise(context, kernels::ElementwiseOp::Mul, {centered.device, centered.device}, shape);
  Value variance;
  variance.device = context.allocate(x.dtype(), stat_shape);
  kernels::record_reduce(context.kernels, context.recorder, context.pool, kernels::ReduceOp::Mean, squared.device, axes,
                         variance.device);
  Value eps;
  eps.host = HostTensor::from_double(x.dtype(), {}, {epsilon});
  const Value shifted = elementwise(context, kernels::ElementwiseOp::Add,
                                    {variance.device, context.to_device(eps)}, stat_shape);
  const Value root = elementwise(context, kernels::ElementwiseOp::Sqrt, {shifted.device}, stat_shape);
  outputs.push_back(mean);
  outputs.push_back(elementwise(context, kernels::ElementwiseOp::Reciprocal, {root.device}, stat_shape));
  return outputs;
}

std::vector<Value> instance_norm(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const float epsilon = node.attribute_float("epsilon", 1e-5f);
  if (node.has_attribute(kFusedGroupsAttribute)) {
    // A fused GroupNorm (graph/fuse_group_norm.h): groups of channels, per-channel affine.
    const auto spec = kernels::group_norm_spec(inputs.at(0).shape(), node.attribute_int(kFusedGroupsAttribute), true, epsilon);
    return normalize(node, context, inputs, spec, 1, 2);
  }
  return normalize(node, context, inputs, kernels::instance_norm_spec(inputs.at(0).shape(), epsilon), 1, 2);
}

std::vector<Value> group_norm(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const auto spec = kernels::group_norm_spec(inputs.at(0).shape(), node.attribute_int("num_groups"), context.opset >= 21,
                                             node.attribute_float("epsilon", 1e-5f));
  return normalize(node, context, inputs, spec, 1, 2);
}

// Inference BatchNormalization is a per-channel affine map: fold mean/var/scale/bias on the host
// into a and b, then y = x * a + b with a, b broadcast as [C, 1, ..., 1].
std::vector<Value> batch_norm(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  if (node.attribute_int("training_mode", 0) != 0) throw ModelError(node.describe() + ": training_mode=1 is not supported");
  if (inputs.size() < 5) throw ModelError(node.describe() + ": needs X, scale, B, input_mean and input_var");
  const Value& x = inputs[0];
  bool constant_parameters = true;
  for (size_t i = 1; i < 5; ++i) constant_parameters = constant_parameters && inputs[i].on_host();
  if (!constant_parameters) {
    // Parameters computed on the GPU: (x - mean) / sqrt(var + eps) * scale + B with [C, 1, ...] views.
    Shape param_shape(x.shape().size() - 1, 1);
    param_shape[0] = x.shape().at(1);
    auto param = [&](size_t i) { return context.to_device(inputs[i]).reshape(param_shape); };
    Value eps;
    eps.host = HostTensor::from_double(x.dtype(), {}, {node.attribute_float("epsilon", 1e-5f)});
    const Value shifted =
        elementwise(context, kernels::ElementwiseOp::Add, {param(4), context.to_device(eps)}, param_shape);
    const Value root = elementwise(context, kernels::ElementwiseOp::Sqrt, {shifted.device}, param_shape);
    const Value centered =
        elementwise(context, kernels::ElementwiseOp::Sub, {context.to_device(x), param(3)}, x.shape());
    const Value scaled =
        elementwise(context, kernels::ElementwiseOp::Div, {centered.device, root.device}, x.shape());
    const Value multiplied =
        elementwise(context, kernels::ElementwiseOp::Mul, {scaled.device, param(1)}, x.shape());
    return {elementwise(context, kernels::ElementwiseOp::Add, {multiplied.device, param(2)}, x.shape())};
  }
  // Constant parameters (initializers, the usual case): folded and uploaded once per node, kept in
  // its state (folding and uploading every run cost a third of a millisecond of CPU per node).
  struct Folded {
    Tensor a, b;
  };
  bool keep = context.node_state != nullptr;
  for (size_t i = 1; i < 5; ++i) keep = keep && inputs[i].constant;
  const auto record_affine = [&](const Tensor& a, const Tensor& b) {
    Value product, y;
    product.device = context.allocate(x.dtype(), x.shape());
    y.device = context.allocate(x.dtype(), x.shape());
    const Tensor mul_inputs[] = {context.to_device(x), a};
    kernels::record_elementwise(context.kernels, context.recorder, kernels::ElementwiseOp::Mul, mul_inputs,
                                product.device);
    const Tensor add_inputs[] = {product.device, b};
    kernels::record_elementwise(context.kernels, context.recorder, kernels::ElementwiseOp::Add, add_inputs,
                                y.device);
    return std::vector<Value>{y};
  };
  if (keep && *context.node_state) {
    const auto& folded = *std::static_pointer_cast<Folded>(*context.node_state);
    return record_affine(folded.a, folded.b);
  }
  const double epsilon = node.attribute_float("epsilon", 1e-5f);
  const auto scale = inputs[1].host.to_double(), bias = inputs[2].host.to_double();
  const auto mean = inputs[3].host.to_double(), var = inputs[4].host.to_double();
  const size_t channels = scale.size();
  if (x.shape().size() < 2 || static_cast<size_t>(x.shape()[1]) != channels || bias.size() != channels ||
      mean.size() != channels || var.size() != channels) {
    throw ModelError(node.describe() + ": parameter sizes do not match the channel count");
  }
  std::vector<double> a(channels), b(channels);
  for (size_t c = 0; c < channels; ++c) {
    a[c] = scale[c] / std::sqrt(var[c] + epsilon);
    b[c] = bias[c] - mean[c] * a[c];
  }
  Shape param_shape(x.shape().size() - 1, 1);
  param_shape[0] = static_cast<int64_t>(channels);
  Value va, vb;
  va.host = HostTensor::from_double(x.dtype(), param_shape, a);
  vb.host = HostTensor::from_double(x.dtype(), param_shape, b);
  if (!keep) return record_affine(context.to_device(va), context.to_device(vb));
  // Into the persistent pool, written in recording order (the buffers live as long as the node).
  auto folded = std::make_shared<Folded>();
  folded->a = Tensor::upload(context.recorder, context.persistent_pool, x.dtype(), param_shape, va.host.data());
  folded->b = Tensor::upload(context.recorder, context.persistent_pool, x.dtype(), param_shape, vb.host.data());
  *context.node_state = folded;
  return record_affine(folded->a, folded->b);
}

std::vector<Value> softmax(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const bool log = node.op_type == "LogSoftmax";
  Value y;
  y.device = context.allocate(x.dtype(), x.shape());
  if (context.opset >= 13) {
    const int64_t rank = static_cast<int64_t>(x.shape().size());
    int64_t axis = node.attribute_int("axis", -1);
    if (axis < 0) axis += rank;
    const Tensor input = context.to_device(x);
    const int64_t rows = axis > 0 ? outer_slice_rows(context, x.shape()[0], input.device_bytes() / x.shape()[0]) : 0;
    if (rows == 0) {
      record_softmax(context, input, axis, log, y.device);
    } else {  // larger than one binding: independent slices of the leading dim
      for (int64_t begin = 0; begin < x.shape()[0]; begin += rows) {
        const int64_t end = std::min(x.shape()[0], begin + rows);
        record_softmax(context, input.slice_outer(begin, end), axis, log, y.device.slice_outer(begin, end));
      }
    }
  } else {
    // Opset < 13: the input is coerced to 2-D at `axis` and normalized over the second dim.
    int64_t axis = node.attribute_int("axis", 1);
    const int64_t rank = static_cast<int64_t>(x.shape().size());
    if (axis < 0) axis += rank;
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
    const Shape flat = {outer, shape_numel(x.shape()) / std::max<int64_t>(outer, 1)};
    record_softmax(context, context.to_device(x).reshape(flat), 1, log, y.device.reshape(flat));
  }
  return {y};
}

}  // namespace

void register_normalization_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "LayerNormalization", 17, layer_norm, "fused per row up to 4096 elements, else 2 reads"});
  ops.push_back({"", "InstanceNormalization", 1, instance_norm, "chunked statistics, 2 reads"});
  ops.push_back({"", "GroupNormalization", 18, group_norm, "opset 18 per-group or 21 per-channel affine"});
  ops.push_back({"", "BatchNormalization", 1, batch_norm, "inference: folded into one per-channel affine"});
  ops.push_back({"", "Softmax", 1, softmax, "online max/sum, 2 reads"});
  ops.push_back({"", "LogSoftmax", 1, softmax, "online max/sum, 2 reads"});
}

}  // namespace onda::ops
