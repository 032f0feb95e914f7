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
#include <stdexcept>

#include "gpu/gpu_error.h"
#include "kernels/common/tensor_access.h"
#include "kernels/conv/conv_uniforms.h"
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

void record_conv_transpose_gemm(const KernelContext& kc, gpu::CommandRecorder& recorder,
                                gpu::BufferPool& pool, const ConvGeometry& g, const Tensor& w,
                                const gemm::PackedB* packed, const Tensor& x, const Tensor& bias,
                                const Tensor& y, const ChunkLimits& limits, const ConvOptions& options) {
  const int64_t ck = columns(g), p_in = g.in_positions();
  if (packed && (packed->k != g.in_channels || packed->n != ck)) {
    throw std::invalid_argument(
        fmt::format("conv: packed weight is {}x{}, expected {}x{}", packed->k, packed->n, g.in_channels, ck));
  }
  const int64_t nb = batches_per_chunk(g, x.dtype(), y.dtype(), limits);
  const int64_t rc = nb > 0 ? p_in : rows_per_chunk(g, x.dtype(), y.dtype(), limits);
  if (nb <= 0 && rc <= 0) {
    throw gpu::DeviceLimitError(fmt::format(
        "conv: one input row of the ConvTranspose column buffer exceeds {} bytes, or one input row of X or "
        "one output channel of Y the binding limit of {} bytes",
        limits.columns, limits.binding));
  }
  const bool x_whole = x.device_bytes() + limits.slack <= limits.binding;
  const bool y_whole = y.device_bytes() + limits.slack <= limits.binding;
  const int64_t x_elements = limits.window_elements(x.dtype()),
                y_elements = limits.window_elements(y.dtype());
  const Tensor col = Tensor::empty(pool, DType::f32, {nb > 0 ? nb * p_in * ck : rc * ck});
  Tensor slab;
  if (nb <= 0) {
    slab = Tensor::empty(pool, DType::f32, {g.in_channels * rc});
  }

  gemm::GemmOptions gemm_options;
  gemm_options.max_binding_bytes = limits.binding;
  gemm_options.tuning = kc.tuning.gemm;
  auto run_gemm = [&](const Tensor& a, const Tensor& out) {
    if (packed) {
      const gemm::GemmProblem p = gemm::GemmProblem::with_packed_b(a.shape(), a.dtype(), true, *packed);
      gemm::record_gemm(kc.gpu, kc.pipelines, recorder, p, {a, Tensor(), packed, Tensor(), out},
                        gemm_options);
      return;
    }
    const Tensor b = w.reshape({g.in_channels, ck});
    gemm::GemmProblem p;
    p.a_shape = a.shape();
    p.a_dtype = a.dtype();
    p.transpose_a = true;
    p.b_shape = b.shape();
    p.b_dtype = b.dtype();
    p.out_dtype = DType::f32;
    gemm::record_gemm(kc.gpu, kc.pipelines, recorder, p, {a, b, nullptr, Tensor(), out}, gemm_options);
  };

  // col2im: bindings col, [bias], y, params.
  // `activate`: the chunk completes its outputs (whole batches), so it applies the activation.
  auto gather_pipeline = [&](bool accumulate, bool activate) -> const wgpu::ComputePipeline& {
    // An accumulating chunk adds to y (which holds the bias already): no bias binding.
    const bool with_bias = bias.defined() && !accumulate;
    TemplateValues v = {{"HAS_BIAS", with_bias ? "1" : "0"},
                        {"ACCUMULATE", accumulate ? "1" : "0"},
                        {"ACTIVATE", activate ? "1" : "0"}};
    add_activation(v, options.activation);
    int b = 1;
    v["BIAS_ACCESS"] = with_bias ? tensor_access("bias", b++, bias.dtype(), false) : "";
    v["Y_ACCESS"] = tensor_access("y", b++, y.dtype(), true);
    v["PARAMS_BINDING"] = std::to_string(b);
    return shader_pipeline(kc.pipelines, "conv/col2im.wgsl", v, "conv transpose col2im");
  };
  ConvUniforms u = make_uniforms(g);
  u.offsets[2] = bias.defined() ? bias.element_offset(kc.gpu) : 0;
  u.offsets[3] = y.element_offset(kc.gpu);
  u.region[2] = u32(ck, "columns");
  u.activation_alpha = options.activation_alpha;
  // `ys`: y or a view of whole batches of it (u.chunk[0] counts batches from its start). A
  // one-batch gather into a windowed Y runs once per window of output channels.
  auto gather = [&](const Tensor& chunk_col, const Tensor& ys, bool accumulate, bool activate) {
    u.offsets[0] = chunk_col.element_offset(kc.gpu);
    const int64_t positions = u.region[1] - u.region[0];
    const bool whole = ys.device_bytes() + limits.slack <= limits.binding;
    const int64_t out_positions = g.out_positions();
    const int64_t per_window =
        whole ? g.out_channels : std::min(g.out_channels, 1 + (y_elements - positions) / out_positions);
    for (int64_t o0 = 0; o0 < g.out_channels; o0 += per_window) {
      const int64_t o1 = std::min(g.out_channels, o0 + per_window);
      const int64_t n = u.chunk[0];
      const Window yw = whole ? Window{ys, 0}
                              : window(kc, ys, (n * g.out_channels + o0) * out_positions + u.region[0],
                                       (n * g.out_channels + o1 - 1) * out_positions + u.region[1], limits);
      ConvUniforms gu = u;
      gu.first_row = u32(o0, "output channel");
      gu.y_base = u32(yw.base, "Y window");
      gu.offsets[3] = yw.view.element_offset(kc.gpu);
      std::vector<gpu::BufferBinding> bindings = {chunk_col.binding(kc.gpu)};
      if (bias.defined() && !accumulate) bindings.push_back(bias.binding(kc.gpu));
      bindings.push_back(yw.view.binding(kc.gpu));
      const int64_t invocations =
          whole ? static_cast<int64_t>(u.chunk[1]) * g.out_channels * positions : (o1 - o0) * positions;
      dispatch(kc, recorder, gather_pipeline(accumulate, activate), bindings, gu, invocations,
               "conv transpose col2im");
    }
  };

  if (nb > 0) {
    for (int64_t n0 = 0; n0 < g.batch; n0 += nb) {
      const int64_t count = std::min(nb, g.batch - n0);
      const Tensor a =
          (count == g.batch ? x : x.slice_outer(n0, n0 + count)).reshape({count, g.in_channels, p_in});
      const Tensor chunk_col = col.slice_outer(0, count * p_in * ck).reshape({count, p_in, ck});
      run_gemm(a, chunk_col);
      u.chunk[0] = 0;  // batches of the view of y
      u.chunk[1] = u32(count, "batch");
      gather(chunk_col, count == g.batch ? y : y.slice_outer(n0, n0 + count), false,
             options.activation != gemm::Activation::none);
    }
    return;
  }

  const auto& gather_rows =
      shader_pipeline(kc.pipelines, "conv/gather_rows.wgsl",
                      {{"X_ACCESS", tensor_access("x", 0, x.dtype(), false)}}, "conv transpose gather rows");
  const int64_t inner_in = inner_positions(g);
  const int64_t inner_out = g.out_positions() / std::max<int64_t>(g.out_size[0], 1);
  const int64_t s0 = g.strides[0], pad0 = g.pads_begin[0], reach0 = (g.kernel[0] - 1) * g.dilations[0];
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t r0 = 0; r0 < p_in; r0 += rc) {
      const int64_t r1 = std::min(p_in, r0 + rc), count = r1 - r0;
      u.chunk[0] = u32(n, "batch");
      u.chunk[1] = 1;
      u.chunk[2] = u32(r0, "row");
      u.chunk[3] = u32(r1, "row");
      const Tensor a = slab.slice_outer(0, g.in_channels * count).reshape({g.in_channels, count});
      // Once per window of input channels [c0, c1) (rows [r0, r1) of each; one when X fits).
      const int64_t per_window =
          x_whole ? g.in_channels : std::min(g.in_channels, 1 + (x_elements - count) / p_in);
      for (int64_t c0 = 0; c0 < g.in_channels; c0 += per_window) {
        const int64_t c1 = std::min(g.in_channels, c0 + per_window);
        const Window xw = x_whole ? Window{x, 0}
                                  : window(kc, x, (n * g.in_channels + c0) * p_in + r0,
                                           (n * g.in_channels + c1 - 1) * p_in + r1, limits);
        ConvUniforms su = u;
        su.first_row = u32(c0, "input channel");
        su.x_base = u32(xw.base, "X window");
        su.offsets[0] = xw.view.element_offset(kc.gpu);
        su.offsets[3] = a.element_offset(kc.gpu);
        const gpu::BufferBinding bindings[] = {xw.view.binding(kc.gpu), a.binding(kc.gpu)};
        dispatch(kc, recorder, gather_rows, bindings, su, (c1 - c0) * count, "conv transpose gather rows");
      }
      const Tensor chunk_col = col.slice_outer(0, count * ck).reshape({count, ck});
      run_gemm(a, chunk_col);
      // Output rows reached by input rows [r0, r1) / inner along the outermost dimension:
      // o = i * s - pad + k * d.
      if (r0 == 0) {
        u.region[0] = 0;  // the first chunk writes the whole batch (bias + its own taps)
        u.region[1] = u32(g.out_positions(), "positions");
        gather(chunk_col, y, false, false);
        continue;
      }
      const int64_t lo = std::max<int64_t>(0, (r0 / inner_in) * s0 - pad0);
      const int64_t hi = std::min<int64_t>(g.out_size[0] - 1, (r1 / inner_in - 1) * s0 - pad0 + reach0);
      if (lo > hi) continue;
      u.region[0] = u32(lo * inner_out, "positions");
      u.region[1] = u32((hi + 1) * inner_out, "positions");
      gather(chunk_col, y, true, false);
    }
    if (options.activation != gemm::Activation::none) {
      TemplateValues v = {{"Y_ACCESS", tensor_access("y", 0, y.dtype(), true)}};
      add_activation(v, options.activation);
      const auto& pipeline = shader_pipeline(kc.pipelines, "conv/activate_in_place.wgsl", v, "conv activate");
      // Once per window of the batch's elements (one when Y fits).
      const int64_t per_batch = g.out_channels * g.out_positions();
      const int64_t step = y_whole ? per_batch : y_elements;
      for (int64_t e0 = 0; e0 < per_batch; e0 += step) {
        const int64_t e1 = std::min(per_batch, e0 + step);
        const Window yw =
            y_whole ? Window{y, 0} : window(kc, y, n * per_batch + e0, n * per_batch + e1, limits);
        ConvUniforms au = u;
        au.chunk[0] = u32(n, "batch");
        au.first_row = u32(e0, "element");
        au.y_base = u32(yw.base, "Y window");
        au.offsets[3] = yw.view.element_offset(kc.gpu);
        const gpu::BufferBinding bindings[] = {yw.view.binding(kc.gpu)};
        dispatch(kc, recorder, pipeline, bindings, au, e1 - e0, "conv activate");
      }
    }
  }
}

}  // namespace onda::kernels::conv::detail
