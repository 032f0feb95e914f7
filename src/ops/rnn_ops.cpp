// ONNX LSTM, GRU and RNN onto the recurrent kernel (kernels/rnn): one projection GEMM for all
// timesteps and directions, then one fused dispatch per timestep (two for GRU with
// linear_before_reset = 0).
#include <fmt/format.h>

#include <stdexcept>

#include "graph/fold_rnn_output_transposes.h"
#include "graph/model_error.h"
#include "kernels/rnn/rnn_kernel.h"
#include "ops/fused_activation.h"
#include "ops/onnx_vocabulary.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

using kernels::rnn::CellType;

Tensor optional_device(OpContext& context, const std::vector<Value>& inputs, size_t i) {
  return i < inputs.size() && inputs[i].defined() ? context.to_device(inputs[i]) : Tensor();
}

bool wants_output(const Node& node, size_t i) {
  return i < node.outputs.size() && !node.outputs[i].empty();
}

kernels::rnn::RnnSpec read_spec(const Node& node, OpContext& context, CellType cell,
                                const std::vector<Value>& inputs) {
  kernels::rnn::RnnSpec spec;
  spec.cell = cell;
  const std::string direction = node.attribute_string("direction", "forward");
  if (direction == "forward") {
    spec.direction = kernels::rnn::Direction::forward;
  } else if (direction == "reverse") {
    spec.direction = kernels::rnn::Direction::reverse;
  } else if (direction == "bidirectional") {
    spec.direction = kernels::rnn::Direction::bidirectional;
  } else {
    throw ModelError(fmt::format("{}: unknown direction '{}'", node.describe(), direction));
  }
  spec.layout = context.opset >= 14 ? node.attribute_int("layout", 0) : 0;
  if (spec.layout != 0 && spec.layout != 1) {
    throw ModelError(fmt::format("{}: layout must be 0 or 1, got {}", node.describe(), spec.layout));
  }
  if (node.has_attribute(kRnnOutputPerm)) {
    if (node.attribute_ints(kRnnOutputPerm, {}) != std::vector<int64_t>{0, 2, 1, 3} || spec.layout != 0) {
      throw ModelError(fmt::format("{}: {} must be 0, 2, 1, 3 on a layer of layout 0", node.describe(),
                                   kRnnOutputPerm));
    }
    spec.y_directions_inner = true;
  }
  const FusedActivation y_activation = fused_activation_of(node);  // graph/fuse_activations.h
  spec.y_activation = y_activation.activation;
  spec.y_activation_alpha = y_activation.alpha;
  if (inputs.size() < 3 || !inputs[0].defined() || !inputs[1].defined() || !inputs[2].defined()) {
    throw ModelError(node.describe() + ": needs inputs X, W and R");
  }
  const Shape& r_shape = inputs[2].shape();
  if (r_shape.size() != 3)
    throw ModelError(fmt::format("{}: R must be 3-D, got {}", node.describe(), shape_string(r_shape)));
  spec.hidden_size = node.attribute_int("hidden_size", r_shape[2]);
  if (spec.hidden_size <= 0)
    throw ModelError(fmt::format("{}: hidden_size must be positive", node.describe()));
  if (node.has_attribute("clip")) spec.clip = node.attribute_float("clip");
  if (cell == CellType::lstm) spec.input_forget = node.attribute_int("input_forget", 0) != 0;
  if (cell == CellType::gru) spec.linear_before_reset = node.attribute_int("linear_before_reset", 0) != 0;
  const int expected = kernels::rnn::activations_per_direction(cell) * spec.num_directions();
  if (node.has_attribute("activations")) {
    const auto names = node.attribute_strings("activations");
    if (static_cast<int>(names.size()) != expected) {
      throw ModelError(
          fmt::format("{}: {} activations given, expected {}", node.describe(), names.size(), expected));
    }
    try {
      spec.activations = rnn_activations_from_onnx(names, node.attribute_floats("activation_alpha", {}),
                                                   node.attribute_floats("activation_beta", {}));
    } catch (const std::invalid_argument& e) {
      throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
    }
  }
  return spec;
}

// What a node with constant weights keeps across runs: its packed weights and the layer planned for
// the last input shape.
struct RecurrentState {
  std::shared_ptr<const kernels::rnn::RnnWeights> weights;
  std::unique_ptr<kernels::rnn::RnnKernel> kernel;
};

// The node's kept state when W, R, B and P (those given) are constants and the session keeps node
// state; nullptr otherwise.
RecurrentState* constant_weights_state(OpContext& context, const std::vector<Value>& inputs) {
  if (!context.node_state || !inputs[1].constant || !inputs[2].constant) return nullptr;
  for (size_t i : {size_t{3}, size_t{7}}) {  // B, P
    if (i < inputs.size() && inputs[i].defined() && !inputs[i].constant) return nullptr;
  }
  auto& state = *context.node_state;
  if (!state) state = std::make_shared<RecurrentState>();
  return static_cast<RecurrentState*>(state.get());
}

// Host-known sequence_lens must lie in [0, seq_length].
void check_sequence_lens(const Node& node, const Value& lens, int64_t seq_length) {
  if (!lens.on_host()) return;
  for (int64_t v : lens.host.to_int64()) {
    if (v < 0 || v > seq_length) {
      throw ModelError(
          fmt::format("{}: sequence_lens value {} outside [0, {}]", node.describe(), v, seq_length));
    }
  }
}

std::vector<Value> recurrent(const Node& node, OpContext& context, const std::vector<Value>& inputs,
                             CellType cell) {
  const kernels::rnn::RnnSpec spec = read_spec(node, context, cell, inputs);
  const Value& x = inputs[0];
  if (x.shape().size() != 3) {
    throw ModelError(fmt::format("{}: X must be 3-D, got {}", node.describe(), shape_string(x.shape())));
  }
  const size_t lens_input = 4, initial_h_input = 5, initial_c_input = 6, p_input = 7;
  if (lens_input < inputs.size() && inputs[lens_input].defined()) {
    check_sequence_lens(node, inputs[lens_input], spec.layout == 0 ? x.shape()[0] : x.shape()[1]);
  }
  // Constant W, R, B, P (initializers, the usual case) are packed once per node and the layer planned
  // once per input shape, both kept across runs in the node's state; the layer keeps only the forms
  // it reads (RnnKernel::drop_unread_weights). Where that leaves out the caller's W, R, B, P, the
  // node's later runs do not fetch them and the walk passes them without uploading them
  // (OpContext::derived_inputs).
  RecurrentState* const kept = constant_weights_state(context, inputs);
  kernels::rnn::RnnInputs in;
  in.x = context.to_device(x);
  in.sequence_lens = optional_device(context, inputs, lens_input);
  in.initial_h = optional_device(context, inputs, initial_h_input);
  if (cell == CellType::lstm) in.initial_c = optional_device(context, inputs, initial_c_input);
  std::vector<Value> outputs(node.outputs.size());
  kernels::rnn::RnnOutputs out;
  kernels::rnn::RnnOptions options;
  options.label = node.describe();
  try {
    const Shape state = kernels::rnn::rnn_state_shape(spec, x.shape());
    if (wants_output(node, 0))
      out.y = outputs[0].device = context.allocate(x.dtype(), kernels::rnn::rnn_y_shape(spec, x.shape()));
    if (wants_output(node, 1)) out.y_h = outputs[1].device = context.allocate(x.dtype(), state);
    if (cell == CellType::lstm && wants_output(node, 2))
      out.y_c = outputs[2].device = context.allocate(x.dtype(), state);
    const auto problem = kernels::rnn::RnnProblem::of(context.kernels, in, out);
    const bool planned = kept && kept->kernel && kept->kernel->problem() == problem;
    if (!planned) {
      in.w = context.to_device(inputs[1]);
      in.r = context.to_device(inputs[2]);
      in.b = optional_device(context, inputs, 3);
      if (cell == CellType::lstm) in.p = optional_device(context, inputs, p_input);
    }
    if (kept) {
      if (!planned) {
        // Packed again only if an earlier layer let go of the caller's tensors.
        if (!kept->weights || !kept->weights->w.defined()) {
          kept->weights = std::make_shared<const kernels::rnn::RnnWeights>(kernels::rnn::prepare_rnn_weights(
              context.kernels, context.recorder, context.persistent_pool, spec, in.w, in.r, in.b, in.p));
        }
        kept->kernel.reset();
        kept->kernel = std::make_unique<kernels::rnn::RnnKernel>(context.kernels, context.recorder,
                                                                 context.persistent_pool, spec, kept->weights,
                                                                 problem, options);
        kept->kernel->drop_unread_weights();
        kept->weights = kept->kernel->weights();
      }
      if (!kept->weights->w.defined()) {
        for (size_t i : {size_t{1}, size_t{2}, size_t{3}, p_input})
          if (i < inputs.size() && inputs[i].defined()) context.derived_inputs |= uint64_t{1} << i;
      }
      kept->kernel->record(context.recorder, context.pool, in, out);
    } else {
      // Weights computed in the graph: packed and planned every run.
      kernels::rnn::record_rnn(context.kernels, context.recorder, context.pool, spec, in, out, options);
    }
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
  return outputs;
}

std::vector<Value> lstm(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  return recurrent(node, context, inputs, CellType::lstm);
}
std::vector<Value> gru(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  return recurrent(node, context, inputs, CellType::gru);
}
std::vector<Value> rnn(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  return recurrent(node, context, inputs, CellType::rnn);
}

}  // namespace

void register_rnn_ops(std::vector<OpEntry>& ops) {
  const char* notes = "projection GEMM for all steps, then one fused dispatch per step";
  ops.push_back({"", "LSTM", 7, lstm, notes});
  ops.push_back(
      {"", "GRU", 7, gru, "projection GEMM, then 1 fused dispatch per step (2 if linear_before_reset=0)"});
  ops.push_back({"", "RNN", 7, rnn, notes});
}

}  // namespace onda::ops
