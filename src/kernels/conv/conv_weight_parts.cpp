// A group-1 Conv or ConvTranspose whose weight exceeds one storage binding runs as convolutions over
// parts of its output channels, each part's weight within a binding: a Conv's rows of W ([C_out, C_in,
// k...]: a view), a ConvTranspose's columns of W ([C_in, C_out, k...]: copied into a fresh tensor per
// part, as they are not contiguous). Each part writes its channels of Y (per batch, where they are
// contiguous) and picks its own path; every output has the same sum as the whole problem.
#include <fmt/format.h>

#include <algorithm>

#include "gpu/gpu_error.h"
#include "kernels/common/binding_window.h"
#include "kernels/conv/conv_uniforms.h"
#include "kernels/layout/index_map.h"

namespace onda::kernels::conv::detail {
namespace {

// Output channels [c0, c1) of one batch of `t` ([N, C, spatial...]) as a [1, c1 - c0, spatial...] view.
Tensor channels_of(const Tensor& t, int64_t batch, int64_t c0, int64_t c1) {
  const int64_t channels = t.shape()[1];
  const int64_t positions = t.numel() / std::max<int64_t>(t.shape()[0] * channels, 1);
  Shape shape = t.shape();
  shape[0] = 1;
  shape[1] = c1 - c0;
  return t.reshape({t.shape()[0] * channels, positions})
      .slice_outer(batch * channels + c0, batch * channels + c1)
      .reshape(shape);
}

}  // namespace

bool weight_needs_parts(const KernelContext& kc, const ConvGeometry& g, const Tensor& w) {
  return w.defined() && g.group == 1 && w.numel() > 0 && !fits_one_binding(kc.gpu, w);
}

void record_conv_weight_parts(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                              const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& bias,
                              const Tensor& y, const ConvOptions& options) {
  const int64_t per_channel = w.numel() / std::max<int64_t>(g.out_channels, 1);  // C_in k, both layouts
  const int64_t part = window_capacity(kc.gpu, w.dtype()) / std::max<int64_t>(per_channel, 1);
  if (part < 1) {
    throw gpu::DeviceLimitError(
        fmt::format("conv: the weight of one output channel ({} entries) exceeds the storage binding limit "
                    "of {} bytes ({})",
                    per_channel, kc.gpu.limits().maxStorageBufferBindingSize, g.describe()));
  }
  ConvOptions part_options = options;
  part_options.implicit_weight = nullptr;  // the node's cache holds the whole W's packing
  const int64_t taps = per_channel / std::max<int64_t>(g.in_channels, 1);
  for (int64_t c0 = 0; c0 < g.out_channels; c0 += part) {
    const int64_t c1 = std::min(g.out_channels, c0 + part);
    ConvGeometry sub = g;
    sub.batch = 1;
    sub.out_channels = c1 - c0;
    Tensor w_part;
    if (g.transpose) {
      // W[:, c0:c1, :] into [C_in, c1 - c0, k...]: rows of C_in, each (c1 - c0) taps-long runs.
      Shape shape = w.shape();
      shape[1] = c1 - c0;
      w_part = Tensor::empty(pool, w.dtype(), shape);
      IndexMap map;
      map.dims = {{g.in_channels, (c1 - c0) * taps, 0, 1, g.in_channels, g.out_channels * taps},
                  {(c1 - c0) * taps, 1, 0, 1, (c1 - c0) * taps, 1}};
      map.in_base = c0 * taps;
      record_index_map(kc, recorder, w, w_part, map, "conv weight part");
    } else {
      w_part = w.slice_outer(c0, c1);
    }
    const Tensor bias_part = bias.defined() ? bias.slice_outer(c0, c1) : Tensor();
    for (int64_t n = 0; n < g.batch; ++n) {
      const Tensor xn = x.slice_outer(n, n + 1), yn = channels_of(y, n, c0, c1);
      if (g.transpose) {
        ConvTransposeWeights weights;
        weights.w = w_part;
        record_conv_transpose(kc, recorder, pool, sub, weights, xn, bias_part, yn, part_options);
      } else {
        record_conv(kc, recorder, pool, sub, xn, w_part, bias_part, yn, part_options);
      }
    }
  }
}

}  // namespace onda::kernels::conv::detail
