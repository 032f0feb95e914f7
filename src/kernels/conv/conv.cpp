// Path choice, tensor validation, and the direct and overlap-add kernels. The GEMM paths live in
// conv_gemm.cpp and conv_transpose_gemm.cpp.
#include "kernels/conv/conv.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "gpu/gpu_error.h"
#include "kernels/common/binding_window.h"
#include "kernels/common/tensor_access.h"
#include "kernels/conv/conv_uniforms.h"
#include "kernels/shader_template.h"

namespace onda::kernels::conv {
namespace {

using detail::ConvUniforms;

void check_tensor(const Tensor& t, const Shape& shape, const char* what) {
  if (!t.defined()) throw std::invalid_argument(fmt::format("conv: {} missing", what));
  if (!is_float(t.dtype())) {
    throw std::invalid_argument(
        fmt::format("conv: {} must be float32 or float16, got {}", what, dtype_name(t.dtype())));
  }
  if (t.shape() != shape) {
    throw std::invalid_argument(
        fmt::format("conv: {} is {}, expected {}", what, shape_string(t.shape()), shape_string(shape)));
  }
}

void check_common(const ConvGeometry& g, const Tensor& x, const Tensor& bias, const Tensor& y) {
  Shape x_shape = {g.batch, g.in_channels};
  x_shape.insert(x_shape.end(), g.in_size.begin(), g.in_size.end());
  check_tensor(x, x_shape, "input X");
  check_tensor(y, g.output_shape(), "output Y");
  if (y.dtype() != x.dtype()) throw std::invalid_argument("conv: output Y must have the dtype of X");
  if (bias.defined()) check_tensor(bias, {g.out_channels}, "bias");
}

std::string flag(bool on) {
  return on ? "1" : "0";
}

bool overlap_add_applies(const ConvGeometry& g) {
  return g.transpose && g.spatial_rank() == 1 && g.group == 1 && g.out_channels == 1 &&
         g.kernel[0] == g.in_channels && g.dilations[0] == 1 && g.in_positions() > 0;
}

// Extracts the diagonal of a [C, 1, C] weight and raises the flag if it has other non-zero entries.
WindowedIdentityCheck record_check(const KernelContext& kc, gpu::CommandRecorder& recorder,
                                   gpu::BufferPool& pool, const Tensor& w) {
  const int64_t channels = w.shape()[0];
  WindowedIdentityCheck check;
  check.diagonal = Tensor::empty(pool, DType::f32, {channels});
  const uint32_t zero = 0;
  check.flag = Tensor::upload(recorder, pool, DType::f32, {1}, &zero);  // 0 bits: no off-diagonal entry yet
  if (!fits_one_binding(kc.gpu, w)) {
    detail::record_identity_check_windows(kc, recorder, w, check.diagonal, check.flag);
    return check;
  }
  ConvUniforms u{};
  u.kernel[2] = detail::u32(channels, "channels");
  u.offsets[1] = w.element_offset(kc.gpu);
  u.region[2] = detail::u32(w.numel(), "weight entries");
  const auto& pipeline = shader_pipeline(kc.pipelines, "conv/windowed_identity_check.wgsl",
                                         {{"W_ACCESS", tensor_access("w", 0, w.dtype(), false)}},
                                         "conv windowed identity check");
  const gpu::BufferBinding bindings[] = {w.binding(kc.gpu), check.diagonal.binding(kc.gpu),
                                         check.flag.binding(kc.gpu)};
  detail::dispatch(kc, recorder, pipeline, bindings, u, (w.numel() + 15) / 16,
                   "conv windowed identity check");
  return check;
}

// The diagonal from the host (`diagonal`) or the GPU (`weights.diagonal_device`), or extracted now
// (checked variant with `w`); a checked run (GPU check, now or earlier) also binds the flag and w.
void record_overlap_add(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                        const ConvGeometry& g, const ConvTransposeWeights& weights, const Tensor& x,
                        const Tensor& bias, const Tensor& y, const ConvOptions& options) {
  ConvUniforms u = detail::make_uniforms(g);
  u.activation_alpha = options.activation_alpha;
  const Tensor& w = weights.w;
  Tensor diag, flag_tensor;
  if (weights.diagonal_device.defined()) {
    diag = weights.diagonal_device;
    flag_tensor = weights.identity_flag;
  } else if (weights.diagonal) {
    diag = Tensor::upload(recorder, pool, DType::f32, {g.in_channels}, weights.diagonal->data());
  } else {
    const WindowedIdentityCheck check = record_check(kc, recorder, pool, w);
    diag = check.diagonal;
    flag_tensor = check.flag;
  }
  if (diag.shape() != Shape{g.in_channels} || diag.dtype() != DType::f32) {
    throw std::invalid_argument(fmt::format("conv: the overlap-add diagonal must be f32 [{}], got {} {}",
                                            g.in_channels, dtype_name(diag.dtype()),
                                            shape_string(diag.shape())));
  }
  const bool checked = flag_tensor.defined();
  if (checked && !w.defined()) throw std::invalid_argument("conv: a checked overlap-add needs the weight W");
  if (checked && !fits_one_binding(kc.gpu, w)) {
    return detail::record_overlap_add_windows(kc, recorder, pool, g, w, diag, flag_tensor, x, bias, y,
                                              options);
  }
  TemplateValues v = {{"X_ACCESS", tensor_access("x", 0, x.dtype(), false)},
                      {"HAS_BIAS", flag(bias.defined())},
                      {"CHECKED", flag(checked)},
                      {"W_ACCESS", ""}};
  detail::add_activation(v, options.activation);
  std::vector<gpu::BufferBinding> bindings = {x.binding(kc.gpu), diag.binding(kc.gpu)};
  u.offsets[1] = 0;
  if (diag.element_offset(kc.gpu) != 0)
    throw std::invalid_argument("conv: the overlap-add diagonal must not be a view");
  int b = 2;
  if (checked) {
    bindings.push_back(flag_tensor.binding(kc.gpu));
    v["W_ACCESS"] = tensor_access("w", 3, w.dtype(), false);
    bindings.push_back(w.binding(kc.gpu));
    u.offsets[1] = w.element_offset(kc.gpu);
    b = 4;
  }
  v["BIAS_ACCESS"] = bias.defined() ? tensor_access("bias", b++, bias.dtype(), false) : "";
  if (bias.defined()) bindings.push_back(bias.binding(kc.gpu));
  v["Y_ACCESS"] = tensor_access("y", b++, y.dtype(), true);
  bindings.push_back(y.binding(kc.gpu));
  v["PARAMS_BINDING"] = std::to_string(b);
  u.offsets[0] = x.element_offset(kc.gpu);
  u.offsets[2] = bias.defined() ? bias.element_offset(kc.gpu) : 0;
  u.offsets[3] = y.element_offset(kc.gpu);
  const int64_t s = g.strides[0], pad = g.pads_begin[0];
  if (options.per_output_overlap_add || s < 32 || pad < 0) {
    const auto& pipeline =
        shader_pipeline(kc.pipelines, "conv/overlap_add.wgsl", v, "conv transpose overlap-add");
    detail::dispatch(kc, recorder, pipeline, bindings, u, y.numel(), "conv transpose overlap-add");
    return;
  }
  // Tiles of 32 hops x 32 offsets per batch over the hops m = (o + pad) / s that outputs reach.
  const int64_t m_first = pad / s, m_last = (g.out_size[0] - 1 + pad) / s;
  const int64_t tiles_m = (m_last - m_first + 32) / 32, tiles_j = (s + 31) / 32;
  u.chunk[2] = detail::u32(tiles_m, "hop tiles");
  u.chunk[3] = detail::u32(tiles_j, "offset tiles");
  u.region[0] = detail::u32(m_first, "first hop");
  const uint64_t workgroups = static_cast<uint64_t>(g.batch * tiles_m * tiles_j);
  detail::u32(g.batch * tiles_m * tiles_j, "overlap-add workgroups");
  const auto& pipeline =
      shader_pipeline(kc.pipelines, "conv/overlap_add_tiled.wgsl", v, "conv transpose overlap-add tiled");
  recorder.dispatch(pipeline, bindings, &u, sizeof(u), gpu::split_workgroups(workgroups, kc.gpu.limits()),
                    "conv transpose overlap-add tiled");
}

}  // namespace

namespace detail {

// Direct Conv / ConvTranspose: bindings x, w, [bias], y, params.
void record_direct(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                   const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& bias,
                   const Tensor& y, const ConvOptions& options) {
  ConvUniforms u = make_uniforms(g);
  u.activation_alpha = options.activation_alpha;
  const bool empty_input = x.numel() == 0 || w.numel() == 0;
  const Tensor xb = empty_input ? placeholder(pool) : x;
  const Tensor wb = empty_input ? placeholder(pool) : w;
  if (empty_input) u.in_size[3] = 0, u.kernel[3] = 1;  // no input channel is read
  TemplateValues v = {{"X_ACCESS", tensor_access("x", 0, xb.dtype(), false)},
                      {"W_ACCESS", tensor_access("w", 1, wb.dtype(), false)},
                      {"HAS_BIAS", flag(bias.defined())}};
  add_activation(v, options.activation);
  std::vector<gpu::BufferBinding> bindings = {xb.binding(kc.gpu), wb.binding(kc.gpu)};
  int b = 2;
  v["BIAS_ACCESS"] = bias.defined() ? tensor_access("bias", b++, bias.dtype(), false) : "";
  if (bias.defined()) bindings.push_back(bias.binding(kc.gpu));
  v["Y_ACCESS"] = tensor_access("y", b++, y.dtype(), true);
  bindings.push_back(y.binding(kc.gpu));
  v["PARAMS_BINDING"] = std::to_string(b);
  u.offsets[0] = empty_input ? 0 : x.element_offset(kc.gpu);
  u.offsets[1] = empty_input ? 0 : w.element_offset(kc.gpu);
  u.offsets[2] = bias.defined() ? bias.element_offset(kc.gpu) : 0;
  u.offsets[3] = y.element_offset(kc.gpu);
  const char* file = g.transpose ? "conv/conv_transpose_direct.wgsl" : "conv/conv_direct.wgsl";
  const auto& pipeline =
      shader_pipeline(kc.pipelines, file, v, g.transpose ? "conv transpose direct" : "conv direct");
  dispatch(kc, recorder, pipeline, bindings, u, y.numel(),
           g.transpose ? "conv transpose direct" : "conv direct");
}

}  // namespace detail

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
  // once per output channel (HTDemucs' DConv expand, 6 -> 96 channels, ran twice as fast as a GEMM
  // than direct on an H200, ahead of cuDNN).
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
  check_common(g, x, bias, y);
  check_tensor(w, g.weight_shape(), "weight W");
  if (y.numel() == 0) return;
  if (detail::weight_needs_parts(kc, g, w))
    return detail::record_conv_weight_parts(kc, recorder, pool, g, x, w, bias, y, options);
  const detail::ChunkLimits limits = detail::chunk_limits(kc, options);
  ConvPath path = options.path == ConvPath::automatic ? choose_conv_path(g, false) : options.path;
  if (options.path == ConvPath::automatic && path == ConvPath::gemm &&
      !detail::conv_gemm_fits(g, x.dtype(), y.dtype(), limits)) {
    path = ConvPath::direct;
  }
  // Few channels but one group of one batch over the binding limit: the gemm path windows X and Y.
  if (options.path == ConvPath::automatic && path == ConvPath::direct && g.group == 1 && x.numel() > 0 &&
      !detail::direct_fits(g, x.dtype(), y.dtype(), limits) &&
      detail::conv_gemm_fits(g, x.dtype(), y.dtype(), limits)) {
    path = ConvPath::gemm;
  }
  // Where im2col + GEMM (or the direct kernel, for few output channels) would run, the implicit GEMM
  // does the same product without a column buffer.
  if (options.path == ConvPath::automatic && automatic_takes_implicit(g) && options.allow_implicit &&
      kc.tuning.conv.implicit_gemm && detail::conv_implicit_applies(kc, g, x, w, y, limits)) {
    path = ConvPath::implicit_gemm;
  }
  switch (path) {
    case ConvPath::implicit_gemm:
      if (!detail::conv_implicit_applies(kc, g, x, w, y, limits)) {
        throw std::invalid_argument(
            "conv: implicit_gemm needs group 1, rank <= 2, a non-empty input and X, W, Y within one binding");
      }
      return detail::record_conv_implicit(kc, recorder, pool, g, x, w, bias, y, options);
    case ConvPath::gemm:
      if (g.group != 1) throw std::invalid_argument("conv: the gemm path needs group 1");
      if (x.numel() == 0) return detail::record_direct(kc, recorder, pool, g, x, w, bias, y, options);
      return detail::record_conv_gemm(kc, recorder, pool, g, x, w, bias, y, limits, options);
    case ConvPath::overlap_add:
      throw std::invalid_argument("conv: overlap_add is a ConvTranspose path");
    default:
      return detail::record_direct_sliced(kc, recorder, pool, g, x, w, bias, y, options, limits);
  }
}

void record_conv_transpose(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                           const ConvGeometry& g, const ConvTransposeWeights& weights, const Tensor& x,
                           const Tensor& bias, const Tensor& y, const ConvOptions& options) {
  if (!g.transpose) throw std::invalid_argument("record_conv_transpose: the geometry is a Conv");
  check_common(g, x, bias, y);
  if (weights.w.defined()) check_tensor(weights.w, g.weight_shape(), "weight W");
  if (y.numel() == 0) return;
  const detail::ChunkLimits limits = detail::chunk_limits(kc, options);
  const bool has_diagonal = weights.diagonal.has_value() || weights.diagonal_device.defined() ||
                            (weights.check_windowed_identity && weights.w.defined());
  if (!has_diagonal && detail::weight_needs_parts(kc, g, weights.w))
    return detail::record_conv_weight_parts(kc, recorder, pool, g, x, weights.w, bias, y, options);
  ConvPath path = options.path == ConvPath::automatic ? choose_conv_path(g, has_diagonal) : options.path;
  if (options.path == ConvPath::automatic && path == ConvPath::gemm &&
      !detail::conv_transpose_gemm_fits(g, x.dtype(), y.dtype(), limits)) {
    path = ConvPath::direct;
  }
  if (options.path == ConvPath::automatic && path == ConvPath::direct && g.group == 1 && x.numel() > 0 &&
      weights.w.defined() && !detail::direct_fits(g, x.dtype(), y.dtype(), limits) &&
      detail::conv_transpose_gemm_fits(g, x.dtype(), y.dtype(), limits)) {
    path = ConvPath::gemm;
  }
  // Per stride phase the implicit GEMM: no column buffer, each output written once by its phase.
  if (options.path == ConvPath::automatic && path != ConvPath::overlap_add && weights.w.defined() &&
      automatic_takes_implicit(g) && options.allow_implicit && kc.tuning.conv.implicit_gemm &&
      detail::conv_implicit_applies(kc, g, x, weights.w, y, limits)) {
    path = ConvPath::implicit_gemm;
  }
  if (path == ConvPath::implicit_gemm) {
    if (!weights.w.defined() || !detail::conv_implicit_applies(kc, g, x, weights.w, y, limits)) {
      throw std::invalid_argument(
          "conv: implicit_gemm ConvTranspose needs the weight tensor, group 1, rank <= 2, dilation 1, a non-empty "
          "input and X, W, Y within one binding");
    }
    return detail::record_conv_implicit(kc, recorder, pool, g, x, weights.w, bias, y, options);
  }
  if (path == ConvPath::overlap_add) {
    if (!has_diagonal || !overlap_add_applies(g) ||
        (weights.diagonal && static_cast<int64_t>(weights.diagonal->size()) != g.in_channels)) {
      throw std::invalid_argument(
          "conv: overlap_add needs a 1-D [C, 1, C] weight with its diagonal or check_windowed_identity, "
          "group 1, "
          "dilation 1");
    }
    return record_overlap_add(kc, recorder, pool, g, weights, x, bias, y, options);
  }
  if (!weights.w.defined() && !(path == ConvPath::gemm && weights.packed)) {
    throw std::invalid_argument("conv: this ConvTranspose path needs the weight tensor");
  }
  if (path == ConvPath::gemm) {
    if (g.group != 1) throw std::invalid_argument("conv: the gemm path needs group 1");
    if (x.numel() != 0)
      return detail::record_conv_transpose_gemm(kc, recorder, pool, g, weights.w, weights.packed, x, bias, y,
                                                limits, options);
  }
  detail::record_direct_sliced(kc, recorder, pool, g, x, weights.w, bias, y, options, limits);
}

WindowedIdentityCheck record_windowed_identity_check(const KernelContext& kc, gpu::CommandRecorder& recorder,
                                                     gpu::BufferPool& pool, const Tensor& w) {
  const Shape& s = w.shape();
  if (s.size() != 3 || s[1] != 1 || s[0] != s[2] || !is_float(w.dtype())) {
    throw std::invalid_argument("conv: a windowed-identity check needs a float [C, 1, C] weight, got " +
                                shape_string(s));
  }
  return record_check(kc, recorder, pool, w);
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
