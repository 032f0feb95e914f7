#include "kernels/layout/resize.h"

#include <fmt/format.h>

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "kernels/layout/layout_common.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr uint32_t kWorkgroupSize = 256;

// Mirrors `Params` in resize.wgsl.
struct ResizeUniforms {
  uint32_t threads, words_per_row, run_length, out_offset;
  uint32_t in_offset, x_groups, rows, pad;
  uint32_t axis_h[4];  // in, out, scale numerator, scale denominator
  uint32_t axis_w[4];
};

// A scale as a fraction p / q: exact for sizes (out / in) and for the dyadic scales models use
// (2, 0.5, 1.5, ...); otherwise the closest fraction with q <= 2^16 (continued fractions).
std::pair<uint32_t, uint32_t> scale_fraction(double scale) {
  uint64_t p0 = 0, q0 = 1, p1 = 1, q1 = 0;
  double x = scale;
  for (int k = 0; k < 40; ++k) {
    const double a = std::floor(x);
    const uint64_t p2 = static_cast<uint64_t>(a) * p1 + p0, q2 = static_cast<uint64_t>(a) * q1 + q0;
    if (q2 > 65536 || p2 > (1u << 30)) break;
    p0 = p1, q0 = q1, p1 = p2, q1 = q2;
    if (std::abs(static_cast<double>(p1) / static_cast<double>(q1) - scale) <= 1e-12 * scale) break;
    if (x - a <= 0) break;
    x = 1.0 / (x - a);
  }
  return {static_cast<uint32_t>(p1), static_cast<uint32_t>(q1)};
}

}  // namespace

Shape resize_output_shape(const Shape& input, const std::vector<float>& scales) {
  if (scales.size() != input.size()) {
    throw std::invalid_argument(
        fmt::format("Resize: {} scales for input {}", scales.size(), shape_string(input)));
  }
  Shape out(input.size());
  for (size_t d = 0; d < input.size(); ++d) {
    if (!(scales[d] > 0))
      throw std::invalid_argument(fmt::format("Resize: scale {} on dim {} is not positive", scales[d], d));
    out[d] = static_cast<int64_t>(std::floor(static_cast<double>(input[d]) * scales[d]));
  }
  return out;
}

void record_resize(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                   const ResizeAttributes& attributes, const Tensor& output) {
  const Shape& in = input.shape();
  const Shape& out = output.shape();
  require_same_dtype("Resize", input, output);
  if (in.empty() || out.size() != in.size()) {
    throw std::invalid_argument(
        fmt::format("Resize: output {} for input {}", shape_string(out), shape_string(in)));
  }
  if (!attributes.scales.empty() && resize_output_shape(in, attributes.scales) != out) {
    throw std::invalid_argument(fmt::format("Resize: output {} does not match input {} times the scales",
                                            shape_string(out), shape_string(in)));
  }
  const size_t rank = in.size();
  const size_t first_resized = rank >= 2 ? rank - 2 : 0;
  for (size_t d = 0; d < first_resized; ++d) {
    if (in[d] != out[d] || (!attributes.scales.empty() && attributes.scales[d] != 1.0f)) {
      throw std::invalid_argument(fmt::format("Resize: only the last two dims may be resized ({} -> {})",
                                              shape_string(in), shape_string(out)));
    }
  }
  if (attributes.mode != ResizeMode::Nearest && !is_float(input.dtype())) {
    throw std::invalid_argument(fmt::format("Resize: linear and cubic modes need float32 or float16, got {}",
                                            dtype_name(input.dtype())));
  }
  if (!std::isfinite(attributes.cubic_a))
    throw std::invalid_argument("Resize: the cubic coefficient must be finite");
  const int64_t count = output.numel();
  if (count == 0) return;
  if (input.numel() == 0) throw std::invalid_argument("Resize: empty input with a non-empty output");
  require_bindable(kc, input, "Resize");
  require_bindable(kc, output, "Resize");
  if (count > INT32_MAX) throw std::invalid_argument("Resize: more than 2^31 elements");

  ResizeUniforms u{};
  auto axis = [&](uint32_t* a, int64_t d) {
    const int64_t n_in = d >= 0 ? in[d] : 1, n_out = d >= 0 ? out[d] : 1;
    uint64_t p = static_cast<uint64_t>(n_out), q = static_cast<uint64_t>(n_in);
    if (!attributes.scales.empty() && d >= 0) std::tie(p, q) = scale_fraction(attributes.scales[d]);
    const uint64_t g = std::gcd(p, q);
    p /= g, q /= g;
    // The shader's integer numerators: (2 out + 1) q and out * in must stay below 2^31.
    if ((2 * static_cast<uint64_t>(n_out) + 1) * q + p >= (1ull << 31) ||
        static_cast<uint64_t>(n_out) * static_cast<uint64_t>(n_in) >= (1ull << 31)) {
      throw std::invalid_argument(fmt::format(
          "Resize: dim {} -> {} (scale {}/{}) is too large for exact coordinates", n_in, n_out, p, q));
    }
    a[0] = static_cast<uint32_t>(n_in);
    a[1] = static_cast<uint32_t>(n_out);
    a[2] = static_cast<uint32_t>(p);
    a[3] = static_cast<uint32_t>(q);
  };
  axis(u.axis_h, rank >= 2 ? static_cast<int64_t>(rank) - 2 : -1);
  axis(u.axis_w, static_cast<int64_t>(rank) - 1);
  u.out_offset = output.element_offset(kc.gpu);
  u.in_offset = input.element_offset(kc.gpu);
  const bool half = input.dtype() == DType::f16;
  u.run_length = static_cast<uint32_t>(count);
  u.words_per_row = half ? static_cast<uint32_t>(count / 2 + 1) : 1;
  u.threads = half ? u.words_per_row : static_cast<uint32_t>(count);

  const auto coord = attributes.coordinates;
  const auto nearest = attributes.nearest;
  const TemplateValues values = {
      {"HALF", half ? "1" : "0"},
      {"LINEAR", attributes.mode == ResizeMode::Linear ? "1" : "0"},
      {"CUBIC", attributes.mode == ResizeMode::Cubic ? "1" : "0"},
      {"CUBIC_A", fmt::format("{:.9e}", attributes.cubic_a)},
      {"EXCLUDE_OUTSIDE", attributes.exclude_outside ? "1" : "0"},
      {"COORD_HALF_PIXEL", coord == ResizeCoordinates::HalfPixel ? "1" : "0"},
      {"COORD_ASYMMETRIC", coord == ResizeCoordinates::Asymmetric ? "1" : "0"},
      {"COORD_ALIGN_CORNERS", coord == ResizeCoordinates::AlignCorners ? "1" : "0"},
      {"COORD_PYTORCH_HALF_PIXEL", coord == ResizeCoordinates::PytorchHalfPixel ? "1" : "0"},
      {"COORD_TF_HALF_PIXEL_FOR_NN", coord == ResizeCoordinates::TfHalfPixelForNn ? "1" : "0"},
      {"NEAREST_ROUND_PREFER_FLOOR", nearest == ResizeNearestMode::RoundPreferFloor ? "1" : "0"},
      {"NEAREST_ROUND_PREFER_CEIL", nearest == ResizeNearestMode::RoundPreferCeil ? "1" : "0"},
      {"NEAREST_FLOOR", nearest == ResizeNearestMode::Floor ? "1" : "0"},
      {"NEAREST_CEIL", nearest == ResizeNearestMode::Ceil ? "1" : "0"},
  };
  const auto& pipeline = shader_pipeline(kc.pipelines, "layout/resize.wgsl", values, "layout Resize");
  // f16: one invocation per output word (store_elements.wgsl); 32-bit: 64 x 4 output elements a
  // workgroup (resize.wgsl).
  u.x_groups = (u.axis_w[1] + 63) / 64;
  u.rows = static_cast<uint32_t>(count / u.axis_w[1]);
  const uint64_t groups = half ? (u.threads + kWorkgroupSize - 1) / kWorkgroupSize
                               : static_cast<uint64_t>(u.x_groups) * ((u.rows + 3) / 4);
  const auto workgroups = gpu::split_workgroups(groups, kc.gpu.limits());
  recorder.dispatch(pipeline, {input.binding(kc.gpu), output.binding(kc.gpu)}, &u, sizeof(u), workgroups,
                    "Resize");
}

}  // namespace onda::kernels
