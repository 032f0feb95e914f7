// The path choice's rules (choose_conv_path, automatic_takes_implicit), the plan-and-record
// convenience functions, and the weights' preparation. The plan is conv_plan.cpp; each path lives in
// its own file (conv_direct.cpp, overlap_add.cpp, conv_gemm.cpp, conv_transpose_gemm.cpp,
// conv_implicit.cpp, conv_weight_parts.cpp).
#include "kernels/conv/conv.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/conv/conv_plan.h"
#include "kernels/conv/conv_step.h"

namespace onda::kernels::conv {

ConvPath choose_conv_path(const ConvGeometry& g, bool has_diagonal) {
  if (g.in_positions() == 0 || g.out_positions() == 0 || g.batch == 0) return ConvPath::direct;
  const int64_t taps = g.kernel_elements();
  if (g.transpose) {
    if (has_diagonal && g.spatial_rank() == 1 && g.group == 1 && g.out_channels == 1 &&
        g.kernel[0] == g.in_channels && g.dilations[0] == 1) {
      return ConvPath::overlap_add;
    }
    return g.group == 1 && g.in_channels >= 16 && g.out_channels * taps >= 16 ? ConvPath::gemm
                                                                              : ConvPath::direct;
  }
  // A pointwise conv is a plain GEMM at any C_in: the direct kernel re-reads its few input channels
  // once per output channel (measured on HTDemucs' DConv expand: docs/benchmark-log.md).
  const bool pointwise = taps == 1;
  return g.group == 1 && (g.in_channels * taps >= 16 || pointwise) && g.out_channels >= 16 ? ConvPath::gemm
                                                                                          : ConvPath::direct;
}

bool automatic_takes_implicit(const ConvGeometry& g) {
  if (g.group != 1 || g.spatial_rank() > 2) return false;
  if (g.transpose) {
    // Per stride phase a Conv with C_in x ceil(K / s) taps: worth the 8-row channel tile from 8 output
    // channels (HTDemucs' decoders: 12..192; SCNet's: 16). Fewer (the dense iSTFT, C_out 1) stay on
    // GEMM + col2im, whose N is C_out k.
    return g.unit_dilations() && g.in_channels >= 8 && g.out_channels >= 8 && g.in_positions() > 0 &&
           g.out_positions() > 0 && g.batch > 0;
  }
  const ConvPath p = choose_conv_path(g, false);
  return p == ConvPath::gemm ||
         (p == ConvPath::direct && g.in_channels * g.kernel_elements() >= 16 && g.out_channels >= 8 &&
          g.in_positions() > 0 && g.out_positions() > 0 && g.batch > 0);
}

void record_conv(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                 const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                 const ConvOptions& options) {
  if (g.transpose) throw std::invalid_argument("record_conv: the geometry is a ConvTranspose");
  ConvTensors tensors;
  tensors.x = x;
  tensors.weights.w = w;
  tensors.bias = bias;
  tensors.y = y;
  detail::check_tensors(g, tensors);
  ConvPlan(kc, g, ConvOperands::of(kc, x, tensors.weights, bias, y), options).record(recorder, pool, tensors);
}

void record_conv_transpose(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                           const ConvGeometry& g, const ConvTransposeWeights& weights, const Tensor& x,
                           const Tensor& bias, const Tensor& y, const ConvOptions& options) {
  if (!g.transpose) throw std::invalid_argument("record_conv_transpose: the geometry is a Conv");
  const ConvTensors tensors{x, weights, bias, y};
  detail::check_tensors(g, tensors);
  ConvPlan(kc, g, ConvOperands::of(kc, x, weights, bias, y), options).record(recorder, pool, tensors);
}

WindowedIdentityCheck record_windowed_identity_check(const KernelContext& kc, gpu::CommandRecorder& recorder,
                                                     gpu::BufferPool& pool, const Tensor& w) {
  const Shape& s = w.shape();
  if (s.size() != 3 || s[1] != 1 || s[0] != s[2] || !is_float(w.dtype())) {
    throw std::invalid_argument("conv: a windowed-identity check needs a float [C, 1, C] weight, got " +
                                shape_string(s));
  }
  return detail::record_identity_check(kc, recorder, pool, w);
}

gemm::PackedB prepack_conv_transpose_weight(const KernelContext& kc, gpu::BufferPool& pool,
                                            gpu::CommandRecorder& recorder, const Tensor& w) {
  if (w.rank() < 3)
    throw std::invalid_argument("conv: a ConvTranspose weight has rank >= 3, got " + shape_string(w.shape()));
  return gemm::prepack_b(kc.gpu, pool, kc.pipelines, recorder,
                         w.reshape({w.shape()[0], w.numel() / std::max<int64_t>(w.shape()[0], 1)}), false);
}

std::optional<std::vector<float>> windowed_identity_diagonal(const Shape& shape,
                                                             std::span<const float> values) {
  if (shape.size() != 3 || shape[1] != 1 || shape[0] != shape[2] || shape[0] < 2) return std::nullopt;
  const int64_t n = shape[0];
  if (static_cast<int64_t>(values.size()) != n * n) return std::nullopt;
  std::vector<float> diagonal(n);
  for (int64_t c = 0; c < n; ++c) {
    for (int64_t k = 0; k < n; ++k) {
      const float v = values[c * n + k];
      if (c == k) {
        diagonal[c] = v;
      } else if (v != 0.0f) {
        return std::nullopt;
      }
    }
  }
  return diagonal;
}

}  // namespace onda::kernels::conv
