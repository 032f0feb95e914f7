// A float64 reference of the ONNX LSTM / GRU / RNN equations (onnx/docs/Operators.md), written
// straight from the spec per timestep, batch row and direction, for the recurrent kernel tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/rnn/rnn_spec.h"

namespace onda::test {

struct RnnReferenceInputs {
  int64_t seq = 0, batch = 0, input = 0;
  std::vector<float> x, w, r, b, p, h0, c0;  // b, p, h0, c0 empty when absent; x/h0/c0 in spec.layout
  std::vector<int> lens;                     // empty when absent
};

struct RnnReferenceOutputs {
  std::vector<double> y, y_h, y_c;  // in spec.layout
};

inline double reference_activation(double x, const kernels::rnn::ActivationSpec& a) {
  using kernels::rnn::Activation;
  switch (a.kind) {
    case Activation::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Activation::tanh: return std::tanh(x);
    case Activation::relu: return std::max(x, 0.0);
    case Activation::hard_sigmoid: return std::clamp(a.alpha * x + a.beta, 0.0, 1.0);
    case Activation::affine: return a.alpha * x + a.beta;
    case Activation::leaky_relu: return x >= 0 ? x : a.alpha * x;
    case Activation::thresholded_relu: return x > a.alpha ? x : 0.0;
    case Activation::scaled_tanh: return a.alpha * std::tanh(a.beta * x);
    case Activation::elu: return x >= 0 ? x : a.alpha * (std::exp(x) - 1.0);
    case Activation::softsign: return x / (1.0 + std::abs(x));
    case Activation::softplus: return std::log1p(std::exp(x));
  }
  return x;
}

inline RnnReferenceOutputs rnn_reference(const kernels::rnn::RnnSpec& spec, const RnnReferenceInputs& in) {
  using kernels::rnn::CellType;
  const int64_t S = in.seq, B = in.batch, I = in.input, H = spec.hidden_size, D = spec.num_directions();
  const int64_t G = kernels::rnn::gate_count(spec.cell), NA = kernels::rnn::activations_per_direction(spec.cell);
  const auto acts = spec.activations.empty() ? kernels::rnn::default_activations(spec.cell, static_cast<int>(D))
                                             : spec.activations;
  const auto xat = [&](int64_t t, int64_t b, int64_t i) {
    return static_cast<double>(spec.layout == 0 ? in.x[(t * B + b) * I + i] : in.x[(b * S + t) * I + i]);
  };
  const auto state_index = [&](int64_t d, int64_t b, int64_t j) {
    return spec.layout == 0 ? (d * B + b) * H + j : (b * D + d) * H + j;
  };
  const auto clip = [&](double v) { return spec.clip ? std::clamp(v, -double(*spec.clip), double(*spec.clip)) : v; };
  RnnReferenceOutputs out;
  out.y.assign(S * D * B * H, 0.0);
  out.y_h.assign(D * B * H, 0.0);
  out.y_c.assign(D * B * H, 0.0);
  for (int64_t d = 0; d < D; ++d) {
    const bool reverse = spec.direction == kernels::rnn::Direction::reverse || d == 1;
    const auto f = [&](int k, double v) { return reference_activation(v, acts[d * NA + k]); };
    const auto W = [&](int64_t g, int64_t j, int64_t i) { return double(in.w[((d * G + g) * H + j) * I + i]); };
    const auto R = [&](int64_t g, int64_t j, int64_t k) { return double(in.r[((d * G + g) * H + j) * H + k]); };
    const auto Wb = [&](int64_t g, int64_t j) { return in.b.empty() ? 0.0 : double(in.b[d * 2 * G * H + g * H + j]); };
    const auto Rb = [&](int64_t g, int64_t j) { return in.b.empty() ? 0.0 : double(in.b[d * 2 * G * H + (G + g) * H + j]); };
    const auto P = [&](int64_t g, int64_t j) { return in.p.empty() ? 0.0 : double(in.p[d * 3 * H + g * H + j]); };
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(H, 0.0), c(H, 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (!in.h0.empty()) h[j] = in.h0[state_index(d, b, j)];
        if (!in.c0.empty()) c[j] = in.c0[state_index(d, b, j)];
      }
      const int64_t len = in.lens.empty() ? S : in.lens[b];
      for (int64_t s = 0; s < S; ++s) {
        const int64_t t = reverse ? S - 1 - s : s;
        if (t >= len) continue;  // past the end: state unchanged, Y stays zero
        // Pre-activations X W^T + H R^T per gate.
        std::vector<double> xg(G * H, 0.0), hg(G * H, 0.0);
        for (int64_t g = 0; g < G; ++g) {
          for (int64_t j = 0; j < H; ++j) {
            for (int64_t i = 0; i < I; ++i) xg[g * H + j] += xat(t, b, i) * W(g, j, i);
            for (int64_t k = 0; k < H; ++k) hg[g * H + j] += h[k] * R(g, j, k);
          }
        }
        std::vector<double> hn(H), cn(H);
        if (spec.cell == CellType::lstm) {
          for (int64_t j = 0; j < H; ++j) {
            const auto pre = [&](int g) { return xg[g * H + j] + hg[g * H + j] + Wb(g, j) + Rb(g, j); };
            const double i_gate = f(0, clip(pre(0) + P(0, j) * c[j]));
            const double f_gate = spec.input_forget ? 1.0 - i_gate : f(0, clip(pre(2) + P(2, j) * c[j]));
            cn[j] = f_gate * c[j] + i_gate * f(1, clip(pre(3)));
            const double o_gate = f(0, clip(pre(1) + P(1, j) * cn[j]));
            hn[j] = o_gate * f(2, cn[j]);
          }
        } else if (spec.cell == CellType::gru) {
          std::vector<double> z(H), r(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = f(0, clip(xg[j] + hg[j] + Wb(0, j) + Rb(0, j)));
            r[j] = f(0, clip(xg[H + j] + hg[H + j] + Wb(1, j) + Rb(1, j)));
          }
          for (int64_t j = 0; j < H; ++j) {
            double pre;
            if (spec.linear_before_reset) {
              pre = xg[2 * H + j] + r[j] * (hg[2 * H + j] + Rb(2, j)) + Wb(2, j);
            } else {
              double rh = 0;
              for (int64_t k = 0; k < H; ++k) rh += r[k] * h[k] * R(2, j, k);
              pre = xg[2 * H + j] + rh + Rb(2, j) + Wb(2, j);
            }
            hn[j] = (1.0 - z[j]) * f(1, clip(pre)) + z[j] * h[j];
          }
        } else {
          for (int64_t j = 0; j < H; ++j) hn[j] = f(0, clip(xg[j] + hg[j] + Wb(0, j) + Rb(0, j)));
        }
        h = hn;
        if (spec.cell == CellType::lstm) c = cn;
        for (int64_t j = 0; j < H; ++j) {
          const int64_t yi = spec.layout == 0 ? ((t * D + d) * B + b) * H + j : ((b * S + t) * D + d) * H + j;
          out.y[yi] = h[j];
        }
      }
      for (int64_t j = 0; j < H; ++j) {
        out.y_h[state_index(d, b, j)] = h[j];
        out.y_c[state_index(d, b, j)] = c[j];
      }
    }
  }
  return out;
}

}  // namespace onda::test
