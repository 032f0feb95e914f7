// ONNX Conv and ConvTranspose (opset 1 onwards; opset 11 only relaxed the docs) onto the conv
// kernel family. Weights may be host values (small initializers) or GPU tensors (large initializers,
// uploaded once by the runtime). A ConvTranspose weight known on the host that is a windowed
// identity (the exported iSTFT overlap-add) runs the overlap-add kernel instead of a dense GEMM; one
// only on the GPU with that shape is checked there by the overlap-add path.
//
// Constant weights (initializers, the usual case) are uploaded once by the runtime (to_device);
// a ConvTranspose also keeps in its node_state what it derives from them: a dense weight prepacked
// for the GEMM, a windowed identity's diagonal extracted (on the host, or checked on the GPU).
// A Conv keeps the implicit GEMM's repacked weight there (conv::ImplicitWeightCache). Non-constant
// weights (computed by the graph) are prepared every run.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <stdexcept>

#include "graph/model_error.h"
#include "kernels/common/binding_window.h"
#include "kernels/conv/conv.h"
#include "ops/fused_activation.h"
#include "ops/gemm_node.h"
#include "ops/onnx_vocabulary.h"
#include "ops/op_registry.h"
#include "ops/value_view.h"

namespace onda::ops {
namespace {

namespace conv = kernels::conv;

conv::ConvAttributes attributes(const Node& node, bool transpose) {
  conv::ConvAttributes a;
  a.auto_pad = conv_auto_pad_from_onnx(node.attribute_string("auto_pad", "NOTSET"));
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

// The activation fused into this node at plan time (graph/fuse_activations.h), if any.
conv::ConvOptions fused_activation(const Node& node) {
  conv::ConvOptions options;
  const FusedActivation fused = fused_activation_of(node);
  options.activation = fused.activation;
  options.activation_alpha = fused.alpha;
  return options;
}

bool has_bias(const std::vector<Value>& inputs) {
  return inputs.size() > 2 && inputs[2].defined();
}

// Constant W (and B, if given): the node may keep what it derives from them across runs.
bool constant_weights(const OpContext& context, const std::vector<Value>& inputs) {
  return context.node_state && inputs[1].constant && (!has_bias(inputs) || inputs[2].constant);
}

// What a Conv / ConvTranspose node with constant weights keeps across runs (its node_state).
struct ConvWeightState {
  Tensor w, bias;  // on the GPU
  bool overlap_add = false;
  Tensor diagonal, identity_flag;                  // windowed identity: f32 [C] (and the GPU check's flag)
  std::unique_ptr<kernels::gemm::PackedB> packed;  // dense ConvTranspose weight for the GEMM
  conv::ImplicitWeightCache implicit;              // the per-phase packed weight (implicit GEMM)
};

// What a Conv node keeps across runs: the implicit GEMM's repacked weight, or, where its one output
// position reads the whole input, the GEMM's state (gemm_node.h).
struct ConvNodeState {
  conv::ImplicitWeightCache implicit;
  std::shared_ptr<void> as_gemm;
};

// A Conv with one output position that reads its whole input (no padding, dilation 1, the input as
// large as the kernel): the causal convolutions of streaming models over [cache | frame]. Then
// Y [N, C_out] = X [N, C_in k...] W [C_out, C_in k...]^T + B: one GEMM (a GEMV per frame) instead of
// the convolution kernels, which tile output positions.
bool reads_whole_input(const conv::ConvGeometry& g) {
  if (g.transpose || g.group != 1) return false;
  for (int64_t d = 0; d < g.spatial_rank(); ++d) {
    if (g.out_size[d] != 1 || g.pads_begin[d] != 0 || g.pads_end[d] != 0 || g.dilations[d] != 1 ||
        g.in_size[d] != g.kernel[d]) {
      return false;
    }
  }
  return true;
}

Value record_whole_input_conv(const Node& node, OpContext& context, const conv::ConvGeometry& g,
                              const std::vector<Value>& inputs, ConvNodeState* state) {
  const int64_t k = g.in_channels * g.kernel_elements();
  const Value x = reshaped_view(inputs[0], {g.batch, k});
  Value w = reshaped_view(inputs[1], {g.out_channels, k});
  w.constant = inputs[1].constant;  // so the GEMM prepacks it once
  OpContext gemm_context = context;
  gemm_context.node_state = state ? &state->as_gemm : nullptr;
  const FusedActivation fused = fused_activation_of(node);
  kernels::gemm::GemmEpilogue epilogue;
  epilogue.activation = fused.activation;
  epilogue.activation_alpha = fused.alpha;
  const Value y = record_gemm_node(node, gemm_context, x, false, w, true,
                                   has_bias(inputs) ? &inputs[2] : nullptr, epilogue);
  return reshaped_view(y, g.output_shape());
}

std::vector<Value> record_conv(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  check_inputs(node, inputs);
  try {
    const conv::ConvGeometry g =
        conv::resolve_conv(inputs[0].shape(), inputs[1].shape(), attributes(node, false));
    ConvNodeState* state = nullptr;
    if (context.node_state && inputs[1].constant) {
      auto& slot = *context.node_state;
      if (!slot) slot = std::make_shared<ConvNodeState>();
      state = static_cast<ConvNodeState*>(slot.get());
    }
    if (reads_whole_input(g)) return {record_whole_input_conv(node, context, g, inputs, state)};
    // Constant weights that arrive as host values are uploaded once by the runtime's to_device.
    const Tensor w = context.to_device(inputs[1]);
    const Tensor bias = has_bias(inputs) ? context.to_device(inputs[2]) : Tensor();
    Value y;
    y.device = context.allocate(inputs[0].dtype(), g.output_shape());
    conv::ConvOptions options = fused_activation(node);
    if (state) {
      // The implicit GEMM's repacked weight, made on the first run and kept with the node.
      options.implicit_weight = &state->implicit;
      options.implicit_weight->pool = &context.persistent_pool;
    }
    conv::record_conv(context.kernels, context.recorder, context.pool, g, context.to_device(inputs[0]), w,
                      bias, y.device, options);
    return {y};
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
}

// A host weight's windowed-identity diagonal, if it is one.
std::optional<std::vector<float>> host_diagonal(const Value& w) {
  if (w.dtype() == DType::f32) return conv::windowed_identity_diagonal(w.shape(), w.host.values<float>());
  const auto wide = w.host.to_double();
  const std::vector<float> values(wide.begin(), wide.end());
  return conv::windowed_identity_diagonal(w.shape(), values);
}

// Whether a weight only on the GPU has the shape of a windowed identity ([C, 1, C]).
bool identity_shaped(const Value& w) {
  const Shape& ws = w.shape();
  return !w.on_host() && ws.size() == 3 && ws[1] == 1 && ws[0] == ws[2];
}

// The weights of a ConvTranspose prepared once: the device weight (and bias); for the overlap-add,
// the diagonal (host-detected and uploaded, or checked on the GPU: then the kernel keeps the dense
// fallback behind the flag); for the GEMM, the prepacked weight.
std::shared_ptr<ConvWeightState> prepare_conv_transpose(OpContext& context, const conv::ConvGeometry& g,
                                                        const std::vector<Value>& inputs) {
  const Value& w = inputs[1];
  auto state = std::make_shared<ConvWeightState>();
  state->w = context.to_device(w);  // constants: uploaded once by the runtime
  if (has_bias(inputs)) state->bias = context.to_device(inputs[2]);
  if (conv::choose_conv_path(g, true) == conv::ConvPath::overlap_add) {
    if (w.on_host()) {
      if (auto diagonal = host_diagonal(w)) {
        state->diagonal = Tensor::upload(context.recorder, context.persistent_pool, DType::f32,
                                         {g.in_channels}, diagonal->data());
        state->overlap_add = true;
      }
    } else if (identity_shaped(w)) {
      const auto check = conv::record_windowed_identity_check(context.kernels, context.recorder,
                                                              context.persistent_pool, state->w);
      state->diagonal = check.diagonal;
      state->identity_flag = check.flag;
      state->overlap_add = true;
    }
  }
  state->implicit.pool = &context.persistent_pool;
  // The implicit GEMM packs its own weight on the first run; the GEMM's prepacked copy is made only
  // where that path would run (it still runs unpacked if the implicit one turns out not to apply).
  if (!state->overlap_add && conv::choose_conv_path(g, false) == conv::ConvPath::gemm &&
      !conv::automatic_takes_implicit(g) && kernels::fits_one_binding(context.kernels.gpu, state->w)) {
    state->packed = std::make_unique<kernels::gemm::PackedB>(conv::prepack_conv_transpose_weight(
        context.kernels, context.persistent_pool, context.recorder, state->w));
  }
  return state;
}

std::vector<Value> record_conv_transpose(const Node& node, OpContext& context,
                                         const std::vector<Value>& inputs) {
  check_inputs(node, inputs);
  try {
    const conv::ConvGeometry g =
        conv::resolve_conv_transpose(inputs[0].shape(), inputs[1].shape(), attributes(node, true));
    conv::ConvTransposeWeights weights;
    conv::ConvOptions options = fused_activation(node);
    Tensor bias;
    const Value& w = inputs[1];
    const bool overlap_add_geometry = conv::choose_conv_path(g, true) == conv::ConvPath::overlap_add;
    if (constant_weights(context, inputs)) {
      auto& slot = *context.node_state;
      if (!slot) slot = prepare_conv_transpose(context, g, inputs);
      auto& state = *std::static_pointer_cast<ConvWeightState>(slot);
      weights.w = state.w;
      bias = state.bias;
      if (state.overlap_add) {
        weights.diagonal_device = state.diagonal;
        weights.identity_flag = state.identity_flag;
      }
      weights.packed = state.packed.get();
      options.implicit_weight = &state.implicit;
    } else {
      if (w.on_host() && overlap_add_geometry) weights.diagonal = host_diagonal(w);
      weights.w = context.to_device(w);
      // A large weight arrives only on the GPU: if it has the shape of a windowed identity, let the
      // overlap-add path check it there (it falls back to the dense sum itself if it is not one).
      weights.check_windowed_identity = overlap_add_geometry && identity_shaped(w);
      if (has_bias(inputs)) bias = context.to_device(inputs[2]);
    }
    Value y;
    y.device = context.allocate(inputs[0].dtype(), g.output_shape());
    conv::record_conv_transpose(context.kernels, context.recorder, context.pool, g, weights,
                                context.to_device(inputs[0]), bias, y.device, options);
    return {y};
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
}

}  // namespace

void register_conv_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "Conv", 1, record_conv,
                 "1-D/2-D/3-D, every attribute; group 1 on im2col + GEMM, other groups direct; a following "
                 "Relu/LeakyRelu/Sigmoid/Tanh fused into the store"});
  ops.push_back(
      {"", "ConvTranspose", 1, record_conv_transpose,
       "1-D/2-D/3-D, every attribute incl. output_padding/output_shape; group 1 on the implicit GEMM per "
       "stride phase (or GEMM + col2im), windowed-identity weights (iSTFT) as overlap-add"});
}

}  // namespace onda::ops
