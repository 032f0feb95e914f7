// ConvTranspose on the GEMM core (group 1), after the col2im formulation of transposed convolution
// (e.g. Caffe's deconvolution layer): col[n, i, co * taps + k] = sum_ci X[n, ci, i] W[ci, co * taps + k]
// is one GEMM X[n]^T [P_in, C_in] x W[C_in, C_out * taps] (W optionally prepacked), then col2im.wgsl
// gathers for every output the taps whose source lies in the chunk (each output written once per
// chunk, no atomics), adding the bias once. The column buffer is processed in chunks of at most
// `limit` bytes: whole batches, or slabs of input rows (whole outermost spatial rows) of one batch,
// each gathering only into the output rows those input rows reach.
#include <fmt/format.h>

#include <stdexcept>

#include "kernels/common/tensor_access.h"
#include "kernels/conv/conv_uniforms.h"
#include "kernels/gemm/gemm.h"
#include "kernels/shader_template.h"

namespace onda::kernels::conv::detail {
namespace {

int64_t columns(const ConvGeometry& g) {
  return g.out_channels * g.kernel_elements();
}

int64_t batches_per_chunk(const ConvGeometry& g, DType x_dtype, uint64_t limit) {
  // The column chunk and the X view the GEMM binds both stay under the limit.
  const int64_t per_batch =
      std::max(g.in_positions() * columns(g) * 4,
               g.in_positions() * g.in_channels * static_cast<int64_t>(device_element_size(x_dtype)));
  const int64_t nb =
      std::min<int64_t>(g.batch, static_cast<int64_t>(limit) / std::max<int64_t>(per_batch, 1));
  // A float16 X cannot be viewed at an odd batch offset.
  if (nb < g.batch && x_dtype == DType::f16 && (g.in_channels * g.in_positions()) % 2 != 0) return 0;
  return nb;
}

// Input positions of one outermost spatial row (chunks hold whole rows).
int64_t inner_positions(const ConvGeometry& g) {
  return g.in_positions() / std::max<int64_t>(g.in_size[0], 1);
}

int64_t rows_per_chunk(const ConvGeometry& g, uint64_t limit) {
  const int64_t width = std::max(columns(g), g.in_channels) * 4;
  const int64_t inner = inner_positions(g);
  return std::min(g.in_positions(), static_cast<int64_t>(limit) / width / inner * inner);
}

}  // namespace

bool conv_transpose_gemm_fits(const ConvGeometry& g, uint64_t limit) {
  return batches_per_chunk(g, DType::f32, limit) > 0 || rows_per_chunk(g, limit) > 0;
}

void record_conv_transpose_gemm(const KernelContext& kc, gpu::CommandRecorder& recorder,
                                gpu::BufferPool& pool, const ConvGeometry& g, const Tensor& w,
                                const gemm::PackedB* packed, const Tensor& x, const Tensor& bias,
                                const Tensor& y, uint64_t limit, const ConvOptions& options) {
  const int64_t ck = columns(g), p_in = g.in_positions();
  if (packed && (packed->k != g.in_channels || packed->n != ck)) {
    throw std::invalid_argument(
        fmt::format("conv: packed weight is {}x{}, expected {}x{}", packed->k, packed->n, g.in_channels, ck));
  }
  const int64_t nb = batches_per_chunk(g, x.dtype(), limit);
  const int64_t rc = nb > 0 ? p_in : rows_per_chunk(g, limit);
  if (nb <= 0 && rc <= 0) {
    throw std::invalid_argument(
        fmt::format("conv: one input row of the ConvTranspose column buffer exceeds {} bytes", limit));
  }
  const Tensor col = Tensor::empty(pool, DType::f32, {nb > 0 ? nb * p_in * ck : rc * ck});
  recorder.retain(col.storage());
  Tensor slab;
  if (nb <= 0) {
    slab = Tensor::empty(pool, DType::f32, {g.in_channels * rc});
    recorder.retain(slab.storage());
  }

  auto run_gemm = [&](const Tensor& a, const Tensor& out) {
    if (packed) {
      const gemm::GemmProblem p = gemm::GemmProblem::with_packed_b(a.shape(), a.dtype(), true, *packed);
      gemm::record_gemm(kc.gpu, kc.pipelines, recorder, p, {a, Tensor(), packed, Tensor(), out});
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
    gemm::record_gemm(kc.gpu, kc.pipelines, recorder, p, {a, b, nullptr, Tensor(), out});
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
    v["BIAS_ACCESS"] = with_bias ? tensor_access_wgsl("bias", b++, bias.dtype(), false) : "";
    v["Y_ACCESS"] = tensor_access_wgsl("y", b++, y.dtype(), true);
    v["PARAMS_BINDING"] = std::to_string(b);
    return kc.pipelines.get(render_shader("conv/col2im.wgsl", v), {}, "conv transpose col2im");
  };
  ConvUniforms u = make_uniforms(g);
  u.offsets[2] = bias.defined() ? bias.element_offset(kc.gpu) : 0;
  u.offsets[3] = y.element_offset(kc.gpu);
  u.region[2] = u32(ck, "columns");
  u.activation_alpha = options.activation_alpha;
  auto gather = [&](const Tensor& chunk_col, bool accumulate, bool activate) {
    u.offsets[0] = chunk_col.element_offset(kc.gpu);
    std::vector<gpu::BufferBinding> bindings = {chunk_col.binding(kc.gpu)};
    if (bias.defined() && !accumulate) bindings.push_back(bias.binding(kc.gpu));
    bindings.push_back(y.binding(kc.gpu));
    const int64_t invocations =
        static_cast<int64_t>(u.chunk[1]) * g.out_channels * (u.region[1] - u.region[0]);
    dispatch(kc, recorder, gather_pipeline(accumulate, activate), bindings, u, invocations,
             "conv transpose col2im");
  };

  if (nb > 0) {
    for (int64_t n0 = 0; n0 < g.batch; n0 += nb) {
      const int64_t count = std::min(nb, g.batch - n0);
      const Tensor a =
          (count == g.batch ? x : x.slice_outer(n0, n0 + count)).reshape({count, g.in_channels, p_in});
      const Tensor chunk_col = col.slice_outer(0, count * p_in * ck).reshape({count, p_in, ck});
      run_gemm(a, chunk_col);
      u.chunk[0] = u32(n0, "batch");
      u.chunk[1] = u32(count, "batch");
      gather(chunk_col, false, options.activation != gemm::Activation::none);
    }
    return;
  }

  const auto& gather_rows = kc.pipelines.get(
      render_shader("conv/gather_rows.wgsl", {{"X_ACCESS", tensor_access_wgsl("x", 0, x.dtype(), false)}}),
      {}, "conv transpose gather rows");
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
      ConvUniforms su = u;
      su.offsets[0] = x.element_offset(kc.gpu);
      su.offsets[3] = a.element_offset(kc.gpu);
      const gpu::BufferBinding bindings[] = {x.binding(kc.gpu), a.binding(kc.gpu)};
      dispatch(kc, recorder, gather_rows, bindings, su, a.numel(), "conv transpose gather rows");
      const Tensor chunk_col = col.slice_outer(0, count * ck).reshape({count, ck});
      run_gemm(a, chunk_col);
      // Output rows reached by input rows [r0, r1) / inner along the outermost dimension:
      // o = i * s - pad + k * d.
      if (r0 == 0) {
        u.region[0] = 0;  // the first chunk writes the whole batch (bias + its own taps)
        u.region[1] = u32(g.out_positions(), "positions");
        gather(chunk_col, false, false);
        continue;
      }
      const int64_t lo = std::max<int64_t>(0, (r0 / inner_in) * s0 - pad0);
      const int64_t hi = std::min<int64_t>(g.out_size[0] - 1, (r1 / inner_in - 1) * s0 - pad0 + reach0);
      if (lo > hi) continue;
      u.region[0] = u32(lo * inner_out, "positions");
      u.region[1] = u32((hi + 1) * inner_out, "positions");
      gather(chunk_col, true, false);
    }
    if (options.activation != gemm::Activation::none) {
      TemplateValues v = {{"Y_ACCESS", tensor_access_wgsl("y", 0, y.dtype(), true)}};
      add_activation(v, options.activation);
      const auto& pipeline =
          kc.pipelines.get(render_shader("conv/activate_in_place.wgsl", v), {}, "conv activate");
      ConvUniforms au = u;
      au.chunk[0] = u32(n, "batch");
      const gpu::BufferBinding bindings[] = {y.binding(kc.gpu)};
      dispatch(kc, recorder, pipeline, bindings, au, g.out_channels * g.out_positions(), "conv activate");
    }
  }
}

}  // namespace onda::kernels::conv::detail
