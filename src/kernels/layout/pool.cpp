#include "kernels/layout/pool.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/layout/layout_common.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr uint32_t kWorkgroupSize = 256;

// Mirrors `Params` in pool.wgsl.
struct PoolUniforms {
  uint32_t threads, words_per_row, run_length, out_offset;
  uint32_t in_offset;
  int32_t in_h, in_w;
  uint32_t out_h, out_w;
  int32_t kernel_h, kernel_w, stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w, padded_h,
      padded_w;
  uint32_t pad;
};

int64_t pooled_length(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end,
                      int64_t dilation, bool ceil_mode) {
  const int64_t span = in + pad_begin + pad_end - ((kernel - 1) * dilation + 1);
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // PyTorch / ONNX Runtime: the last window must start inside the input or the begin padding.
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

}  // namespace

Shape pool2d_output_shape(const Shape& input, const Pool2dAttributes& a) {
  if (input.size() != 3 && input.size() != 4) {
    throw std::invalid_argument(fmt::format("Pool: input {} must be NCW or NCHW", shape_string(input)));
  }
  if (a.kernel_h < 1 || a.kernel_w < 1 || a.stride_h < 1 || a.stride_w < 1 || a.dilation_h < 1 ||
      a.dilation_w < 1) {
    throw std::invalid_argument("Pool: kernel, strides and dilations must be positive");
  }
  const int64_t kh = (a.kernel_h - 1) * a.dilation_h + 1, kw = (a.kernel_w - 1) * a.dilation_w + 1;
  if (a.pad_top < 0 || a.pad_left < 0 || a.pad_bottom < 0 || a.pad_right < 0 || a.pad_top >= kh ||
      a.pad_bottom >= kh || a.pad_left >= kw || a.pad_right >= kw) {
    throw std::invalid_argument("Pool: pads must be non-negative and smaller than the kernel");
  }
  Shape out = input;
  const size_t r = input.size();
  if (r == 3) {
    if (a.kernel_h != 1 || a.pad_top || a.pad_bottom)
      throw std::invalid_argument("Pool: a 1-D pool has kernel_h 1, no H pads");
    out[2] =
        pooled_length(input[2], a.kernel_w, a.stride_w, a.pad_left, a.pad_right, a.dilation_w, a.ceil_mode);
  } else {
    out[2] =
        pooled_length(input[2], a.kernel_h, a.stride_h, a.pad_top, a.pad_bottom, a.dilation_h, a.ceil_mode);
    out[3] =
        pooled_length(input[3], a.kernel_w, a.stride_w, a.pad_left, a.pad_right, a.dilation_w, a.ceil_mode);
  }
  return out;
}

void record_pool2d(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                   const Pool2dAttributes& a, const Tensor& output) {
  const std::string name = a.kind == PoolKind::Average ? "AveragePool" : "MaxPool";
  require_same_dtype(name, input, output);
  if (!is_float(input.dtype())) {
    throw std::invalid_argument(
        fmt::format("{}: needs float32 or float16, got {}", name, dtype_name(input.dtype())));
  }
  const Shape expected = pool2d_output_shape(input.shape(), a);
  if (output.shape() != expected) {
    throw std::invalid_argument(fmt::format("{}: output must be {}, got {}", name, shape_string(expected),
                                            shape_string(output.shape())));
  }
  const int64_t count = output.numel();
  if (count == 0) return;
  require_bindable(kc, input, name);
  require_bindable(kc, output, name);
  if (count > INT32_MAX || input.numel() > INT32_MAX)
    throw std::invalid_argument(name + ": more than 2^31 elements");
  const Shape& in = input.shape();
  const bool rank4 = in.size() == 4;
  PoolUniforms u{};
  u.in_h = rank4 ? static_cast<int32_t>(in[2]) : 1;
  u.in_w = static_cast<int32_t>(in.back());
  u.out_h = rank4 ? static_cast<uint32_t>(expected[2]) : 1;
  u.out_w = static_cast<uint32_t>(expected.back());
  u.kernel_h = static_cast<int32_t>(a.kernel_h);
  u.kernel_w = static_cast<int32_t>(a.kernel_w);
  u.stride_h = static_cast<int32_t>(a.stride_h);
  u.stride_w = static_cast<int32_t>(a.stride_w);
  u.pad_top = static_cast<int32_t>(a.pad_top);
  u.pad_left = static_cast<int32_t>(a.pad_left);
  u.dilation_h = static_cast<int32_t>(a.dilation_h);
  u.dilation_w = static_cast<int32_t>(a.dilation_w);
  u.padded_h = static_cast<int32_t>(u.in_h + a.pad_top + a.pad_bottom);
  u.padded_w = static_cast<int32_t>(u.in_w + a.pad_left + a.pad_right);
  u.out_offset = output.element_offset(kc.gpu);
  u.in_offset = input.element_offset(kc.gpu);
  const bool half = input.dtype() == DType::f16;
  u.run_length = static_cast<uint32_t>(count);
  u.words_per_row = half ? static_cast<uint32_t>(count / 2 + 1) : 1;
  u.threads = half ? u.words_per_row : static_cast<uint32_t>(count);
  const TemplateValues values = {
      {"HALF", half ? "1" : "0"},
      {"AVERAGE", a.kind == PoolKind::Average ? "1" : "0"},
      {"COUNT_INCLUDE_PAD", a.count_include_pad ? "1" : "0"},
  };
  const auto& pipeline = shader_pipeline(kc.pipelines, "layout/pool.wgsl", values, "layout " + name);
  const auto workgroups =
      gpu::split_workgroups((u.threads + kWorkgroupSize - 1) / kWorkgroupSize, kc.gpu.limits());
  recorder.dispatch(pipeline, {input.binding(kc.gpu), output.binding(kc.gpu)}, &u, sizeof(u), workgroups,
                    name);
}

}  // namespace onda::kernels
