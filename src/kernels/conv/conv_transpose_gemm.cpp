// ConvTranspose on the GEMM core (group 1), after the col2im formulation of transposed convolution
// (e.g. Caffe's deconvolution layer): col[n, i, co * taps + k] = sum_ci X[n, ci, i] W[ci, co * taps + k]
// is one GEMM X[n]^T [P_in, C_in] x W[C_in, C_out * taps] (W optionally prepacked), then col2im.wgsl
// gathers for every output the taps whose source lies in the chunk (each output written once per
// chunk, no atomics), adding the bias once. The column buffer is processed in chunks of at most
// `limits.columns` bytes: whole batches, or slabs of input rows (whole outermost spatial rows) of
// one batch, each gathering only into the output rows those input rows reach. X and Y larger than
// one binding are bound in windows: a slab's rows are gathered once per window of input channels,
// col2im (and the in-place activation) runs once per window of output channels (elements).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "gpu/gpu_error.h"
#include "kernels/common/tensor_access.h"
#include "kernels/conv/conv_step.h"
#include "kernels/gemm/gemm.h"
#include "kernels/shader_template.h"

namespace onda::kernels::conv::detail {
namespace {

int64_t columns(const ConvGeometry& g) {
  return g.out_channels * g.kernel_elements();
}

int64_t batches_per_chunk(const ConvGeometry& g, DType x_dtype, DType y_dtype, const ChunkLimits& limits) {
  // The column chunk and the X and Y views the GEMM and col2im bind all stay under the limits.
  const int64_t x_batch = g.in_positions() * g.in_channels, y_batch = g.out_positions() * g.out_channels;
  const int64_t views = static_cast<int64_t>(limits.binding - std::min(limits.binding, limits.slack));
  int64_t nb = std::min<int64_t>(g.batch, static_cast<int64_t>(limits.columns) /
                                              std::max<int64_t>(g.in_positions() * columns(g) * 4, 1));
  nb = std::min(nb,
                views / std::max<int64_t>(x_batch * static_cast<int64_t>(device_element_size(x_dtype)), 1));
  nb = std::min(nb,
                views / std::max<int64_t>(y_batch * static_cast<int64_t>(device_element_size(y_dtype)), 1));
  // A float16 X or Y cannot be viewed at an odd batch offset.
  if (nb < g.batch &&
      ((x_dtype == DType::f16 && x_batch % 2 != 0) || (y_dtype == DType::f16 && y_batch % 2 != 0)))
    return 0;
  return nb;
}

// Input positions of one outermost spatial row (chunks hold whole rows).
int64_t inner_positions(const ConvGeometry& g) {
  return g.in_positions() / std::max<int64_t>(g.in_size[0], 1);
}

// Whole outermost input rows per chunk: the column chunk and the slab fit the column limit, and the
// rows of one input channel an X window (when X is windowed); 0 when not one row fits, or when a
// windowed Y cannot hold one whole output channel (the first chunk of a batch writes all positions).
int64_t rows_per_chunk(const ConvGeometry& g, DType x_dtype, DType y_dtype, const ChunkLimits& limits) {
  const int64_t width = std::max(columns(g), g.in_channels) * 4;
  const int64_t inner = inner_positions(g);
  int64_t rows = std::min(g.in_positions(), static_cast<int64_t>(limits.columns) / width / inner * inner);
  const int64_t room = static_cast<int64_t>(limits.binding) - static_cast<int64_t>(limits.slack);
  if (g.batch * g.in_channels * g.in_positions() * static_cast<int64_t>(device_element_size(x_dtype)) > room)
    rows = std::min(rows, limits.window_elements(x_dtype) / inner * inner);
  if (g.batch * g.out_channels * g.out_positions() * static_cast<int64_t>(device_element_size(y_dtype)) >
          room &&
      g.out_positions() > limits.window_elements(y_dtype))
    return 0;
  return rows;
}

}  // namespace

bool conv_transpose_gemm_fits(const ConvGeometry& g, DType x_dtype, DType y_dtype,
                              const ChunkLimits& limits) {
  return batches_per_chunk(g, x_dtype, y_dtype, limits) > 0 ||
         rows_per_chunk(g, x_dtype, y_dtype, limits) > 0;
}

namespace {

// With a constant weight (a cache) the step prepacks it for the GEMM once, where the ONNX op always
// has: the weight is on the gemm path by choose_conv_path and not one automatic_takes_implicit sends
// to the implicit GEMM (where that does not apply after all, the GEMM runs on the plain weight).
bool prepacks(const StepInputs& in) {
  return in.operands.weight_cache && !in.operands.packed && choose_conv_path(in.g, false) == ConvPath::gemm &&
         !automatic_takes_implicit(in.g);
}

class ConvTransposeGemmStep final : public ConvStep {
 public:
  explicit ConvTransposeGemmStep(const StepInputs& in)
      : kc_(in.kc),
        g_(in.g),
        options_(in.options),
        limits_(in.limits),
        ck_(columns(in.g)),
        p_in_(in.g.in_positions()),
        prepack_(prepacks(in)),
        cache_(in.operands.weight_cache) {
    const ConvOperands& o = in.operands;
    nb_ = batches_per_chunk(g_, o.x, o.y, limits_);
    rc_ = nb_ > 0 ? p_in_ : rows_per_chunk(g_, o.x, o.y, limits_);
    if (nb_ <= 0 && rc_ <= 0) {
      throw gpu::DeviceLimitError(fmt::format(
          "conv: one input row of the ConvTranspose column buffer exceeds {} bytes, or one input row of X or "
          "one output channel of Y the binding limit of {} bytes",
          limits_.columns, limits_.binding));
    }
    x_whole_ = element_count(in_shape()) * device_element_size(o.x) + limits_.slack <= limits_.binding;
    y_whole_ = element_count(g_.output_shape()) * device_element_size(o.y) + limits_.slack <= limits_.binding;
    x_elements_ = limits_.window_elements(o.x);
    y_elements_ = limits_.window_elements(o.y);
    plan_gemms(in);
    plan_pipelines(in);
  }

  void record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const ConvTensors& t) const override {
    const gemm::PackedB* packed = packed_weight(recorder, t.weights);
    if (packed && (packed->k != g_.in_channels || packed->n != ck_)) {
      throw std::invalid_argument(fmt::format("conv: packed weight is {}x{}, expected {}x{}", packed->k,
                                              packed->n, g_.in_channels, ck_));
    }
    const Tensor col = Tensor::empty(pool, DType::f32, {nb_ > 0 ? nb_ * p_in_ * ck_ : rc_ * ck_});
    const Tensor b = packed ? Tensor() : t.weights.w.reshape({g_.in_channels, ck_});
    const auto run_gemm = [&](int64_t count, const Tensor& a, const Tensor& out) {
      gemms_[gemms_.size() == 1 || count == (nb_ > 0 ? nb_ : rc_) ? 0 : 1].record(
          recorder, {a, b, packed, Tensor(), out, Tensor()});
    };
    if (nb_ > 0) return record_batch_chunks(recorder, col, t, run_gemm);
    const Tensor slab = Tensor::empty(pool, DType::f32, {g_.in_channels * rc_});
    for (int64_t n = 0; n < g_.batch; ++n) {
      record_row_chunks(recorder, col, slab, t, n, run_gemm);
      if (options_.activation != gemm::Activation::none) record_activation(recorder, t.y, n);
    }
  }

 private:
  using RunGemm = std::function<void(int64_t count, const Tensor& a, const Tensor& out)>;

  Shape in_shape() const {
    Shape s = {g_.batch, g_.in_channels};
    s.insert(s.end(), g_.in_size.begin(), g_.in_size.end());
    return s;
  }

  // col[chunk] = X[chunk]^T W: a full chunk's GEMM, then the last, shorter chunk's (when there is one).
  void plan_gemms(const StepInputs& in) {
    const int64_t total = nb_ > 0 ? g_.batch : p_in_, step = nb_ > 0 ? nb_ : rc_;
    for (const int64_t count : {step, total % step}) {
      if (count == 0) continue;
      gemm::GemmProblem p;
      p.a_shape = nb_ > 0 ? Shape{count, g_.in_channels, p_in_} : Shape{g_.in_channels, count};
      p.a_dtype = nb_ > 0 ? in.operands.x : DType::f32;
      p.transpose_a = true;
      p.b_shape = {g_.in_channels, ck_};
      p.b_dtype = in.operands.packed.value_or(in.operands.w.value_or(DType::f32));
      p.b_prepacked = in.operands.packed || prepack_;  // then GemmProblem::with_packed_b's problem
      p.out_dtype = DType::f32;
      gemm::GemmOptions options;
      options.max_binding_bytes = limits_.binding;
      options.tuning = kc_.tuning.gemm;
      gemms_.emplace_back(kc_, p, options);
    }
  }

  // col2im for each (accumulate, activate) the chunks use, gather_rows and the in-place activation.
  void plan_pipelines(const StepInputs& in) {
    const ConvOperands& o = in.operands;
    const bool activation = options_.activation != gemm::Activation::none;
    for (int accumulate = 0; accumulate < 2; ++accumulate) {
      for (int activate = 0; activate < 2; ++activate) {
        const bool used = nb_ > 0 ? !accumulate && activate == activation : !activate;
        if (!used) continue;
        // An accumulating chunk adds to y (which holds the bias already): no bias binding.
        const bool with_bias = o.bias && !accumulate;
        TemplateValues v = {{"HAS_BIAS", with_bias ? "1" : "0"},
                            {"ACCUMULATE", accumulate ? "1" : "0"},
                            {"ACTIVATE", activate ? "1" : "0"}};
        add_activation(v, options_.activation);
        int b = 1;
        v["BIAS_ACCESS"] = with_bias ? tensor_access("bias", b++, *o.bias, false) : "";
        v["Y_ACCESS"] = tensor_access("y", b++, o.y, true);
        v["PARAMS_BINDING"] = std::to_string(b);
        col2im_[accumulate][activate] =
            &shader_pipeline(kc_.pipelines, "conv/col2im.wgsl", v, "conv transpose col2im");
      }
    }
    u_ = make_uniforms(g_);
    u_.region[2] = u32(ck_, "columns");
    u_.activation_alpha = options_.activation_alpha;
    if (nb_ > 0) return;
    gather_rows_ =
        &shader_pipeline(kc_.pipelines, "conv/gather_rows.wgsl",
                         {{"X_ACCESS", tensor_access("x", 0, o.x, false)}}, "conv transpose gather rows");
    if (activation) {
      TemplateValues v = {{"Y_ACCESS", tensor_access("y", 0, o.y, true)}};
      add_activation(v, options_.activation);
      activate_ = &shader_pipeline(kc_.pipelines, "conv/activate_in_place.wgsl", v, "conv activate");
    }
  }

  // The caller's PackedB, or the step's own of a constant weight (made on the first run, kept).
  const gemm::PackedB* packed_weight(gpu::CommandRecorder& recorder,
                                     const ConvTransposeWeights& weights) const {
    if (weights.packed) return weights.packed;
    if (!prepack_) return nullptr;
    if (!cache_->gemm_packed)
      cache_->gemm_packed = prepack_conv_transpose_weight(kc_, *cache_->pool, recorder, weights.w);
    return &*cache_->gemm_packed;
  }

  // Whole batches per chunk: the GEMM of all their rows, then col2im (completing the outputs, so it
  // applies the activation).
  void record_batch_chunks(gpu::CommandRecorder& recorder, const Tensor& col, const ConvTensors& t,
                           const RunGemm& run_gemm) const {
    ConvUniforms u = uniforms(t);
    for (int64_t n0 = 0; n0 < g_.batch; n0 += nb_) {
      const int64_t count = std::min(nb_, g_.batch - n0);
      const Tensor a =
          (count == g_.batch ? t.x : t.x.slice_outer(n0, n0 + count)).reshape({count, g_.in_channels, p_in_});
      const Tensor chunk_col = col.slice_outer(0, count * p_in_ * ck_).reshape({count, p_in_, ck_});
      run_gemm(count, a, chunk_col);
      u.chunk[0] = 0;  // batches of the view of y
      u.chunk[1] = u32(count, "batch");
      gather(recorder, u, chunk_col, count == g_.batch ? t.y : t.y.slice_outer(n0, n0 + count), t.bias, false,
             options_.activation != gemm::Activation::none);
    }
  }

  // Slabs of whole outermost input rows of batch n: rows gathered from X, their GEMM, col2im into the
  // output rows they reach (the first slab writes the whole batch: bias + its own taps).
  void record_row_chunks(gpu::CommandRecorder& recorder, const Tensor& col, const Tensor& slab,
                         const ConvTensors& t, int64_t n, const RunGemm& run_gemm) const {
    ConvUniforms u = uniforms(t);
    const int64_t inner_in = inner_positions(g_);
    const int64_t inner_out = g_.out_positions() / std::max<int64_t>(g_.out_size[0], 1);
    const int64_t s0 = g_.strides[0], pad0 = g_.pads_begin[0], reach0 = (g_.kernel[0] - 1) * g_.dilations[0];
    for (int64_t r0 = 0; r0 < p_in_; r0 += rc_) {
      const int64_t r1 = std::min(p_in_, r0 + rc_), count = r1 - r0;
      u.chunk[0] = u32(n, "batch");
      u.chunk[1] = 1;
      u.chunk[2] = u32(r0, "row");
      u.chunk[3] = u32(r1, "row");
      const Tensor a = slab.slice_outer(0, g_.in_channels * count).reshape({g_.in_channels, count});
      record_gather_rows(recorder, u, t.x, a, n, r0, r1);
      const Tensor chunk_col = col.slice_outer(0, count * ck_).reshape({count, ck_});
      run_gemm(count, a, chunk_col);
      if (r0 == 0) {
        u.region[0] = 0;
        u.region[1] = u32(g_.out_positions(), "positions");
        gather(recorder, u, chunk_col, t.y, t.bias, false, false);
        continue;
      }
      // Output rows reached by input rows [r0, r1) / inner along the outermost dimension: o = i s - pad + k
      // d.
      const int64_t lo = std::max<int64_t>(0, (r0 / inner_in) * s0 - pad0);
      const int64_t hi = std::min<int64_t>(g_.out_size[0] - 1, (r1 / inner_in - 1) * s0 - pad0 + reach0);
      if (lo > hi) continue;
      u.region[0] = u32(lo * inner_out, "positions");
      u.region[1] = u32((hi + 1) * inner_out, "positions");
      gather(recorder, u, chunk_col, t.y, t.bias, true, false);
    }
  }

  // Rows [r0, r1) of every input channel into the slab, once per window of input channels [c0, c1)
  // (one when X fits).
  void record_gather_rows(gpu::CommandRecorder& recorder, const ConvUniforms& u, const Tensor& x,
                          const Tensor& a, int64_t n, int64_t r0, int64_t r1) const {
    const int64_t count = r1 - r0;
    const int64_t per_window =
        x_whole_ ? g_.in_channels : std::min(g_.in_channels, 1 + (x_elements_ - count) / p_in_);
    for (int64_t c0 = 0; c0 < g_.in_channels; c0 += per_window) {
      const int64_t c1 = std::min(g_.in_channels, c0 + per_window);
      const Window xw = x_whole_ ? Window{x, 0}
                                 : window(kc_, x, (n * g_.in_channels + c0) * p_in_ + r0,
                                          (n * g_.in_channels + c1 - 1) * p_in_ + r1, limits_);
      ConvUniforms su = u;
      su.first_row = u32(c0, "input channel");
      su.x_base = u32(xw.base, "X window");
      su.offsets[0] = xw.view.element_offset(kc_.gpu);
      su.offsets[3] = a.element_offset(kc_.gpu);
      const gpu::BufferBinding bindings[] = {xw.view.binding(kc_.gpu), a.binding(kc_.gpu)};
      dispatch(kc_, recorder, *gather_rows_, bindings, su, (c1 - c0) * count, "conv transpose gather rows");
    }
  }

  // col2im (bindings col, [bias], y, params) of a chunk into `ys`: y or a view of whole batches of it
  // (u.chunk[0] counts batches from its start). A one-batch gather into a windowed Y runs once per
  // window of output channels.
  void gather(gpu::CommandRecorder& recorder, ConvUniforms& u, const Tensor& chunk_col, const Tensor& ys,
              const Tensor& bias, bool accumulate, bool activate) const {
    u.offsets[0] = chunk_col.element_offset(kc_.gpu);
    const int64_t positions = u.region[1] - u.region[0];
    const bool whole = ys.device_bytes() + limits_.slack <= limits_.binding;
    const int64_t out_positions = g_.out_positions();
    const int64_t per_window =
        whole ? g_.out_channels : std::min(g_.out_channels, 1 + (y_elements_ - positions) / out_positions);
    for (int64_t o0 = 0; o0 < g_.out_channels; o0 += per_window) {
      const int64_t o1 = std::min(g_.out_channels, o0 + per_window);
      const int64_t n = u.chunk[0];
      const Window yw = whole ? Window{ys, 0}
                              : window(kc_, ys, (n * g_.out_channels + o0) * out_positions + u.region[0],
                                       (n * g_.out_channels + o1 - 1) * out_positions + u.region[1], limits_);
      ConvUniforms gu = u;
      gu.first_row = u32(o0, "output channel");
      gu.y_base = u32(yw.base, "Y window");
      gu.offsets[3] = yw.view.element_offset(kc_.gpu);
      std::vector<gpu::BufferBinding> bindings = {chunk_col.binding(kc_.gpu)};
      if (bias.defined() && !accumulate) bindings.push_back(bias.binding(kc_.gpu));
      bindings.push_back(yw.view.binding(kc_.gpu));
      const int64_t invocations =
          whole ? static_cast<int64_t>(u.chunk[1]) * g_.out_channels * positions : (o1 - o0) * positions;
      dispatch(kc_, recorder, *col2im_[accumulate][activate], bindings, gu, invocations,
               "conv transpose col2im");
    }
  }

  // The activation over batch n of y after its row chunks, once per window of its elements (one when
  // Y fits).
  void record_activation(gpu::CommandRecorder& recorder, const Tensor& y, int64_t n) const {
    const int64_t per_batch = g_.out_channels * g_.out_positions();
    const int64_t step = y_whole_ ? per_batch : y_elements_;
    for (int64_t e0 = 0; e0 < per_batch; e0 += step) {
      const int64_t e1 = std::min(per_batch, e0 + step);
      const Window yw =
          y_whole_ ? Window{y, 0} : window(kc_, y, n * per_batch + e0, n * per_batch + e1, limits_);
      ConvUniforms au = u_;
      au.chunk[0] = u32(n, "batch");
      au.first_row = u32(e0, "element");
      au.y_base = u32(yw.base, "Y window");
      au.offsets[3] = yw.view.element_offset(kc_.gpu);
      const gpu::BufferBinding bindings[] = {yw.view.binding(kc_.gpu)};
      dispatch(kc_, recorder, *activate_, bindings, au, e1 - e0, "conv activate");
    }
  }

  // The fixed uniforms with this run's bias and y offsets.
  ConvUniforms uniforms(const ConvTensors& t) const {
    ConvUniforms u = u_;
    u.offsets[2] = t.bias.defined() ? t.bias.element_offset(kc_.gpu) : 0;
    u.offsets[3] = t.y.element_offset(kc_.gpu);
    return u;
  }

  KernelContext kc_;
  ConvGeometry g_;
  ConvOptions options_;
  ChunkLimits limits_;
  int64_t ck_, p_in_;
  bool prepack_;
  ConvWeightCache* cache_;
  int64_t nb_ = 0, rc_ = 0, x_elements_ = 0, y_elements_ = 0;
  bool x_whole_ = true, y_whole_ = true;
  ConvUniforms u_{};
  std::vector<gemm::Gemm> gemms_;                   // a full chunk's, then the last chunk's when shorter
  const wgpu::ComputePipeline* col2im_[2][2] = {};  // [accumulate][activate]
  const wgpu::ComputePipeline* gather_rows_ = nullptr;
  const wgpu::ComputePipeline* activate_ = nullptr;
};

}  // namespace

std::unique_ptr<ConvStep> plan_conv_transpose_gemm(const StepInputs& in) {
  return std::make_unique<ConvTransposeGemmStep>(in);
}

}  // namespace onda::kernels::conv::detail
