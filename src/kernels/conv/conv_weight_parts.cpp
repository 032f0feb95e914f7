// A group-1 Conv or ConvTranspose whose weight exceeds one storage binding runs as convolutions over
// parts of its output channels, each part's weight within a binding: a Conv's rows of W ([C_out, C_in,
// k...]: a view), a ConvTranspose's columns of W ([C_in, C_out, k...]: copied into a fresh tensor per
// part, as they are not contiguous). Each part writes its channels of Y (per batch, where they are
// contiguous) and picks its own path; every output has the same sum as the whole problem.
#include <fmt/format.h>

#include <algorithm>

#include "gpu/gpu_error.h"
#include "kernels/common/binding_window.h"
#include "kernels/conv/conv_step.h"
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

namespace {

class WeightPartsStep final : public ConvStep {
 public:
  explicit WeightPartsStep(const StepInputs& in) : kc_(in.kc), g_(in.g) {
    const int64_t per_channel =
        element_count(g_.weight_shape()) / std::max<int64_t>(g_.out_channels, 1);  // C_in k
    part_ = window_capacity(kc_.gpu, *in.operands.w) / std::max<int64_t>(per_channel, 1);
    if (part_ < 1) {
      throw gpu::DeviceLimitError(
          fmt::format("conv: the weight of one output channel ({} entries) exceeds the storage binding limit "
                      "of {} bytes ({})",
                      per_channel, kc_.gpu.limits().maxStorageBufferBindingSize, g_.describe()));
    }
    // Each part a one-batch problem over its channels, its weight within a binding.
    ConvOperands operands = in.operands;
    operands.w_fits_one_binding = true;
    operands.weight_cache = nullptr;  // the node's cache holds the whole W's forms
    operands.packed.reset();
    operands.diagonal = ConvDiagonal::none;
    const int64_t full = std::min(part_, g_.out_channels), rest = g_.out_channels % part_;
    for (const int64_t channels : {full, g_.out_channels > part_ ? rest : 0}) {
      if (channels == 0) continue;
      ConvGeometry sub = g_;
      sub.batch = 1;
      sub.out_channels = channels;
      parts_.emplace_back(kc_, sub, operands, in.options);
    }
  }

  void record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const ConvTensors& t) const override {
    const Tensor& w = t.weights.w;
    const int64_t taps =
        w.numel() / std::max<int64_t>(g_.out_channels, 1) / std::max<int64_t>(g_.in_channels, 1);
    for (int64_t c0 = 0; c0 < g_.out_channels; c0 += part_) {
      const int64_t c1 = std::min(g_.out_channels, c0 + part_);
      const ConvPlan& plan =
          c1 - c0 == parts_.front().geometry().out_channels ? parts_.front() : parts_.back();
      ConvTensors part;
      part.weights.w = g_.transpose ? weight_columns(recorder, pool, w, c0, c1, taps) : w.slice_outer(c0, c1);
      if (!fits_one_binding(kc_.gpu, part.weights.w))
        throw std::logic_error("conv: a weight part exceeds the binding it was planned for");
      part.bias = t.bias.defined() ? t.bias.slice_outer(c0, c1) : Tensor();
      for (int64_t n = 0; n < g_.batch; ++n) {
        part.x = t.x.slice_outer(n, n + 1);
        part.y = channels_of(t.y, n, c0, c1);
        plan.record(recorder, pool, part);
      }
    }
  }

 private:
  // W[:, c0:c1, :] into [C_in, c1 - c0, k...]: rows of C_in, each (c1 - c0) taps-long runs.
  Tensor weight_columns(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const Tensor& w, int64_t c0,
                        int64_t c1, int64_t taps) const {
    Shape shape = w.shape();
    shape[1] = c1 - c0;
    Tensor w_part = Tensor::empty(pool, w.dtype(), shape);
    IndexMap map;
    map.dims = {{g_.in_channels, (c1 - c0) * taps, 0, 1, g_.in_channels, g_.out_channels * taps},
                {(c1 - c0) * taps, 1, 0, 1, (c1 - c0) * taps, 1}};
    map.in_base = c0 * taps;
    record_index_map(kc_, recorder, w, w_part, map, "conv weight part");
    return w_part;
  }

  KernelContext kc_;
  ConvGeometry g_;
  int64_t part_ = 0;
  std::vector<ConvPlan> parts_;  // a full part's plan, then the last part's when it has fewer channels
};

}  // namespace

std::unique_ptr<ConvStep> plan_weight_parts(const StepInputs& in) {
  return std::make_unique<WeightPartsStep>(in);
}

}  // namespace onda::kernels::conv::detail
