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
#include <stdexcept>

#include "gpu/gpu_error.h"
#include "kernels/common/tensor_access.h"
#include "kernels/conv/conv_uniforms.h"
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

bool fits_whole(const Tensor& t, const ChunkLimits& limits) {
  return t.device_bytes() + limits.slack <= limits.binding;
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

void record_conv_gemm(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                      const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& bias,
                      const Tensor& y, const ChunkLimits& limits, const ConvOptions& options) {
  const ConvGemmSizes s = sizes(g);
  const Tensor a = w.reshape({g.out_channels, s.k});
  const Tensor addend = bias.defined() ? bias.reshape({g.out_channels, 1}) : Tensor();
  auto run_gemm = [&](const Tensor& b, const Tensor& out) {
    gemm::GemmProblem p;
    p.a_shape = a.shape();
    p.a_dtype = a.dtype();
    p.b_shape = b.shape();
    p.b_dtype = b.dtype();
    if (addend.defined()) {
      p.addend_shape = addend.shape();
      p.addend_dtype = addend.dtype();
    }
    p.out_dtype = out.dtype();
    p.epilogue.activation = options.activation;
    p.epilogue.activation_alpha = options.activation_alpha;
    gemm::GemmOptions gemm_options;
    gemm_options.max_binding_bytes = limits.binding;
    gemm_options.tuning = kc.tuning.gemm;
    gemm::record_gemm(kc.gpu, kc.pipelines, recorder, p, {a, b, nullptr, addend, out}, gemm_options);
  };
  const bool x_whole = fits_whole(x, limits), y_whole = fits_whole(y, limits);
  if (pointwise(g) && x_whole && y_whole) {
    // No column buffer at all: the input already is the GEMM's B.
    run_gemm(x.reshape({g.batch, s.k, s.positions}), y.reshape({g.batch, g.out_channels, s.positions}));
    return;
  }
  const int64_t nb = batches_per_chunk(g, x.dtype(), y.dtype(), limits);
  const int64_t x_elements = limits.window_elements(x.dtype()),
                y_elements = limits.window_elements(y.dtype());
  const int64_t pc = nb > 0 ? s.positions
                            : plan_positions(g, positions_per_chunk(g, limits.columns), !x_whole, x_elements,
                                             !y_whole, y_elements);
  if (nb <= 0 && pc <= 0) {
    throw gpu::DeviceLimitError(fmt::format(
        "conv: one column of {} floats, or the input rows one output row reads, exceed the chunk limit of {} "
        "bytes / the binding limit of {} bytes",
        s.k, limits.columns, limits.binding));
  }
  // One column buffer (and temporary) for all chunks: the dispatches run in order.
  const int64_t col_elems = nb > 0 ? nb * s.k * s.positions : s.k * pc;
  const Tensor col = Tensor::empty(pool, DType::f32, {col_elems});
  Tensor tmp;
  if (nb <= 0) {
    tmp = Tensor::empty(pool, DType::f32, {g.out_channels * pc});
  }
  const auto& im2col =
      shader_pipeline(kc.pipelines, "conv/im2col.wgsl",
                      {{"X_ACCESS", tensor_access("x", 0, x.dtype(), false)}}, "conv im2col");
  ConvUniforms u = make_uniforms(g);

  if (nb > 0) {
    for (int64_t n0 = 0; n0 < g.batch; n0 += nb) {
      const int64_t count = std::min(nb, g.batch - n0);
      const Tensor chunk = col.slice_outer(0, count * s.k * s.positions).reshape({count, s.k, s.positions});
      const Tensor xs = count == g.batch ? x : x.slice_outer(n0, n0 + count);
      u.chunk[0] = 0;  // batches of the view xs
      u.chunk[1] = u32(count, "batch");
      u.offsets[0] = xs.element_offset(kc.gpu);
      u.offsets[3] = chunk.element_offset(kc.gpu);
      const gpu::BufferBinding bindings[] = {xs.binding(kc.gpu), chunk.binding(kc.gpu)};
      dispatch(kc, recorder, im2col, bindings, u, chunk.numel(), "conv im2col");
      const Tensor out = (count == g.batch ? y : y.slice_outer(n0, n0 + count))
                             .reshape({count, g.out_channels, s.positions});
      run_gemm(chunk, out);
    }
    return;
  }
  const auto& scatter =
      shader_pipeline(kc.pipelines, "conv/scatter_columns.wgsl",
                      {{"Y_ACCESS", tensor_access("y", 1, y.dtype(), true)}}, "conv scatter columns");
  const int64_t taps = g.kernel_elements(), in_positions = g.in_positions();
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t p0 = 0; p0 < s.positions; p0 += pc) {
      const int64_t count = std::min(pc, s.positions - p0);
      const Tensor chunk = col.slice_outer(0, s.k * count).reshape({s.k, count});
      const Tensor out = tmp.slice_outer(0, g.out_channels * count).reshape({g.out_channels, count});
      u.chunk[0] = u32(n, "batch");
      u.chunk[1] = 1;
      u.region[0] = u32(p0, "position");
      u.region[1] = u32(p0 + count, "position");
      u.offsets[3] = chunk.element_offset(kc.gpu);
      // im2col once per window of input channels [c0, c1): the band of rows in the first and last
      // channel, whole channels in between (one window holding all of X when it fits).
      const Band band = input_band(g, p0, p0 + count);
      const int64_t band_len = band.end - band.begin;
      const int64_t per_window =
          x_whole ? g.in_channels
                  : std::min(g.in_channels, 1 + (x_elements - band_len) / std::max<int64_t>(in_positions, 1));
      for (int64_t c0 = 0; c0 < g.in_channels; c0 += per_window) {
        const int64_t c1 = std::min(g.in_channels, c0 + per_window);
        const Window xw = x_whole ? Window{x, 0}
                                  : window(kc, x, (n * g.in_channels + c0) * in_positions + band.begin,
                                           (n * g.in_channels + c1 - 1) * in_positions + band.end, limits);
        u.x_base = u32(xw.base, "X window");
        u.first_row = u32(c0 * taps, "column row");
        u.offsets[0] = xw.view.element_offset(kc.gpu);
        const gpu::BufferBinding im2col_bindings[] = {xw.view.binding(kc.gpu), chunk.binding(kc.gpu)};
        dispatch(kc, recorder, im2col, im2col_bindings, u, (c1 - c0) * taps * count, "conv im2col");
      }
      run_gemm(chunk, out);
      // The scatter once per window of output channels [o0, o1) (one when Y fits).
      const int64_t out_positions = s.positions;
      const int64_t per_y_window =
          y_whole ? g.out_channels : std::min(g.out_channels, 1 + (y_elements - count) / out_positions);
      for (int64_t o0 = 0; o0 < g.out_channels; o0 += per_y_window) {
        const int64_t o1 = std::min(g.out_channels, o0 + per_y_window);
        const Window yw = y_whole
                              ? Window{y, 0}
                              : window(kc, y, (n * g.out_channels + o0) * out_positions + p0,
                                       (n * g.out_channels + o1 - 1) * out_positions + p0 + count, limits);
        ConvUniforms su = u;
        su.x_base = 0;
        su.first_row = u32(o0, "output channel");
        su.y_base = u32(yw.base, "Y window");
        su.offsets[0] = out.element_offset(kc.gpu);
        su.offsets[3] = yw.view.element_offset(kc.gpu);
        const gpu::BufferBinding scatter_bindings[] = {out.binding(kc.gpu), yw.view.binding(kc.gpu)};
        dispatch(kc, recorder, scatter, scatter_bindings, su, (o1 - o0) * count, "conv scatter columns");
      }
    }
  }
}

}  // namespace onda::kernels::conv::detail
