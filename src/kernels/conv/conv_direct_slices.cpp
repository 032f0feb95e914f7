// The direct kernels on tensors larger than one storage binding: slices of whole batches, else of
// whole groups of one batch, each a view of X, Y, W and the bias run as its own smaller geometry
// (the same arithmetic per output).
#include <fmt/format.h>

#include <algorithm>

#include "gpu/gpu_error.h"
#include "kernels/conv/conv_uniforms.h"

namespace onda::kernels::conv::detail {

// One group of one batch that does not fit runs in windows of output rows (record_direct_windows).
void record_direct_sliced(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                          const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& bias,
                          const Tensor& y, const ConvOptions& options, const ChunkLimits& limits) {
  const uint64_t room = limits.binding - std::min(limits.binding, limits.slack);
  auto fits = [&](const Tensor& t) { return !t.defined() || t.numel() == 0 || t.device_bytes() <= room; };
  if (fits(x) && fits(y) && fits(w)) return record_direct(kc, recorder, pool, g, x, w, bias, y, options);
  const int64_t x_batch = x.numel() / std::max<int64_t>(g.batch, 1),
                y_batch = y.numel() / std::max<int64_t>(g.batch, 1);
  const auto x_size = static_cast<uint64_t>(device_element_size(x.dtype()));
  const auto y_size = static_cast<uint64_t>(device_element_size(y.dtype()));
  const int64_t nb = std::min<int64_t>(
      g.batch, static_cast<int64_t>(room / std::max<uint64_t>({x_batch * x_size, y_batch * y_size, 1})));
  const bool f16_odd =
      (x.dtype() == DType::f16 && x_batch % 2 != 0) || (y.dtype() == DType::f16 && y_batch % 2 != 0);
  if (nb >= 1 && fits(w) && !(f16_odd && nb < g.batch)) {
    for (int64_t n0 = 0; n0 < g.batch; n0 += nb) {
      ConvGeometry part = g;
      part.batch = std::min(nb, g.batch - n0);
      record_direct(kc, recorder, pool, part, x.slice_outer(n0, n0 + part.batch), w, bias,
                    y.slice_outer(n0, n0 + part.batch), options);
    }
    return;
  }
  // Groups of one batch: channels [k * per_group, (k + count) * per_group) of X and Y, the weight
  // rows of those groups (Conv: output channels; ConvTranspose: input channels), their biases.
  const int64_t in_per_group = g.in_channels / g.group, out_per_group = g.out_channels / g.group;
  const int64_t w_rows = w.shape()[0] / g.group;
  const uint64_t group_bytes = std::max<uint64_t>(
      {in_per_group * g.in_positions() * x_size, out_per_group * g.out_positions() * y_size,
       w_rows * (w.numel() / std::max<int64_t>(w.shape()[0], 1)) * device_element_size(w.dtype()), 1});
  // One group of one batch over the limit: windows of its output rows (conv_direct_windows.cpp).
  const bool group_too_large = group_bytes > room;
  const int64_t gc = std::max<int64_t>(1, std::min<int64_t>(g.group, static_cast<int64_t>(room / group_bytes)));
  auto view = [](const Tensor& t, int64_t batch, int64_t per_batch_rows, int64_t r0, int64_t r1) {
    const int64_t rows = t.shape()[1] * t.shape()[0];  // [N, C, ...] -> rows of channels
    Tensor flat = t.reshape({rows, t.numel() / std::max<int64_t>(rows, 1)});
    Tensor part = flat.slice_outer(batch * per_batch_rows + r0, batch * per_batch_rows + r1);
    Shape shape = t.shape();
    shape[0] = 1;
    shape[1] = r1 - r0;
    return part.reshape(shape);
  };
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t g0 = 0; g0 < g.group; g0 += gc) {
      const int64_t count = std::min(gc, g.group - g0);
      ConvGeometry part = g;
      part.batch = 1;
      part.group = count;
      part.in_channels = count * in_per_group;
      part.out_channels = count * out_per_group;
      const Tensor xs = view(x, n, g.in_channels, g0 * in_per_group, (g0 + count) * in_per_group);
      const Tensor ys = view(y, n, g.out_channels, g0 * out_per_group, (g0 + count) * out_per_group);
      const Tensor ws = w.slice_outer(g0 * w_rows, (g0 + count) * w_rows);
      const Tensor bs =
          bias.defined() ? bias.slice_outer(g0 * out_per_group, (g0 + count) * out_per_group) : Tensor();
      if (group_too_large) {
        record_direct_windows(kc, recorder, pool, part, xs, ws, bs, ys, options, limits);
      } else {
        record_direct(kc, recorder, pool, part, xs, ws, bs, ys, options);
      }
    }
  }
}

// Whether the direct path can run `g` within the binding limit: its X, Y and W fit, or slices of
// whole batches or of whole groups of one batch do.
bool direct_fits(const ConvGeometry& g, DType x_dtype, DType y_dtype, const ChunkLimits& limits) {
  const uint64_t room = limits.binding - std::min(limits.binding, limits.slack);
  const uint64_t x_group =
      static_cast<uint64_t>(g.in_channels / g.group * g.in_positions()) * device_element_size(x_dtype);
  const uint64_t y_group =
      static_cast<uint64_t>(g.out_channels / g.group * g.out_positions()) * device_element_size(y_dtype);
  return std::max(x_group, y_group) <= room;
}

}  // namespace onda::kernels::conv::detail
