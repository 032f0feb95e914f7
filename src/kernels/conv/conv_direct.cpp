// The direct kernels (conv_direct.wgsl, conv_transpose_direct.wgsl: one invocation per output), on
// tensors that fit one binding, and on larger ones in slices of whole batches, else of whole groups
// of one batch, each a view of X, Y, W and the bias run as its own smaller geometry (the same
// arithmetic per output); one group of one batch over the limit runs in windows of output rows
// (conv_direct_windows.cpp).
#include <fmt/format.h>

#include <algorithm>

#include "gpu/gpu_error.h"
#include "kernels/common/tensor_access.h"
#include "kernels/conv/conv_step.h"

namespace onda::kernels::conv::detail {
namespace {

// A [N, C, ...] tensor's channels [r0, r1) of batch `batch` as a [1, r1 - r0, ...] view.
Tensor channel_rows(const Tensor& t, int64_t batch, int64_t per_batch_rows, int64_t r0, int64_t r1) {
  const int64_t rows = t.shape()[1] * t.shape()[0];  // [N, C, ...] -> rows of channels
  Tensor flat = t.reshape({rows, t.numel() / std::max<int64_t>(rows, 1)});
  Tensor part = flat.slice_outer(batch * per_batch_rows + r0, batch * per_batch_rows + r1);
  Shape shape = t.shape();
  shape[0] = 1;
  shape[1] = r1 - r0;
  return part.reshape(shape);
}

class DirectStep final : public ConvStep {
 public:
  DirectStep(const StepInputs& in, bool slice)
      : kc_(in.kc), g_(in.g), options_(in.options), limits_(in.limits), empty_input_(empty_input(in.g)) {
    const ConvOperands& o = in.operands;
    // An empty input binds a placeholder (f32) for X and W: no input channel is read.
    const DType x = empty_input_ ? DType::f32 : o.x, w = empty_input_ ? DType::f32 : o.w.value_or(DType::f32);
    TemplateValues v = {{"X_ACCESS", tensor_access("x", 0, x, false)},
                        {"W_ACCESS", tensor_access("w", 1, w, false)},
                        {"HAS_BIAS", o.bias ? "1" : "0"}};
    add_activation(v, options_.activation);
    int b = 2;
    v["BIAS_ACCESS"] = o.bias ? tensor_access("bias", b++, *o.bias, false) : "";
    v["Y_ACCESS"] = tensor_access("y", b++, o.y, true);
    v["PARAMS_BINDING"] = std::to_string(b);
    pipeline_ = &shader_pipeline(
        kc_.pipelines, g_.transpose ? "conv/conv_transpose_direct.wgsl" : "conv/conv_direct.wgsl", v, name());
    if (slice) plan_slices(o);
  }

  void record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const ConvTensors& t) const override {
    const Tensor& w = t.weights.w;
    switch (cut_) {
      case Cut::whole:
        return record_whole(recorder, pool, g_, t.x, w, t.bias, t.y);
      case Cut::batches:
        for (int64_t n0 = 0; n0 < g_.batch; n0 += batches_) {
          ConvGeometry part = g_;
          part.batch = std::min(batches_, g_.batch - n0);
          record_whole(recorder, pool, part, t.x.slice_outer(n0, n0 + part.batch), w, t.bias,
                       t.y.slice_outer(n0, n0 + part.batch));
        }
        return;
      case Cut::groups:
        return record_groups(recorder, pool, t);
    }
  }

 private:
  enum class Cut { whole, batches, groups };

  static bool empty_input(const ConvGeometry& g) { return g.batch * g.in_channels * g.in_positions() == 0; }
  const char* name() const { return g_.transpose ? "conv transpose direct" : "conv direct"; }

  // Whole batches where X, Y and W do not all fit, else groups of one batch (windows of output rows
  // where one group of one batch is itself over the limit).
  void plan_slices(const ConvOperands& o) {
    const ConvGeometry& g = g_;
    const uint64_t room = limits_.binding - std::min(limits_.binding, limits_.slack);
    const auto x_size = static_cast<uint64_t>(device_element_size(o.x));
    const auto y_size = static_cast<uint64_t>(device_element_size(o.y));
    const auto w_size = static_cast<uint64_t>(device_element_size(o.w.value_or(DType::f32)));
    const int64_t x_batch = g.in_channels * g.in_positions(), y_batch = g.out_channels * g.out_positions();
    const int64_t w_numel = o.w ? element_count(g.weight_shape()) : 0;
    const auto fits = [&](int64_t numel, uint64_t size) { return numel == 0 || numel * size <= room; };
    if (fits(g.batch * x_batch, x_size) && fits(g.batch * y_batch, y_size) && fits(w_numel, w_size)) return;
    const int64_t nb = std::min<int64_t>(
        g.batch, static_cast<int64_t>(room / std::max<uint64_t>({x_batch * x_size, y_batch * y_size, 1})));
    const bool f16_odd = (o.x == DType::f16 && x_batch % 2 != 0) || (o.y == DType::f16 && y_batch % 2 != 0);
    if (nb >= 1 && fits(w_numel, w_size) && !(f16_odd && nb < g.batch)) {
      cut_ = Cut::batches;
      batches_ = nb;
      return;
    }
    // Groups of one batch: channels [k * per_group, (k + count) * per_group) of X and Y, the weight
    // rows of those groups (Conv: output channels; ConvTranspose: input channels), their biases.
    const Shape ws = g.weight_shape();
    const int64_t w_rows = ws[0] / g.group;
    const uint64_t group_bytes =
        std::max<uint64_t>({g.in_channels / g.group * g.in_positions() * x_size,
                            g.out_channels / g.group * g.out_positions() * y_size,
                            w_rows * (w_numel / std::max<int64_t>(ws[0], 1)) * w_size, 1});
    cut_ = Cut::groups;
    group_windows_ = group_bytes > room;
    groups_ = std::max<int64_t>(1, std::min<int64_t>(g.group, static_cast<int64_t>(room / group_bytes)));
  }

  // Bindings x, w, [bias], y, params.
  void record_whole(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const ConvGeometry& g,
                    const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) const {
    ConvUniforms u = make_uniforms(g);
    u.activation_alpha = options_.activation_alpha;
    const Tensor xb = empty_input_ ? placeholder(pool) : x;
    const Tensor wb = empty_input_ ? placeholder(pool) : w;
    if (empty_input_) u.in_size[3] = 0, u.kernel[3] = 1;  // no input channel is read
    std::vector<gpu::BufferBinding> bindings = {xb.binding(kc_.gpu), wb.binding(kc_.gpu)};
    if (bias.defined()) bindings.push_back(bias.binding(kc_.gpu));
    bindings.push_back(y.binding(kc_.gpu));
    u.offsets[0] = empty_input_ ? 0 : x.element_offset(kc_.gpu);
    u.offsets[1] = empty_input_ ? 0 : w.element_offset(kc_.gpu);
    u.offsets[2] = bias.defined() ? bias.element_offset(kc_.gpu) : 0;
    u.offsets[3] = y.element_offset(kc_.gpu);
    dispatch(kc_, recorder, *pipeline_, bindings, u, y.numel(), name());
  }

  void record_groups(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const ConvTensors& t) const {
    const ConvGeometry& g = g_;
    const int64_t in_per_group = g.in_channels / g.group, out_per_group = g.out_channels / g.group;
    const int64_t w_rows = t.weights.w.shape()[0] / g.group;
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t g0 = 0; g0 < g.group; g0 += groups_) {
        const int64_t count = std::min(groups_, g.group - g0);
        ConvGeometry part = g;
        part.batch = 1;
        part.group = count;
        part.in_channels = count * in_per_group;
        part.out_channels = count * out_per_group;
        const Tensor xs = channel_rows(t.x, n, g.in_channels, g0 * in_per_group, (g0 + count) * in_per_group);
        const Tensor ys =
            channel_rows(t.y, n, g.out_channels, g0 * out_per_group, (g0 + count) * out_per_group);
        const Tensor ws = t.weights.w.slice_outer(g0 * w_rows, (g0 + count) * w_rows);
        const Tensor bs = t.bias.defined()
                              ? t.bias.slice_outer(g0 * out_per_group, (g0 + count) * out_per_group)
                              : Tensor();
        if (group_windows_) {
          record_direct_windows(kc_, recorder, pool, part, xs, ws, bs, ys, options_, limits_);
        } else {
          record_whole(recorder, pool, part, xs, ws, bs, ys);
        }
      }
    }
  }

  KernelContext kc_;
  ConvGeometry g_;
  ConvOptions options_;
  ChunkLimits limits_;
  bool empty_input_;
  const wgpu::ComputePipeline* pipeline_ = nullptr;
  Cut cut_ = Cut::whole;
  int64_t batches_ = 0, groups_ = 0;
  bool group_windows_ = false;
};

}  // namespace

std::unique_ptr<ConvStep> plan_direct(const StepInputs& in, bool slice) {
  return std::make_unique<DirectStep>(in, slice);
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
