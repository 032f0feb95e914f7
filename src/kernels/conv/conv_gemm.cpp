// Conv on the GEMM core (group 1): im2col into a column buffer col[n, C_in * taps, P] (f32), then
// y[n] = W[C_out, C_in * taps] col[n] + bias (the GEMM epilogue adds the bias as an [C_out, 1]
// addend). The column buffer is processed in chunks of at most `limits.columns` bytes: whole
// batches written straight into y, or, when one batch's columns are too large, ranges of output
// positions through a temporary [C_out, positions] that a scatter copies into y. X and Y larger
// than one binding are bound in windows (views at aligned offsets): a position chunk's im2col runs
// once per window of input channels (each window holding the band of input rows the chunk reads,
// whole channels in between), its scatter once per window of output channels; the arithmetic is
// that of the unwindowed run. A pointwise conv (1x1, stride 1, no padding) skips im2col: x itself
// is the GEMM's B.
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

struct ConvGemmSizes {
  int64_t k, positions, batch_bytes;
};

ConvGemmSizes sizes(const ConvGeometry& g) {
  const int64_t k = g.in_channels * g.kernel_elements();
  return {k, g.out_positions(), k * g.out_positions() * 4};
}

int64_t element_bytes(DType dtype) {
  return static_cast<int64_t>(device_element_size(dtype));
}

// Batches per chunk written straight into y: 0 when a batch's columns, X or Y do not fit, or when
// a float16 X or Y could not be viewed at an odd batch offset.
int64_t batches_per_chunk(const ConvGeometry& g, DType x_dtype, DType y_dtype, const ChunkLimits& limits) {
  const ConvGemmSizes s = sizes(g);
  const int64_t y_batch = g.out_channels * s.positions, x_batch = g.in_channels * g.in_positions();
  const int64_t views = static_cast<int64_t>(limits.binding - std::min(limits.binding, limits.slack));
  int64_t nb =
      std::min<int64_t>(g.batch, static_cast<int64_t>(limits.columns) / std::max<int64_t>(s.batch_bytes, 1));
  nb = std::min(nb, views / std::max<int64_t>(y_batch * element_bytes(y_dtype), 1));
  nb = std::min(nb, views / std::max<int64_t>(x_batch * element_bytes(x_dtype), 1));
  if (nb < g.batch &&
      ((y_dtype == DType::f16 && y_batch % 2 != 0) || (x_dtype == DType::f16 && x_batch % 2 != 0)))
    return 0;
  return nb;
}

// Output positions per chunk of the position-chunked path as the column buffer and the temporary
// allow (X and Y windows may lower it: plan_positions).
int64_t positions_per_chunk(const ConvGeometry& g, uint64_t limit) {
  const int64_t rows = std::max(sizes(g).k, g.out_channels);
  return std::min<int64_t>(g.out_positions(), static_cast<int64_t>(limit) / (rows * 4));
}

// The flat input positions [begin, end) that the output positions [p0, p1) read: whole rows of the
// outermost spatial dimension, from the first row the first output reaches to the last row the last
// output reaches (a superset; rows entirely in the padding are clamped away).
struct Band {
  int64_t begin, end;
};
Band input_band(const ConvGeometry& g, int64_t p0, int64_t p1) {
  int64_t inner_out = 1, inner_in = 1;
  for (int64_t d = 1; d < g.spatial_rank(); ++d) inner_out *= g.out_size[d], inner_in *= g.in_size[d];
  const int64_t first = p0 / inner_out, last = (p1 - 1) / inner_out;
  const int64_t lo = std::clamp<int64_t>(first * g.strides[0] - g.pads_begin[0], 0, g.in_size[0]);
  const int64_t hi = std::clamp<int64_t>(
      last * g.strides[0] - g.pads_begin[0] + (g.kernel[0] - 1) * g.dilations[0] + 1, lo, g.in_size[0]);
  return {lo * inner_in, hi * inner_in};
}

// Positions per chunk such that every chunk's input band fits one X window and its positions one
// Y window (when X / Y do not fit whole); 0 when not even one position fits.
int64_t plan_positions(const ConvGeometry& g, int64_t pc, bool x_windowed, int64_t x_elements,
                       bool y_windowed, int64_t y_elements) {
  const int64_t positions = g.out_positions();
  if (y_windowed) pc = std::min(pc, y_elements);
  while (pc > 0 && x_windowed) {
    int64_t widest = 0;
    for (int64_t p0 = 0; p0 < positions; p0 += pc) {
      const Band b = input_band(g, p0, std::min(positions, p0 + pc));
      widest = std::max(widest, b.end - b.begin);
    }
    if (widest <= x_elements) break;
    pc = pc == 1 ? 0 : (pc + 1) / 2;
  }
  return pc;
}

// A 1x1 kernel with stride 1 and no padding reads x as it is: y[n] = W[C_out, C_in] x[n][C_in, P].
bool pointwise(const ConvGeometry& g) {
  for (int64_t d = 0; d < g.spatial_rank(); ++d) {
    if (g.kernel[d] != 1 || g.strides[d] != 1 || g.pads_begin[d] != 0 || g.pads_end[d] != 0) return false;
  }
  return true;
}

}  // namespace

bool conv_gemm_fits(const ConvGeometry& g, DType x_dtype, DType y_dtype, const ChunkLimits& limits) {
  if (batches_per_chunk(g, x_dtype, y_dtype, limits) > 0) return true;
  const int64_t x_numel = g.batch * g.in_channels * g.in_positions();
  const int64_t y_numel = g.batch * g.out_channels * g.out_positions();
  const bool x_windowed = x_numel * element_bytes(x_dtype) + static_cast<int64_t>(limits.slack) >
                          static_cast<int64_t>(limits.binding);
  const bool y_windowed = y_numel * element_bytes(y_dtype) + static_cast<int64_t>(limits.slack) >
                          static_cast<int64_t>(limits.binding);
  return plan_positions(g, positions_per_chunk(g, limits.columns), x_windowed,
                        limits.window_elements(x_dtype), y_windowed, limits.window_elements(y_dtype)) > 0;
}

namespace {

class ConvGemmStep final : public ConvStep {
 public:
  explicit ConvGemmStep(const StepInputs& in)
      : kc_(in.kc), g_(in.g), limits_(in.limits), s_(sizes(in.g)), u_(make_uniforms(in.g)) {
    const ConvOperands& o = in.operands;
    x_whole_ = fits_whole(g_.batch * g_.in_channels * g_.in_positions(), o.x, limits_);
    y_whole_ = fits_whole(g_.batch * g_.out_channels * s_.positions, o.y, limits_);
    if (pointwise(g_) && x_whole_ && y_whole_) {
      // No column buffer at all: the input already is the GEMM's B.
      gemms_.push_back(plan_gemm(in, {g_.batch, s_.k, s_.positions}, o.x, o.y));
      return;
    }
    nb_ = batches_per_chunk(g_, o.x, o.y, limits_);
    x_elements_ = limits_.window_elements(o.x);
    y_elements_ = limits_.window_elements(o.y);
    pc_ = nb_ > 0 ? s_.positions
                  : plan_positions(g_, positions_per_chunk(g_, limits_.columns), !x_whole_, x_elements_,
                                   !y_whole_, y_elements_);
    if (nb_ <= 0 && pc_ <= 0) {
      throw gpu::DeviceLimitError(
          fmt::format("conv: one column of {} floats, or the input rows one output row reads, exceed the "
                      "chunk limit of {} "
                      "bytes / the binding limit of {} bytes",
                      s_.k, limits_.columns, limits_.binding));
    }
    // The GEMM of a full chunk, then of the last, shorter one (when there is one).
    const int64_t total = nb_ > 0 ? g_.batch : s_.positions, step = nb_ > 0 ? nb_ : pc_;
    for (const int64_t count : {step, total % step}) {
      if (count == 0) continue;
      gemms_.push_back(nb_ > 0 ? plan_gemm(in, {count, s_.k, s_.positions}, DType::f32, o.y)
                               : plan_gemm(in, {s_.k, count}, DType::f32, DType::f32));
    }
    im2col_ = &shader_pipeline(kc_.pipelines, "conv/im2col.wgsl",
                               {{"X_ACCESS", tensor_access("x", 0, o.x, false)}}, "conv im2col");
    if (nb_ <= 0) {
      scatter_ = &shader_pipeline(kc_.pipelines, "conv/scatter_columns.wgsl",
                                  {{"Y_ACCESS", tensor_access("y", 1, o.y, true)}}, "conv scatter columns");
    }
  }

  void record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const ConvTensors& t) const override {
    const Tensor a = t.weights.w.reshape({g_.out_channels, s_.k});
    const Tensor addend = t.bias.defined() ? t.bias.reshape({g_.out_channels, 1}) : Tensor();
    const auto run_gemm = [&](int64_t count, const Tensor& b, const Tensor& out) {
      const bool full = gemms_.size() == 1 || count == (nb_ > 0 ? nb_ : pc_);
      gemms_[full ? 0 : 1].record(recorder, {a, b, nullptr, addend, out, Tensor()});
    };
    if (!im2col_) {
      return run_gemm(0, t.x.reshape({g_.batch, s_.k, s_.positions}),
                      t.y.reshape({g_.batch, g_.out_channels, s_.positions}));
    }
    // One column buffer (and temporary) for all chunks: the dispatches run in order.
    const Tensor col = Tensor::empty(pool, DType::f32, {nb_ > 0 ? nb_ * s_.k * s_.positions : s_.k * pc_});
    if (nb_ > 0) return record_batch_chunks(recorder, col, t, run_gemm);
    const Tensor tmp = Tensor::empty(pool, DType::f32, {g_.out_channels * pc_});
    record_position_chunks(recorder, col, tmp, t, run_gemm);
  }

 private:
  using RunGemm = std::function<void(int64_t count, const Tensor& b, const Tensor& out)>;

  static bool fits_whole(int64_t numel, DType dtype, const ChunkLimits& limits) {
    return static_cast<uint64_t>(numel) * device_element_size(dtype) + limits.slack <= limits.binding;
  }

  // y[chunk] = W[C_out, k] b + bias, b [count, k, P] (whole batches) or [k, count] (positions).
  gemm::Gemm plan_gemm(const StepInputs& in, const Shape& b_shape, DType b_dtype, DType out_dtype) const {
    gemm::GemmProblem p;
    p.a_shape = {g_.out_channels, s_.k};
    p.a_dtype = *in.operands.w;
    p.b_shape = b_shape;
    p.b_dtype = b_dtype;
    if (in.operands.bias) {
      p.addend_shape = Shape{g_.out_channels, 1};
      p.addend_dtype = *in.operands.bias;
    }
    p.out_dtype = out_dtype;
    p.epilogue.activation = in.options.activation;
    p.epilogue.activation_alpha = in.options.activation_alpha;
    gemm::GemmOptions options;
    options.max_binding_bytes = limits_.binding;
    options.tuning = kc_.tuning.gemm;
    return gemm::Gemm(kc_, p, options);
  }

  // Whole batches per chunk, im2col and the GEMM straight into y.
  void record_batch_chunks(gpu::CommandRecorder& recorder, const Tensor& col, const ConvTensors& t,
                           const RunGemm& run_gemm) const {
    ConvUniforms u = u_;
    for (int64_t n0 = 0; n0 < g_.batch; n0 += nb_) {
      const int64_t count = std::min(nb_, g_.batch - n0);
      const Tensor chunk =
          col.slice_outer(0, count * s_.k * s_.positions).reshape({count, s_.k, s_.positions});
      const Tensor xs = count == g_.batch ? t.x : t.x.slice_outer(n0, n0 + count);
      u.chunk[0] = 0;  // batches of the view xs
      u.chunk[1] = u32(count, "batch");
      u.offsets[0] = xs.element_offset(kc_.gpu);
      u.offsets[3] = chunk.element_offset(kc_.gpu);
      const gpu::BufferBinding bindings[] = {xs.binding(kc_.gpu), chunk.binding(kc_.gpu)};
      dispatch(kc_, recorder, *im2col_, bindings, u, chunk.numel(), "conv im2col");
      const Tensor out = (count == g_.batch ? t.y : t.y.slice_outer(n0, n0 + count))
                             .reshape({count, g_.out_channels, s_.positions});
      run_gemm(count, chunk, out);
    }
  }

  // Ranges of output positions of one batch: im2col, the GEMM into a temporary, its scatter into y.
  void record_position_chunks(gpu::CommandRecorder& recorder, const Tensor& col, const Tensor& tmp,
                              const ConvTensors& t, const RunGemm& run_gemm) const {
    ConvUniforms u = u_;
    for (int64_t n = 0; n < g_.batch; ++n) {
      for (int64_t p0 = 0; p0 < s_.positions; p0 += pc_) {
        const int64_t count = std::min(pc_, s_.positions - p0);
        const Tensor chunk = col.slice_outer(0, s_.k * count).reshape({s_.k, count});
        const Tensor out = tmp.slice_outer(0, g_.out_channels * count).reshape({g_.out_channels, count});
        u.chunk[0] = u32(n, "batch");
        u.chunk[1] = 1;
        u.region[0] = u32(p0, "position");
        u.region[1] = u32(p0 + count, "position");
        u.offsets[3] = chunk.element_offset(kc_.gpu);
        record_im2col_windows(recorder, u, t.x, chunk, n, p0, count);
        run_gemm(count, chunk, out);
        record_scatter_windows(recorder, u, out, t.y, n, p0, count);
      }
    }
  }

  // im2col once per window of input channels [c0, c1): the band of rows in the first and last
  // channel, whole channels in between (one window holding all of X when it fits).
  void record_im2col_windows(gpu::CommandRecorder& recorder, ConvUniforms& u, const Tensor& x,
                             const Tensor& chunk, int64_t n, int64_t p0, int64_t count) const {
    const int64_t taps = g_.kernel_elements(), in_positions = g_.in_positions();
    const Band band = input_band(g_, p0, p0 + count);
    const int64_t band_len = band.end - band.begin;
    const int64_t per_window =
        x_whole_
            ? g_.in_channels
            : std::min(g_.in_channels, 1 + (x_elements_ - band_len) / std::max<int64_t>(in_positions, 1));
    for (int64_t c0 = 0; c0 < g_.in_channels; c0 += per_window) {
      const int64_t c1 = std::min(g_.in_channels, c0 + per_window);
      const Window xw = x_whole_ ? Window{x, 0}
                                 : window(kc_, x, (n * g_.in_channels + c0) * in_positions + band.begin,
                                          (n * g_.in_channels + c1 - 1) * in_positions + band.end, limits_);
      u.x_base = u32(xw.base, "X window");
      u.first_row = u32(c0 * taps, "column row");
      u.offsets[0] = xw.view.element_offset(kc_.gpu);
      const gpu::BufferBinding bindings[] = {xw.view.binding(kc_.gpu), chunk.binding(kc_.gpu)};
      dispatch(kc_, recorder, *im2col_, bindings, u, (c1 - c0) * taps * count, "conv im2col");
    }
  }

  // The scatter once per window of output channels [o0, o1) (one when Y fits).
  void record_scatter_windows(gpu::CommandRecorder& recorder, const ConvUniforms& u, const Tensor& out,
                              const Tensor& y, int64_t n, int64_t p0, int64_t count) const {
    const int64_t out_positions = s_.positions;
    const int64_t per_y_window =
        y_whole_ ? g_.out_channels : std::min(g_.out_channels, 1 + (y_elements_ - count) / out_positions);
    for (int64_t o0 = 0; o0 < g_.out_channels; o0 += per_y_window) {
      const int64_t o1 = std::min(g_.out_channels, o0 + per_y_window);
      const Window yw = y_whole_
                            ? Window{y, 0}
                            : window(kc_, y, (n * g_.out_channels + o0) * out_positions + p0,
                                     (n * g_.out_channels + o1 - 1) * out_positions + p0 + count, limits_);
      ConvUniforms su = u;
      su.x_base = 0;
      su.first_row = u32(o0, "output channel");
      su.y_base = u32(yw.base, "Y window");
      su.offsets[0] = out.element_offset(kc_.gpu);
      su.offsets[3] = yw.view.element_offset(kc_.gpu);
      const gpu::BufferBinding bindings[] = {out.binding(kc_.gpu), yw.view.binding(kc_.gpu)};
      dispatch(kc_, recorder, *scatter_, bindings, su, (o1 - o0) * count, "conv scatter columns");
    }
  }

  KernelContext kc_;
  ConvGeometry g_;
  ChunkLimits limits_;
  ConvGemmSizes s_;
  ConvUniforms u_;
  bool x_whole_ = true, y_whole_ = true;
  int64_t nb_ = 0, pc_ = 0, x_elements_ = 0, y_elements_ = 0;
  std::vector<gemm::Gemm> gemms_;                  // a full chunk's, then the last chunk's when shorter
  const wgpu::ComputePipeline* im2col_ = nullptr;  // null: pointwise, no column buffer
  const wgpu::ComputePipeline* scatter_ = nullptr;
};

}  // namespace

std::unique_ptr<ConvStep> plan_conv_gemm(const StepInputs& in) {
  return std::make_unique<ConvGemmStep>(in);
}

}  // namespace onda::kernels::conv::detail
