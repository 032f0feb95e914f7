// ONNX Conv and ConvTranspose (opset 1 onwards; opset 11 only relaxed the docs) onto the conv
// kernel family. Weights may be host values (small initializers) or GPU tensors (large initializers,
// uploaded once by the runtime). A ConvTranspose weight known on the host that is a windowed
// identity (the exported iSTFT overlap-add) runs the overlap-add kernel instead of a dense GEMM; one
// only on the GPU with that shape is checked there by the overlap-add path.
//
// Each node keeps its conv::ConvPlan in its node_state, planned on the first run and again only when
// an input shape changes. Constant weights (initializers, the usual case) are uploaded once by the
// runtime (to_device); the node also keeps what is derived from them: a ConvTranspose's windowed-
// identity diagonal (extracted on the host, or checked on the GPU), and the plan's repacked weights
// (conv::ConvWeightCache: the implicit GEMM's, a dense ConvTranspose weight prepacked for the GEMM).
// Non-constant weights (computed by the graph) are prepared every run.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <stdexcept>

#include "graph/model_error.h"
#include "kernels/conv/conv.h"
#include "kernels/conv/conv_plan.h"
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
  const kernels::gemm::GemmEpilogue epilogue = fused_epilogue(node);
  conv::ConvOptions options;
  options.activation = epilogue.activation;
  options.activation_alpha = epilogue.activation_alpha;
  return options;
}

bool has_bias(const std::vector<Value>& inputs) {
  return inputs.size() > 2 && inputs[2].defined();
}

// Constant W (and B, if given): the node may keep what it derives from them across runs.
bool constant_weights(const OpContext& context, const std::vector<Value>& inputs) {
  return context.node_state && inputs[1].constant && (!has_bias(inputs) || inputs[2].constant);
}

// What a Conv / ConvTranspose node keeps across runs (its node_state): the plan of the last input
// shape (planned again only when a shape or the weights' form changes) and, for constant weights,
// what it derives from them once.
struct ConvNodeState {
  Shape x_shape, w_shape;
  std::optional<conv::ConvPlan> plan;
  conv::ConvWeightCache cache;  // the implicit GEMM's repacked weight, the GEMM's PackedB
  // ConvTranspose with constant weights, prepared on the first run:
  bool prepared = false;
  Tensor w, bias;  // on the GPU
  bool overlap_add = false;
  Tensor diagonal, identity_flag;  // windowed identity: f32 [C] (and the GPU check's flag)
  // A Conv whose one output position reads its whole input: the GEMM's state (gemm_node.h).
  std::shared_ptr<void> as_gemm;
};

ConvNodeState* node_conv_state(OpContext& context) {
  if (!context.node_state) return nullptr;
  auto& slot = *context.node_state;
  if (!slot) slot = std::make_shared<ConvNodeState>();
  return static_cast<ConvNodeState*>(slot.get());
}

// Records the node's convolution with its kept plan (planned now if the shapes or operands changed),
// or, without node state, a plan of this run only. `constant_weight`: the plan may keep W's derived
// forms in the node's cache; once it records from them alone, the node tells the walk that it no
// longer reads W (OpContext::derived_inputs), and a Conv's tensors.weights.w may come undefined:
// fetched here (to_device) only if the plan must be made again.
void record_planned(OpContext& context, ConvNodeState* state, const conv::ConvGeometry& g,
                    const std::vector<Value>& inputs, conv::ConvTensors tensors,
                    const conv::ConvOptions& options, bool constant_weight) {
  std::optional<conv::ConvPlan> local;
  std::optional<conv::ConvPlan>& plan = state ? state->plan : local;
  const auto operands_of = [&] {
    conv::ConvOperands operands =
        conv::ConvOperands::of(context.kernels, tensors.x, tensors.weights, tensors.bias, tensors.y);
    if (!tensors.weights.w.defined() && plan && plan->operands().w == inputs[1].dtype()) {
      operands.w = plan->operands().w;  // left out: the plan's packed form of this weight
      operands.w_fits_one_binding = plan->operands().w_fits_one_binding;
    }
    if (state && constant_weight) {
      state->cache.pool = &context.persistent_pool;
      operands.weight_cache = &state->cache;
    }
    return operands;
  };
  conv::ConvOperands operands = operands_of();
  if (!plan || !(plan->operands() == operands) || state->x_shape != inputs[0].shape() ||
      state->w_shape != inputs[1].shape() || (!tensors.weights.w.defined() && plan->reads_weight())) {
    if (!tensors.weights.w.defined()) {
      tensors.weights.w = context.to_device(inputs[1]);
      operands = operands_of();
    }
    plan.emplace(context.kernels, g, operands, options);
    if (state) state->x_shape = inputs[0].shape(), state->w_shape = inputs[1].shape();
  }
  plan->record(context.recorder, context.pool, tensors);
  if (state && constant_weight && !g.transpose && !plan->reads_weight()) context.derived_inputs |= 1u << 1;
}

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
  const Value y = record_gemm_node(node, gemm_context, x, false, w, true,
                                   has_bias(inputs) ? &inputs[2] : nullptr, fused_epilogue(node));
  return reshaped_view(y, g.output_shape());
}

std::vector<Value> record_conv(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  check_inputs(node, inputs);
  try {
    const conv::ConvGeometry g =
        conv::resolve_conv(inputs[0].shape(), inputs[1].shape(), attributes(node, false));
    if (reads_whole_input(g))
      return {record_whole_input_conv(node, context, g, inputs, node_conv_state(context))};
    // Constant weights that arrive as host values are uploaded once by the runtime's to_device; a
    // weight the node's plan records from its packed form alone is not (record_planned).
    conv::ConvTensors tensors;
    ConvNodeState* state = node_conv_state(context);
    const bool weight_packed = state && state->plan && !state->plan->reads_weight() && inputs[1].constant &&
                               !inputs[1].device.defined();
    if (!weight_packed) tensors.weights.w = context.to_device(inputs[1]);
    if (has_bias(inputs)) tensors.bias = context.to_device(inputs[2]);
    Value y;
    y.device = context.allocate(inputs[0].dtype(), g.output_shape());
    tensors.y = y.device;
    tensors.x = context.to_device(inputs[0]);
    record_planned(context, state, g, inputs, tensors, fused_activation(node), inputs[1].constant);
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

// The constant weights of a ConvTranspose prepared once: the device weight (and bias); for the
// overlap-add, the diagonal (host-detected and uploaded, or checked on the GPU: then the kernel keeps
// the dense fallback behind the flag). (The GEMM's prepacked weight is the plan's, in state.cache.)
void prepare_conv_transpose(OpContext& context, ConvNodeState& state, const conv::ConvGeometry& g,
                            const std::vector<Value>& inputs) {
  const Value& w = inputs[1];
  state.prepared = true;
  state.w = context.to_device(w);  // constants: uploaded once by the runtime
  if (has_bias(inputs)) state.bias = context.to_device(inputs[2]);
  if (conv::choose_conv_path(g, true) != conv::ConvPath::overlap_add) return;
  if (w.on_host()) {
    if (auto diagonal = host_diagonal(w)) {
      state.diagonal = Tensor::upload(context.recorder, context.persistent_pool, DType::f32, {g.in_channels},
                                      diagonal->data());
      state.overlap_add = true;
    }
  } else if (identity_shaped(w)) {
    const auto check = conv::record_windowed_identity_check(context.kernels, context.recorder,
                                                            context.persistent_pool, state.w);
    state.diagonal = check.diagonal;
    state.identity_flag = check.flag;
    state.overlap_add = true;
  }
}

std::vector<Value> record_conv_transpose(const Node& node, OpContext& context,
                                         const std::vector<Value>& inputs) {
  check_inputs(node, inputs);
  try {
    const conv::ConvGeometry g =
        conv::resolve_conv_transpose(inputs[0].shape(), inputs[1].shape(), attributes(node, true));
    conv::ConvTensors tensors;
    const Value& w = inputs[1];
    const bool overlap_add_geometry = conv::choose_conv_path(g, true) == conv::ConvPath::overlap_add;
    ConvNodeState* state = node_conv_state(context);
    const bool constant = constant_weights(context, inputs);
    if (constant) {
      if (!state->prepared) prepare_conv_transpose(context, *state, g, inputs);
      tensors.weights.w = state->w;
      tensors.bias = state->bias;
      if (state->overlap_add) {
        tensors.weights.diagonal_device = state->diagonal;
        tensors.weights.identity_flag = state->identity_flag;
      }
    } else {
      if (w.on_host() && overlap_add_geometry) tensors.weights.diagonal = host_diagonal(w);
      tensors.weights.w = context.to_device(w);
      // A large weight arrives only on the GPU: if it has the shape of a windowed identity, let the
      // overlap-add path check it there (it falls back to the dense sum itself if it is not one).
      tensors.weights.check_windowed_identity = overlap_add_geometry && identity_shaped(w);
      if (has_bias(inputs)) tensors.bias = context.to_device(inputs[2]);
    }
    Value y;
    y.device = context.allocate(inputs[0].dtype(), g.output_shape());
    tensors.y = y.device;
    tensors.x = context.to_device(inputs[0]);
    record_planned(context, state, g, inputs, tensors, fused_activation(node), constant);
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
