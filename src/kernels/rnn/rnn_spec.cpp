#include "kernels/rnn/rnn_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace onda::kernels::rnn {
namespace {

// Name, how many alpha / beta values it takes, and the defaults of the ONNX operator of that name.
struct ActivationInfo {
  const char* name;
  Activation kind;
  int alphas, betas;
  float default_alpha, default_beta;
};

constexpr ActivationInfo kActivations[] = {
    {"sigmoid", Activation::sigmoid, 0, 0, 0.0f, 0.0f},
    {"tanh", Activation::tanh, 0, 0, 0.0f, 0.0f},
    {"relu", Activation::relu, 0, 0, 0.0f, 0.0f},
    {"hardsigmoid", Activation::hard_sigmoid, 1, 1, 0.2f, 0.5f},
    {"affine", Activation::affine, 1, 1, 1.0f, 0.0f},
    {"leakyrelu", Activation::leaky_relu, 1, 0, 0.01f, 0.0f},
    {"thresholdedrelu", Activation::thresholded_relu, 1, 0, 1.0f, 0.0f},
    {"scaledtanh", Activation::scaled_tanh, 1, 1, 1.0f, 1.0f},
    {"elu", Activation::elu, 1, 0, 1.0f, 0.0f},
    {"softsign", Activation::softsign, 0, 0, 0.0f, 0.0f},
    {"softplus", Activation::softplus, 0, 0, 0.0f, 0.0f},
};

}  // namespace

std::vector<ActivationSpec> parse_activations(const std::vector<std::string>& names, const std::vector<float>& alpha,
                                              const std::vector<float>& beta) {
  std::vector<ActivationSpec> specs;
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    const ActivationInfo* info = nullptr;
    for (const ActivationInfo& a : kActivations) {
      if (lower == a.name) info = &a;
    }
    if (!info) throw std::invalid_argument(fmt::format("unsupported activation '{}'", name));
    ActivationSpec spec{info->kind, info->default_alpha, info->default_beta};
    if (info->alphas && next_alpha < alpha.size()) spec.alpha = alpha[next_alpha++];
    if (info->betas && next_beta < beta.size()) spec.beta = beta[next_beta++];
    specs.push_back(spec);
  }
  return specs;
}

int gate_count(CellType cell) { return cell == CellType::lstm ? 4 : cell == CellType::gru ? 3 : 1; }

int activations_per_direction(CellType cell) { return cell == CellType::lstm ? 3 : cell == CellType::gru ? 2 : 1; }

std::vector<ActivationSpec> default_activations(CellType cell, int num_directions) {
  std::vector<ActivationSpec> one;
  switch (cell) {
    case CellType::lstm: one = {{Activation::sigmoid}, {Activation::tanh}, {Activation::tanh}}; break;
    case CellType::gru: one = {{Activation::sigmoid}, {Activation::tanh}}; break;
    case CellType::rnn: one = {{Activation::tanh}}; break;
  }
  std::vector<ActivationSpec> all;
  for (int d = 0; d < num_directions; ++d) all.insert(all.end(), one.begin(), one.end());
  return all;
}

Shape rnn_y_shape(const RnnSpec& spec, const Shape& x_shape) {
  if (x_shape.size() != 3) throw std::invalid_argument(fmt::format("X must be 3-D, got {}", shape_string(x_shape)));
  const int64_t seq = spec.layout == 0 ? x_shape[0] : x_shape[1];
  const int64_t batch = spec.layout == 0 ? x_shape[1] : x_shape[0];
  const int64_t d = spec.num_directions();
  if (spec.layout == 0) return {seq, d, batch, spec.hidden_size};
  return {batch, seq, d, spec.hidden_size};
}

Shape rnn_state_shape(const RnnSpec& spec, const Shape& x_shape) {
  if (x_shape.size() != 3) throw std::invalid_argument(fmt::format("X must be 3-D, got {}", shape_string(x_shape)));
  const int64_t batch = spec.layout == 0 ? x_shape[1] : x_shape[0];
  const int64_t d = spec.num_directions();
  if (spec.layout == 0) return {d, batch, spec.hidden_size};
  return {batch, d, spec.hidden_size};
}

}  // namespace onda::kernels::rnn
