#include "kernels/rnn/rnn_spec.h"

#include <fmt/format.h>

#include <stdexcept>

namespace onda::kernels::rnn {
int gate_count(CellType cell) {
  return cell == CellType::lstm ? 4 : cell == CellType::gru ? 3 : 1;
}

int activations_per_direction(CellType cell) {
  return cell == CellType::lstm ? 3 : cell == CellType::gru ? 2 : 1;
}

std::vector<ActivationSpec> default_activations(CellType cell, int num_directions) {
  std::vector<ActivationSpec> one;
  switch (cell) {
    case CellType::lstm:
      one = {{Activation::sigmoid}, {Activation::tanh}, {Activation::tanh}};
      break;
    case CellType::gru:
      one = {{Activation::sigmoid}, {Activation::tanh}};
      break;
    case CellType::rnn:
      one = {{Activation::tanh}};
      break;
  }
  std::vector<ActivationSpec> all;
  for (int d = 0; d < num_directions; ++d) all.insert(all.end(), one.begin(), one.end());
  return all;
}

int rnn_dispatches_per_step(const RnnSpec& spec) {
  return spec.cell == CellType::gru && !spec.linear_before_reset ? 2 : 1;
}

Shape rnn_y_shape(const RnnSpec& spec, const Shape& x_shape) {
  if (x_shape.size() != 3)
    throw std::invalid_argument(fmt::format("X must be 3-D, got {}", shape_string(x_shape)));
  const int64_t seq = spec.layout == 0 ? x_shape[0] : x_shape[1];
  const int64_t batch = spec.layout == 0 ? x_shape[1] : x_shape[0];
  const int64_t d = spec.num_directions();
  if (spec.layout != 0) return {batch, seq, d, spec.hidden_size};
  if (spec.y_directions_inner) return {seq, batch, d, spec.hidden_size};
  return {seq, d, batch, spec.hidden_size};
}

Shape rnn_state_shape(const RnnSpec& spec, const Shape& x_shape) {
  if (x_shape.size() != 3)
    throw std::invalid_argument(fmt::format("X must be 3-D, got {}", shape_string(x_shape)));
  const int64_t batch = spec.layout == 0 ? x_shape[1] : x_shape[0];
  const int64_t d = spec.num_directions();
  if (spec.layout == 0) return {d, batch, spec.hidden_size};
  return {batch, d, spec.hidden_size};
}

}  // namespace onda::kernels::rnn
