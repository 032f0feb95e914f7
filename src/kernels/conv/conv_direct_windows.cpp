// The direct kernels on one group of one batch that is itself larger than a storage binding (a
// depthwise conv over a long signal, a grouped conv over a large image): windows of output rows
// (the outermost spatial dimension), each dispatch binding the rows of Y it writes and the band of
// X rows they read (conv_direct.cpp hands such groups here). A Conv is first cut into its
// output channels (rows of W), so that a window of Y is one channel's positions. Same arithmetic per
// output as the unwindowed kernel.
#include <fmt/format.h>

#include <algorithm>

#include "gpu/gpu_error.h"
#include "kernels/common/binding_window.h"
#include "kernels/common/tensor_access.h"
#include "kernels/conv/conv_uniforms.h"

namespace onda::kernels::conv::detail {
namespace {

// Rows [row_begin, row_end) of the outermost spatial dimension of every channel of a [1, C, ...]
// tensor with `rows` rows of `row_size` elements: the flat span a window must cover.
struct Span {
  int64_t begin, end;
};
Span channel_rows_span(int64_t channels, int64_t rows, int64_t row_size, int64_t row_begin, int64_t row_end) {
  return {row_begin * row_size, (channels - 1) * rows * row_size + row_end * row_size};
}

}  // namespace

void record_direct_windows(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                           const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& bias,
                           const Tensor& y, const ConvOptions& options, const ChunkLimits& limits) {
  if (!g.transpose && g.out_channels > 1) {
    const int64_t positions = g.out_positions();
    const Shape one_channel = [&] {
      Shape s = y.shape();
      s[1] = 1;
      return s;
    }();
    for (int64_t co = 0; co < g.out_channels; ++co) {
      ConvGeometry channel = g;
      channel.out_channels = 1;
      channel.group = 1;
      const Tensor ys = y.reshape({g.out_channels, positions}).slice_outer(co, co + 1).reshape(one_channel);
      record_direct_windows(kc, recorder, pool, channel, x, w.slice_outer(co, co + 1),
                            bias.defined() ? bias.slice_outer(co, co + 1) : Tensor(), ys, options, limits);
    }
    return;
  }
  const auto refuse = [&](const char* what) {
    return gpu::DeviceLimitError(
        fmt::format("conv: {} exceeds the storage binding limit of {} bytes on the direct path ({})", what,
                    limits.binding, g.describe()));
  };
  if (w.device_bytes() + limits.slack > limits.binding) throw refuse("the weight of one group");
  const int64_t out_rows = g.out_size[0], in_rows = g.in_size[0];
  const int64_t out_row = g.out_positions() / std::max<int64_t>(out_rows, 1);
  const int64_t in_row = g.in_positions() / std::max<int64_t>(in_rows, 1);
  const int64_t s = g.strides[0], d = g.dilations[0], k = g.kernel[0], pad = g.pads_begin[0];
  // The input rows output rows [a, b] read.
  const auto input_rows = [&](int64_t a, int64_t b) -> std::pair<int64_t, int64_t> {
    int64_t first, last;
    if (g.transpose) {  // i = (o + pad - tap d) / s
      const int64_t low = a + pad - (k - 1) * d;
      first = low >= 0 ? low / s : -((-low + s - 1) / s);
      last = (b + pad) >= 0 ? (b + pad) / s : -1;
    } else {  // i = o s + tap d - pad
      first = a * s - pad;
      last = b * s + (k - 1) * d - pad;
    }
    first = std::clamp<int64_t>(first, 0, in_rows - 1);
    last = std::clamp<int64_t>(last, first, in_rows - 1);
    return {first, last};
  };
  const int64_t x_room = limits.window_elements(x.dtype()), y_room = limits.window_elements(y.dtype());
  const auto fits = [&](int64_t a, int64_t b) {
    const auto [first, last] = input_rows(a, b);
    const Span xs = channel_rows_span(g.in_channels, in_rows, in_row, first, last + 1);
    const Span ys = channel_rows_span(g.out_channels, out_rows, out_row, a, b + 1);
    return xs.end - xs.begin <= x_room && ys.end - ys.begin <= y_room;
  };

  TemplateValues v = {{"X_ACCESS", tensor_access("x", 0, x.dtype(), false)},
                      {"W_ACCESS", tensor_access("w", 1, w.dtype(), false)},
                      {"HAS_BIAS", bias.defined() ? "1" : "0"}};
  add_activation(v, options.activation);
  int b = 2;
  v["BIAS_ACCESS"] = bias.defined() ? tensor_access("bias", b++, bias.dtype(), false) : "";
  v["Y_ACCESS"] = tensor_access("y", b++, y.dtype(), true);
  v["PARAMS_BINDING"] = std::to_string(b);
  const char* file = g.transpose ? "conv/conv_transpose_direct.wgsl" : "conv/conv_direct.wgsl";
  const char* name = g.transpose ? "conv transpose direct windowed" : "conv direct windowed";
  const auto& pipeline = shader_pipeline(kc.pipelines, file, v, name);
  ConvUniforms u = make_uniforms(g);
  u.activation_alpha = options.activation_alpha;
  u.offsets[1] = w.element_offset(kc.gpu);
  u.offsets[2] = bias.defined() ? bias.element_offset(kc.gpu) : 0;
  for (int64_t a = 0; a < out_rows;) {
    int64_t rows = out_rows - a;
    while (rows > 1 && !fits(a, a + rows - 1)) rows = (rows + 1) / 2;
    if (!fits(a, a + rows - 1)) throw refuse("one output row of one channel (or the input rows it reads)");
    const auto [first, last] = input_rows(a, a + rows - 1);
    const Span xs = channel_rows_span(g.in_channels, in_rows, in_row, first, last + 1);
    const Span ys = channel_rows_span(g.out_channels, out_rows, out_row, a, a + rows);
    const ElementWindow xw = element_window(kc.gpu, x, xs.begin, xs.end);
    const ElementWindow yw = element_window(kc.gpu, y, ys.begin, ys.end);
    // The windows' offsets wrap as u32: the kernel's index sums wrap back into the window.
    u.offsets[0] = static_cast<uint32_t>(xw.offset);
    u.offsets[3] = static_cast<uint32_t>(yw.offset);
    u.region[0] = u32(a * out_row, "first position");
    u.region[1] = u32((a + rows) * out_row, "position end");
    std::vector<gpu::BufferBinding> bindings = {xw.binding, w.binding(kc.gpu)};
    if (bias.defined()) bindings.push_back(bias.binding(kc.gpu));
    bindings.push_back(yw.binding);
    dispatch(kc, recorder, pipeline, bindings, u, rows * out_row * g.out_channels, name);
    a += rows;
  }
  (void)pool;
}

}  // namespace onda::kernels::conv::detail
