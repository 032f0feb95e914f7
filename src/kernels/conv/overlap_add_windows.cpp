// The overlap-add ConvTranspose and its windowed-identity check on a weight [C, 1, C] larger than one
// storage binding (MDX23C's iSTFT: 8192 x 8192 float32, 268 MB against lavapipe's 128 MiB): both
// bind windows of W's rows (kernels/common/binding_window.h) instead of W whole. The check runs once
// per window of flat entries (the flag collects every window's verdict); the overlap-add once per
// batch and window of input channels (W's rows and X's of those channels), carrying its sums in a
// float32 buffer (overlap_add.wgsl, WINDOWED).
#include <fmt/format.h>

#include <algorithm>

#include "gpu/gpu_error.h"
#include "kernels/common/binding_window.h"
#include "kernels/common/tensor_access.h"
#include "kernels/conv/conv_uniforms.h"

namespace onda::kernels::conv::detail {

void record_identity_check_windows(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& w,
                                   const Tensor& diagonal, const Tensor& flag) {
  const int64_t entries = w.numel();
  // Whole multiples of 16 entries (one invocation's share) per window.
  const int64_t per_window = window_capacity(kc.gpu, w.dtype()) / 16 * 16;
  if (per_window < 16)
    throw gpu::DeviceLimitError("conv: the storage binding limit is too small for a window of W");
  const auto& pipeline = shader_pipeline(kc.pipelines, "conv/windowed_identity_check.wgsl",
                                         {{"W_ACCESS", tensor_access("w", 0, w.dtype(), false)}},
                                         "conv windowed identity check");
  for (int64_t begin = 0; begin < entries; begin += per_window) {
    const int64_t end = std::min(entries, begin + per_window);
    const ElementWindow window = element_window(kc.gpu, w, begin, end);
    ConvUniforms u{};
    u.kernel[2] = u32(w.shape()[0], "channels");
    u.offsets[1] = static_cast<uint32_t>(window.offset);  // wraps: the kernel's u32 sums wrap back
    u.region[0] = u32(begin, "first entry");
    u.region[2] = u32(end, "last entry");
    const gpu::BufferBinding bindings[] = {window.binding, diagonal.binding(kc.gpu), flag.binding(kc.gpu)};
    dispatch(kc, recorder, pipeline, bindings, u, (end - begin + 15) / 16, "conv windowed identity check");
  }
}

void record_overlap_add_windows(const KernelContext& kc, gpu::CommandRecorder& recorder,
                                gpu::BufferPool& pool, const ConvGeometry& g, const Tensor& w,
                                const Tensor& diagonal, const Tensor& flag, const Tensor& x,
                                const Tensor& bias, const Tensor& y, const ConvOptions& options) {
  const int64_t channels = g.in_channels, frames = g.in_size[0], length = g.out_size[0];
  // Per batch: windows of input channels whose rows of W and of X each fit a binding.
  const int64_t rows_per_window =
      std::min(window_capacity(kc.gpu, w.dtype()) / std::max<int64_t>(channels, 1),
               window_capacity(kc.gpu, x.dtype()) / std::max<int64_t>(frames, 1));
  if (rows_per_window < 1 || length > window_capacity(kc.gpu, y.dtype()) ||
      length > window_capacity(kc.gpu, DType::f32)) {
    throw gpu::DeviceLimitError(
        fmt::format("conv: one channel of the overlap-add's weight or input, or one output row, exceeds the "
                    "storage binding "
                    "limit of {} bytes ({})",
                    kc.gpu.limits().maxStorageBufferBindingSize, g.describe()));
  }
  const Tensor partial = Tensor::empty(pool, DType::f32, {length});
  TemplateValues v = {{"X_ACCESS", tensor_access("x", 0, x.dtype(), false)},
                      {"HAS_BIAS", bias.defined() ? "1" : "0"},
                      {"CHECKED", "1"},
                      {"WINDOWED", "1"},
                      {"W_ACCESS", tensor_access("w", 3, w.dtype(), false)}};
  add_activation(v, options.activation);
  int b = 4;
  v["BIAS_ACCESS"] = bias.defined() ? tensor_access("bias", b++, bias.dtype(), false) : "";
  v["Y_ACCESS"] = tensor_access("y", b++, y.dtype(), true);
  v["PARTIAL_BINDING"] = std::to_string(b);  // the uniform block comes after the storage bindings
  v["PARAMS_BINDING"] = std::to_string(b + 1);
  const auto& pipeline =
      shader_pipeline(kc.pipelines, "conv/overlap_add.wgsl", v, "conv transpose overlap-add windowed");
  ConvGeometry one = g;
  one.batch = 1;
  ConvUniforms u = make_uniforms(one);
  u.activation_alpha = options.activation_alpha;
  u.offsets[2] = bias.defined() ? bias.element_offset(kc.gpu) : 0;
  const int64_t windows = (channels + rows_per_window - 1) / rows_per_window;
  for (int64_t n = 0; n < g.batch; ++n) {
    const Tensor xn = x.slice_outer(n, n + 1), yn = y.slice_outer(n, n + 1);
    const ElementWindow yw = element_window(kc.gpu, yn, 0, length);
    u.offsets[3] = static_cast<uint32_t>(yw.offset);
    // From the highest channels down (see overlap_add.wgsl).
    for (int64_t i = 0; i < windows; ++i) {
      const int64_t c_end = channels - i * rows_per_window,
                    c_begin = std::max<int64_t>(0, c_end - rows_per_window);
      const ElementWindow ww = element_window(kc.gpu, w, c_begin * channels, c_end * channels);
      const ElementWindow xw = element_window(kc.gpu, xn, c_begin * frames, c_end * frames);
      // The windows' offsets wrap as u32: the kernel's index sums wrap back into the window.
      u.offsets[0] = static_cast<uint32_t>(xw.offset);
      u.offsets[1] = static_cast<uint32_t>(ww.offset);
      u.chunk[0] = u32(c_begin, "first channel");
      u.chunk[1] = u32(c_end, "channel end");
      u.chunk[2] = (i > 0 ? 1u : 0u) | (i == windows - 1 ? 2u : 0u);
      std::vector<gpu::BufferBinding> bindings = {xw.binding, diagonal.binding(kc.gpu), flag.binding(kc.gpu),
                                                  ww.binding};
      if (bias.defined()) bindings.push_back(bias.binding(kc.gpu));
      bindings.push_back(yw.binding);
      bindings.push_back(partial.binding(kc.gpu));
      dispatch(kc, recorder, pipeline, bindings, u, length, "conv transpose overlap-add windowed");
    }
  }
}

}  // namespace onda::kernels::conv::detail
