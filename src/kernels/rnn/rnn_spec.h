// What an ONNX recurrent layer (LSTM, GRU, RNN) computes, independent of buffers: the cell, the
// direction(s), the layout, and the per-direction activation functions with their alpha/beta.
// Gate orders follow the ONNX spec: LSTM i, o, f, c; GRU z, r, h; RNN one gate.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/gemm/gemm_epilogue.h"
#include "tensor/tensor.h"

namespace onda::kernels::rnn {

enum class CellType { lstm, gru, rnn };
enum class Direction { forward, reverse, bidirectional };

// Codes shared with rnn_activation.wgsl.
enum class Activation : uint32_t {
  sigmoid = 0,
  tanh,
  relu,
  hard_sigmoid,
  affine,
  leaky_relu,
  thresholded_relu,
  scaled_tanh,
  elu,
  softsign,
  softplus
};

struct ActivationSpec {
  Activation kind = Activation::sigmoid;
  float alpha = 0.0f;
  float beta = 0.0f;
};

int gate_count(CellType cell);                 // 4, 3, 1
int activations_per_direction(CellType cell);  // 3 (f, g, h), 2 (f, g), 1 (f)
std::vector<ActivationSpec> default_activations(CellType cell, int num_directions);

struct RnnSpec {
  CellType cell = CellType::lstm;
  Direction direction = Direction::forward;
  int64_t layout = 0;  // 0: X [seq, batch, input]; 1: X [batch, seq, input]
  int64_t hidden_size = 0;
  std::vector<ActivationSpec> activations;  // empty: defaults; else activations_per_direction * directions
  std::optional<float> clip;                // bound on every gate pre-activation
  bool input_forget = false;                // LSTM: f = 1 - i
  bool linear_before_reset = false;         // GRU
  // Y as [seq, batch, directions, hidden] (layout 0 only): the Transpose(0, 2, 1, 3) that PyTorch's
  // export puts after a layer, folded into it (graph/fold_rnn_output_transposes.h).
  bool y_directions_inner = false;
  // An activation applied to Y at its store (not to the state): a Relu, LeakyRelu, Sigmoid or Tanh
  // that read only Y, folded into the layer (graph/fuse_activations.h).
  gemm::Activation y_activation = gemm::Activation::none;
  float y_activation_alpha = 0.01f;  // LeakyRelu's slope

  int num_directions() const { return direction == Direction::bidirectional ? 2 : 1; }
};

// Dispatches per timestep of the per-step kernels (1, or 2 for GRU with linear_before_reset = 0).
int rnn_dispatches_per_step(const RnnSpec& spec);

// Output shapes for X of shape `x_shape` (layout-dependent).
Shape rnn_y_shape(const RnnSpec& spec, const Shape& x_shape);  // [S, D, B, H], [B, S, D, H] or [S, B, D, H]
Shape rnn_state_shape(const RnnSpec& spec, const Shape& x_shape);  // [D, B, H] or [B, D, H]

}  // namespace onda::kernels::rnn
