// Conv on the GEMM core (group 1): im2col into a column buffer col[n, C_in * taps, P] (f32), then
// y[n] = W[C_out, C_in * taps] col[n] + bias (the GEMM epilogue adds the bias as an [C_out, 1]
// addend). The column buffer is processed in chunks of at most `limit` bytes: whole batches written
// straight into y, or, when one batch's columns are too large, ranges of output positions through a
// temporary [C_out, positions] that a scatter copies into y. A pointwise conv (1x1, stride 1, no
// padding) skips im2col: x itself is the GEMM's B.
#include <fmt/format.h>

#include <stdexcept>

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

// Batches per chunk written straight into y: 0 when a batch does not fit, or when a float16 y could
// not be viewed at an odd batch offset.
int64_t batches_per_chunk(const ConvGeometry& g, DType y_dtype, uint64_t limit) {
  const ConvGemmSizes s = sizes(g);
  const int64_t out_bytes = g.out_channels * s.positions * static_cast<int64_t>(device_element_size(y_dtype));
  const int64_t per_batch = std::max(s.batch_bytes, out_bytes);
  int64_t nb = std::min<int64_t>(g.batch, static_cast<int64_t>(limit) / std::max<int64_t>(per_batch, 1));
  if (nb < g.batch && y_dtype == DType::f16 && (g.out_channels * s.positions) % 2 != 0) return 0;
  return nb;
}

// Output positions per chunk of the position-chunked path (column and temporary both fit).
int64_t positions_per_chunk(const ConvGeometry& g, uint64_t limit) {
  const int64_t rows = std::max(sizes(g).k, g.out_channels);
  return std::min<int64_t>(g.out_positions(), static_cast<int64_t>(limit) / (rows * 4));
}

// A 1x1 kernel with stride 1 and no padding reads x as it is: y[n] = W[C_out, C_in] x[n][C_in, P].
bool pointwise(const ConvGeometry& g) {
  for (int64_t d = 0; d < g.spatial_rank(); ++d) {
    if (g.kernel[d] != 1 || g.strides[d] != 1 || g.pads_begin[d] != 0 || g.pads_end[d] != 0) return false;
  }
  return true;
}

}  // namespace

bool conv_gemm_fits(const ConvGeometry& g, DType y_dtype, uint64_t limit) {
  return batches_per_chunk(g, y_dtype, limit) > 0 || positions_per_chunk(g, limit) > 0;
}

void record_conv_gemm(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                      const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& bias,
                      const Tensor& y, uint64_t limit, const ConvOptions& options) {
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
    gemm::record_gemm(kc.gpu, kc.pipelines, recorder, p, {a, b, nullptr, addend, out});
  };
  if (pointwise(g) && x.device_bytes() <= limit && y.device_bytes() <= limit) {
    // No column buffer at all: the input already is the GEMM's B.
    run_gemm(x.reshape({g.batch, s.k, s.positions}), y.reshape({g.batch, g.out_channels, s.positions}));
    return;
  }
  const int64_t nb = batches_per_chunk(g, y.dtype(), limit);
  const int64_t pc = nb > 0 ? s.positions : positions_per_chunk(g, limit);
  if (nb <= 0 && pc <= 0) {
    throw std::invalid_argument(
        fmt::format("conv: one column of {} floats exceeds the chunk limit of {} bytes", s.k, limit));
  }
  // One column buffer (and temporary) for all chunks: the dispatches run in order.
  const int64_t col_elems = nb > 0 ? nb * s.k * s.positions : s.k * pc;
  const Tensor col = Tensor::empty(pool, DType::f32, {col_elems});
  recorder.retain(col.storage());
  Tensor tmp;
  if (nb <= 0) {
    tmp = Tensor::empty(pool, DType::f32, {g.out_channels * pc});
    recorder.retain(tmp.storage());
  }
  const auto& im2col = kc.pipelines.get(
      render_shader("conv/im2col.wgsl", {{"X_ACCESS", tensor_access_wgsl("x", 0, x.dtype(), false)}}), {},
      "conv im2col");
  ConvUniforms u = make_uniforms(g);
  u.offsets[0] = x.element_offset(kc.gpu);

  if (nb > 0) {
    for (int64_t n0 = 0; n0 < g.batch; n0 += nb) {
      const int64_t count = std::min(nb, g.batch - n0);
      const Tensor chunk = col.slice_outer(0, count * s.k * s.positions).reshape({count, s.k, s.positions});
      u.chunk[0] = u32(n0, "batch");
      u.chunk[1] = u32(count, "batch");
      u.offsets[3] = chunk.element_offset(kc.gpu);
      const gpu::BufferBinding bindings[] = {x.binding(kc.gpu), chunk.binding(kc.gpu)};
      dispatch(kc, recorder, im2col, bindings, u, chunk.numel(), "conv im2col");
      const Tensor out = (count == g.batch ? y : y.slice_outer(n0, n0 + count))
                             .reshape({count, g.out_channels, s.positions});
      run_gemm(chunk, out);
    }
    return;
  }
  const auto& scatter = kc.pipelines.get(
      render_shader("conv/scatter_columns.wgsl", {{"Y_ACCESS", tensor_access_wgsl("y", 1, y.dtype(), true)}}),
      {}, "conv scatter columns");
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t p0 = 0; p0 < s.positions; p0 += pc) {
      const int64_t count = std::min(pc, s.positions - p0);
      const Tensor chunk = col.slice_outer(0, s.k * count).reshape({s.k, count});
      const Tensor out = tmp.slice_outer(0, g.out_channels * count).reshape({g.out_channels, count});
      u.chunk[0] = u32(n, "batch");
      u.chunk[1] = 1;
      u.region[0] = u32(p0, "position");
      u.region[1] = u32(p0 + count, "position");
      u.offsets[0] = x.element_offset(kc.gpu);
      u.offsets[3] = chunk.element_offset(kc.gpu);
      const gpu::BufferBinding im2col_bindings[] = {x.binding(kc.gpu), chunk.binding(kc.gpu)};
      dispatch(kc, recorder, im2col, im2col_bindings, u, chunk.numel(), "conv im2col");
      run_gemm(chunk, out);
      ConvUniforms su = u;
      su.offsets[0] = out.element_offset(kc.gpu);
      su.offsets[3] = y.element_offset(kc.gpu);
      const gpu::BufferBinding scatter_bindings[] = {out.binding(kc.gpu), y.binding(kc.gpu)};
      dispatch(kc, recorder, scatter, scatter_bindings, su, out.numel(), "conv scatter columns");
    }
  }
}

}  // namespace onda::kernels::conv::detail
