// ONNX Conv and ConvTranspose (opset 1 onwards; opset 11 only relaxed the docs) onto the conv
// kernel family. Weights may be host values (small initializers, uploaded per run) or GPU tensors
// (large initializers, uploaded once by the runtime). A ConvTranspose weight known on the host that
// is a windowed identity (the exported iSTFT overlap-add) runs the overlap-add kernel instead of a
// dense GEMM; one only on the GPU with that shape is checked there by the overlap-add path.
#include <fmt/format.h>

#include <stdexcept>

#include "graph/model_error.h"
#include "kernels/conv/conv.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

namespace conv = kernels::conv;

conv::ConvAttributes attributes(const Node& node, bool transpose) {
  conv::ConvAttributes a;
  a.auto_pad = node.attribute_string("auto_pad", "NOTSET");
  a.kernel_shape = node.attribute_ints("kernel_shape", {});
  a.strides = node.attribute_ints("strides", {});
  a.dilations = node.attribute_ints("dilations", {});
  a.pads = node.attribute_ints("pads", {});
  a.group = node.attribute_int("group", 1);
  if (transpose) {
    a.output_padding = node.attribute_ints("output_padding", {});
    a.output_shape = node.attribute_ints("output_shape", {});
  } else if (node.has_attribute("output_padding") || node.has_attribute("output_shape")) {
    throw ModelError(node.describe() + ": output_padding / output_shape are ConvTranspose attributes");
  }
  return a;
}

void check_inputs(const Node& node, const std::vector<Value>& inputs) {
  if (inputs.size() < 2 || !inputs[0].defined() || !inputs[1].defined()) {
    throw ModelError(node.describe() + ": needs inputs X and W");
  }
  for (size_t i = 0; i < inputs.size() && i < 3; ++i) {
    if (inputs[i].defined() && !is_float(inputs[i].dtype())) {
      throw ModelError(fmt::format("{}: input {} must be float32 or float16, got {}", node.describe(), i,
                                   dtype_name(inputs[i].dtype())));
    }
  }
  if (inputs[1].dtype() != inputs[0].dtype() ||
      (inputs.size() > 2 && inputs[2].defined() && inputs[2].dtype() != inputs[0].dtype())) {
    throw ModelError(node.describe() + ": X, W and B must have the same dtype");
  }
}

Tensor optional_bias(OpContext& context, const std::vector<Value>& inputs) {
  return inputs.size() > 2 && inputs[2].defined() ? context.to_device(inputs[2]) : Tensor();
}

std::vector<Value> record_conv(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  check_inputs(node, inputs);
  try {
    const conv::ConvGeometry g =
        conv::resolve_conv(inputs[0].shape(), inputs[1].shape(), attributes(node, false));
    Value y;
    y.device = context.allocate(inputs[0].dtype(), g.output_shape());
    conv::record_conv(context.kernels, context.recorder, context.pool, g, context.to_device(inputs[0]),
                      context.to_device(inputs[1]), optional_bias(context, inputs), y.device);
    return {y};
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
}

std::vector<Value> record_conv_transpose(const Node& node, OpContext& context,
                                         const std::vector<Value>& inputs) {
  check_inputs(node, inputs);
  try {
    const conv::ConvGeometry g =
        conv::resolve_conv_transpose(inputs[0].shape(), inputs[1].shape(), attributes(node, true));
    conv::ConvTransposeWeights weights;
    const Value& w = inputs[1];
    if (w.on_host()) {
      if (w.dtype() == DType::f32) {
        weights.diagonal = conv::windowed_identity_diagonal(w.shape(), w.host.values<float>());
      } else {
        const auto wide = w.host.to_double();
        const std::vector<float> values(wide.begin(), wide.end());
        weights.diagonal = conv::windowed_identity_diagonal(w.shape(), values);
      }
    }
    if (!weights.diagonal) weights.w = context.to_device(w);
    // A large weight arrives only on the GPU: if it has the shape of a windowed identity, let the
    // overlap-add path check it there (it falls back to the dense sum itself if it is not one).
    const Shape& ws = w.shape();
    if (!w.on_host() && ws.size() == 3 && ws[1] == 1 && ws[0] == ws[2])
      weights.check_windowed_identity = true;
    Value y;
    y.device = context.allocate(inputs[0].dtype(), g.output_shape());
    if ((weights.diagonal || weights.check_windowed_identity) &&
        conv::choose_conv_path(g, true) != conv::ConvPath::overlap_add) {
      weights.diagonal.reset();  // the geometry does not allow overlap-add: use the dense weight
      weights.check_windowed_identity = false;
      weights.w = context.to_device(w);
    }
    conv::record_conv_transpose(context.kernels, context.recorder, context.pool, g, weights,
                                context.to_device(inputs[0]), optional_bias(context, inputs), y.device);
    return {y};
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
}

}  // namespace

void register_conv_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "Conv", 1, record_conv,
                 "1-D/2-D/3-D, every attribute; group 1 on im2col + GEMM, other groups direct"});
  ops.push_back({"", "ConvTranspose", 1, record_conv_transpose,
                 "1-D/2-D/3-D, every attribute incl. output_padding/output_shape; group 1 on GEMM + col2im, "
                 "windowed-identity weights (iSTFT) as overlap-add"});
}

}  // namespace onda::ops
