#include "kernels/layout/resize.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "kernels/layout/layout_common.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr uint32_t kWorkgroupSize = 256;

// Mirrors `Params` in resize.wgsl.
struct ResizeUniforms {
  uint32_t threads, words_per_row, run_length, out_offset;
  uint32_t in_offset, in_h, in_w, out_h;
  uint32_t out_w;
  float scale_h, scale_w;
  uint32_t pad;
};

}  // namespace

Shape resize_output_shape(const Shape& input, const std::vector<float>& scales) {
  if (scales.size() != input.size()) {
    throw std::invalid_argument(fmt::format("Resize: {} scales for input {}", scales.size(), shape_string(input)));
  }
  Shape out(input.size());
  for (size_t d = 0; d < input.size(); ++d) {
    if (!(scales[d] > 0)) throw std::invalid_argument(fmt::format("Resize: scale {} on dim {} is not positive", scales[d], d));
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
    throw std::invalid_argument(fmt::format("Resize: output {} for input {}", shape_string(out), shape_string(in)));
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
  if (attributes.mode == ResizeMode::Linear && !is_float(input.dtype())) {
    throw std::invalid_argument(fmt::format("Resize: linear mode needs float32 or float16, got {}", dtype_name(input.dtype())));
  }
  const int64_t count = output.numel();
  if (count == 0) return;
  if (input.numel() == 0) throw std::invalid_argument("Resize: empty input with a non-empty output");
  require_bindable(kc, input, "Resize");
  require_bindable(kc, output, "Resize");
  if (count > INT32_MAX) throw std::invalid_argument("Resize: more than 2^31 elements");

  ResizeUniforms u{};
  u.in_h = rank >= 2 ? static_cast<uint32_t>(in[rank - 2]) : 1;
  u.out_h = rank >= 2 ? static_cast<uint32_t>(out[rank - 2]) : 1;
  u.in_w = static_cast<uint32_t>(in[rank - 1]);
  u.out_w = static_cast<uint32_t>(out[rank - 1]);
  auto scale = [&](size_t d, uint32_t n_in, uint32_t n_out) {
    if (!attributes.scales.empty()) return attributes.scales[d];
    return static_cast<float>(n_out) / static_cast<float>(n_in);
  };
  u.scale_h = rank >= 2 ? scale(rank - 2, u.in_h, u.out_h) : 1.0f;
  u.scale_w = scale(rank - 1, u.in_w, u.out_w);
  if (static_cast<uint64_t>(u.out_h) * u.in_h >= (1u << 24) || static_cast<uint64_t>(u.out_w) * u.in_w >= (1u << 24)) {
    // align_corners multiplies x_resized by (in - 1) exactly in u32 and converts to f32.
    if (attributes.coordinates == ResizeCoordinates::AlignCorners) {
      throw std::invalid_argument("Resize: align_corners coordinate past 2^24 would lose precision");
    }
  }
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
      {"COORD_HALF_PIXEL", coord == ResizeCoordinates::HalfPixel ? "1" : "0"},
      {"COORD_ASYMMETRIC", coord == ResizeCoordinates::Asymmetric ? "1" : "0"},
      {"COORD_ALIGN_CORNERS", coord == ResizeCoordinates::AlignCorners ? "1" : "0"},
      {"COORD_PYTORCH_HALF_PIXEL", coord == ResizeCoordinates::PytorchHalfPixel ? "1" : "0"},
      {"NEAREST_ROUND_PREFER_FLOOR", nearest == ResizeNearestMode::RoundPreferFloor ? "1" : "0"},
      {"NEAREST_ROUND_PREFER_CEIL", nearest == ResizeNearestMode::RoundPreferCeil ? "1" : "0"},
      {"NEAREST_FLOOR", nearest == ResizeNearestMode::Floor ? "1" : "0"},
      {"NEAREST_CEIL", nearest == ResizeNearestMode::Ceil ? "1" : "0"},
  };
  const auto& pipeline = kc.pipelines.get(render_shader("layout/resize.wgsl", values), {}, "layout Resize");
  const auto workgroups = gpu::split_workgroups((u.threads + kWorkgroupSize - 1) / kWorkgroupSize, kc.gpu.limits());
  recorder.dispatch(pipeline, {input.binding(kc.gpu), output.binding(kc.gpu)}, &u, sizeof(u), workgroups, "Resize");
}

}  // namespace onda::kernels
