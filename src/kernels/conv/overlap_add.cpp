// ConvTranspose with a windowed-identity weight ([C, 1, C], zero off the diagonal): the iSTFT's
// overlap-add as a memory-bound gather (overlap_add_tiled.wgsl for hops >= 32, else overlap_add.wgsl),
// and the GPU check of a weight known only there (windowed_identity_check.wgsl): its diagonal, and a
// flag that makes the kernel compute the dense sum itself if another entry is non-zero.
#include <fmt/format.h>

#include <stdexcept>

#include "kernels/common/binding_window.h"
#include "kernels/common/tensor_access.h"
#include "kernels/conv/conv_step.h"

namespace onda::kernels::conv::detail {

// Extracts the diagonal of a [C, 1, C] weight and raises the flag if it has other non-zero entries.
WindowedIdentityCheck record_identity_check(const KernelContext& kc, gpu::CommandRecorder& recorder,
                                            gpu::BufferPool& pool, const Tensor& w) {
  const int64_t channels = w.shape()[0];
  WindowedIdentityCheck check;
  check.diagonal = Tensor::empty(pool, DType::f32, {channels});
  const uint32_t zero = 0;
  check.flag = Tensor::upload(recorder, pool, DType::f32, {1}, &zero);  // 0 bits: no off-diagonal entry yet
  if (!fits_one_binding(kc.gpu, w)) {
    record_identity_check_windows(kc, recorder, w, check.diagonal, check.flag);
    return check;
  }
  ConvUniforms u{};
  u.kernel[2] = u32(channels, "channels");
  u.offsets[1] = w.element_offset(kc.gpu);
  u.region[2] = u32(w.numel(), "weight entries");
  const auto& pipeline = shader_pipeline(kc.pipelines, "conv/windowed_identity_check.wgsl",
                                         {{"W_ACCESS", tensor_access("w", 0, w.dtype(), false)}},
                                         "conv windowed identity check");
  const gpu::BufferBinding bindings[] = {w.binding(kc.gpu), check.diagonal.binding(kc.gpu),
                                         check.flag.binding(kc.gpu)};
  dispatch(kc, recorder, pipeline, bindings, u, (w.numel() + 15) / 16, "conv windowed identity check");
  return check;
}

namespace {

class OverlapAddStep final : public ConvStep {
 public:
  explicit OverlapAddStep(const StepInputs& in)
      : kc_(in.kc), g_(in.g), options_(in.options), diagonal_(in.operands.diagonal) {
    const ConvOperands& o = in.operands;
    checked_ = diagonal_ == ConvDiagonal::device_checked || diagonal_ == ConvDiagonal::check_on_gpu;
    if (checked_ && !o.w) throw std::invalid_argument("conv: a checked overlap-add needs the weight W");
    windowed_ = checked_ && !o.w_fits_one_binding;  // the dense fallback over windows of W
    if (windowed_) return;
    TemplateValues v = {{"X_ACCESS", tensor_access("x", 0, o.x, false)},
                        {"HAS_BIAS", o.bias ? "1" : "0"},
                        {"CHECKED", checked_ ? "1" : "0"},
                        {"W_ACCESS", checked_ ? tensor_access("w", 3, *o.w, false) : ""}};
    add_activation(v, options_.activation);
    int b = checked_ ? 4 : 2;  // x, diagonal[, flag, w]
    v["BIAS_ACCESS"] = o.bias ? tensor_access("bias", b++, *o.bias, false) : "";
    v["Y_ACCESS"] = tensor_access("y", b++, o.y, true);
    v["PARAMS_BINDING"] = std::to_string(b);
    u_ = make_uniforms(g_);
    u_.activation_alpha = options_.activation_alpha;
    const int64_t s = g_.strides[0], pad = g_.pads_begin[0];
    tiled_ = !options_.per_output_overlap_add && s >= 32 && pad >= 0;
    if (!tiled_) {
      pipeline_ = &shader_pipeline(kc_.pipelines, "conv/overlap_add.wgsl", v, "conv transpose overlap-add");
      return;
    }
    // Tiles of 32 hops x 32 offsets per batch over the hops m = (o + pad) / s that outputs reach.
    const int64_t m_first = pad / s, m_last = (g_.out_size[0] - 1 + pad) / s;
    const int64_t tiles_m = (m_last - m_first + 32) / 32, tiles_j = (s + 31) / 32;
    u_.chunk[2] = u32(tiles_m, "hop tiles");
    u_.chunk[3] = u32(tiles_j, "offset tiles");
    u_.region[0] = u32(m_first, "first hop");
    workgroups_ = static_cast<uint64_t>(u32(g_.batch * tiles_m * tiles_j, "overlap-add workgroups"));
    pipeline_ =
        &shader_pipeline(kc_.pipelines, "conv/overlap_add_tiled.wgsl", v, "conv transpose overlap-add tiled");
  }

  void record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const ConvTensors& t) const override {
    const auto [diag, flag] = diagonal(recorder, pool, t.weights);
    if (diag.shape() != Shape{g_.in_channels} || diag.dtype() != DType::f32) {
      throw std::invalid_argument(fmt::format("conv: the overlap-add diagonal must be f32 [{}], got {} {}",
                                              g_.in_channels, dtype_name(diag.dtype()),
                                              shape_string(diag.shape())));
    }
    if (windowed_) {
      return record_overlap_add_windows(kc_, recorder, pool, g_, t.weights.w, diag, flag, t.x, t.bias, t.y,
                                        options_);
    }
    if (diag.element_offset(kc_.gpu) != 0)
      throw std::invalid_argument("conv: the overlap-add diagonal must not be a view");
    ConvUniforms u = u_;
    std::vector<gpu::BufferBinding> bindings = {t.x.binding(kc_.gpu), diag.binding(kc_.gpu)};
    u.offsets[1] = 0;
    if (checked_) {
      bindings.push_back(flag.binding(kc_.gpu));
      bindings.push_back(t.weights.w.binding(kc_.gpu));
      u.offsets[1] = t.weights.w.element_offset(kc_.gpu);
    }
    if (t.bias.defined()) bindings.push_back(t.bias.binding(kc_.gpu));
    bindings.push_back(t.y.binding(kc_.gpu));
    u.offsets[0] = t.x.element_offset(kc_.gpu);
    u.offsets[2] = t.bias.defined() ? t.bias.element_offset(kc_.gpu) : 0;
    u.offsets[3] = t.y.element_offset(kc_.gpu);
    if (!tiled_)
      return dispatch(kc_, recorder, *pipeline_, bindings, u, t.y.numel(), "conv transpose overlap-add");
    recorder.dispatch(*pipeline_, bindings, &u, sizeof(u),
                      gpu::split_workgroups(workgroups_, kc_.gpu.limits()),
                      "conv transpose overlap-add tiled");
  }

 private:
  // The diagonal (and the check's flag, when checked) from where the operands say it comes.
  std::pair<Tensor, Tensor> diagonal(gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                                     const ConvTransposeWeights& weights) const {
    switch (diagonal_) {
      case ConvDiagonal::device:
      case ConvDiagonal::device_checked:
        return {weights.diagonal_device, weights.identity_flag};
      case ConvDiagonal::host: {
        if (!weights.diagonal || static_cast<int64_t>(weights.diagonal->size()) != g_.in_channels) {
          throw std::invalid_argument(
              "conv: overlap_add needs a 1-D [C, 1, C] weight with its diagonal or check_windowed_identity, "
              "group 1, dilation 1");
        }
        Tensor diag = Tensor::upload(recorder, pool, DType::f32, {g_.in_channels}, weights.diagonal->data());
        return {diag, Tensor()};
      }
      default: {
        const WindowedIdentityCheck check = record_identity_check(kc_, recorder, pool, weights.w);
        return {check.diagonal, check.flag};
      }
    }
  }

  KernelContext kc_;
  ConvGeometry g_;
  ConvOptions options_;
  ConvDiagonal diagonal_;
  bool checked_ = false, windowed_ = false, tiled_ = false;
  ConvUniforms u_{};
  const wgpu::ComputePipeline* pipeline_ = nullptr;
  uint64_t workgroups_ = 0;
};

}  // namespace

std::unique_ptr<ConvStep> plan_overlap_add(const StepInputs& in) {
  return std::make_unique<OverlapAddStep>(in);
}

}  // namespace onda::kernels::conv::detail
