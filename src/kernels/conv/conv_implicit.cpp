// Conv as an implicit GEMM (conv_implicit.wgsl): group 1, 1-D / 2-D, X, W and Y bound whole; W is
// first repacked (implicit_pack_w.wgsl, one small dispatch) to [C_in, taps, C_out] so that its tiles
// load as coalesced vec4s. The tile is chosen from the shape: BM = 8 WG_Y output channels (WG_Y in
// 2, 4, 6, 8, 12, 16: even, and a divisor of 24 or 32 for the K step), picked to waste few
// rows of C_out (UVR's 48 / 96 / 192 / 288 / 384 channels get 48 / 96 / 96 / 96 / 128); BN = 64
// positions (128 by ConvOptions::implicit_nv); BK input channels per K step
// picked to waste little of the last chunk (C_in 145 -> 24 x 7) while keeping barriers rare.
// ConvTranspose (dilation 1) runs the same kernel per stride phase (see conv_implicit.wgsl), W packed
// by implicit_pack_w_transpose.wgsl; its tile is chosen for the phase problem (phase_geometry), or, for
// a kernel equal to its stride, for all phases as one GEMM (shuffle_geometry, SHUFFLE in the shader).
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "gpu/command_recorder.h"
#include "kernels/common/tensor_access.h"
#include "kernels/conv/conv_uniforms.h"
#include "kernels/shader_template.h"

namespace onda::kernels::conv::detail {
namespace {

// Workgroups below which the planner halves the position tile (a few per SM of a large GPU).
constexpr int64_t kFewWorkgroups = 264;

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

ConvGeometry phase_geometry(const ConvGeometry& g) {
  if (!g.transpose) return g;
  ConvGeometry p = g;
  p.transpose = false;
  int64_t phases = 1;
  for (int64_t d = 0; d < g.spatial_rank(); ++d) {
    p.kernel[d] = ceil_div(g.kernel[d], g.strides[d]);  // taps per phase (dilation 1)
    p.out_size[d] = ceil_div(g.out_size[d], g.strides[d]);
    p.strides[d] = 1;
    phases *= g.strides[d];
  }
  p.batch = g.batch * phases;
  return p;
}

bool shuffle_applies(const ConvGeometry& g) {
  if (!g.transpose || g.group != 1 || g.spatial_rank() > 2 || !g.unit_dilations()) return false;
  for (int64_t d = 0; d < g.spatial_rank(); ++d) {
    if (g.kernel[d] != g.strides[d] || g.pads_begin[d] < 0 ||
        g.out_size[d] + g.pads_begin[d] > g.in_size[d] * g.strides[d]) {
      return false;
    }
  }
  return true;
}

ConvGeometry shuffle_geometry(const ConvGeometry& g) {
  ConvGeometry p = g;
  p.transpose = false;
  p.out_channels = g.kernel_elements() * ceil_div(g.out_channels, 4) * 4;  // phases x co_pad
  for (int64_t d = 0; d < g.spatial_rank(); ++d) {
    p.kernel[d] = 1;
    p.strides[d] = 1;
    p.out_size[d] = g.in_size[d];
    p.pads_begin[d] = p.pads_end[d] = 0;
  }
  return p;
}

namespace {
// The GEMM problem the implicit path tiles for g.
ConvGeometry implicit_problem(const ConvGeometry& g, bool shuffle) {
  return shuffle ? shuffle_geometry(g) : phase_geometry(g);
}
}  // namespace

ImplicitTile choose_implicit_tile(const ConvGeometry& g, int nv_override, int splits_override) {
  ImplicitTile t;
  // Output channel tile: cost ~ tiles x (rows + 16), the 16 standing for the per-tile cost of
  // staging the position slice; ties go to the larger tile.
  int64_t best = -1;
  for (const uint32_t wg_y : {16u, 12u, 8u, 6u, 4u, 2u}) {
    const int64_t bm = 8 * wg_y;
    const int64_t cost = ceil_div(g.out_channels, bm) * (bm + 16);
    if (best < 0 || cost < best) best = cost, t.wg_y = wg_y;
  }
  const int64_t bm = 8 * t.wg_y;
  const int64_t m_tiles = ceil_div(g.out_channels, bm);
  // 64 positions per tile. 128 (NV = 2) was the choice wherever 128-position tiles gave enough
  // workgroups until an H200 sweep found 64 faster on most of them (by 10-35% on every large conv of
  // SCNet, UVR and HTDemucs); 128 stayed ahead by 2-5% only on two deep-K UVR convs
  // (docs/benchmark-log.md).
  t.nv = nv_override > 0 ? static_cast<uint32_t>(nv_override) : 1u;
  // K step: a multiple of 8 (vec4 A loads) and of the row groups WG_Y / 2 (B loads), at most 32; cost
  // ~ steps x (BK + 4), the 4 standing for the two barriers and the tile loads' fixed work.
  const uint32_t row_groups = t.wg_y / 2;
  best = -1;
  for (uint32_t bk = 32; bk >= 2; --bk) {
    if (bk % 8 != 0 || bk % row_groups != 0) continue;
    const int64_t cost = ceil_div(g.in_channels, bk) * (bk + 4);
    if (best < 0 || cost < best) best = cost, t.bk = bk;
  }
  // Split K where the tiles give fewer than 2 kFewWorkgroups: enough slices to reach that, at most
  // one per channel chunk and 16 (each slice's partial sums are a copy of Y to write and re-read).
  const int64_t c_steps = ceil_div(g.in_channels, t.bk);
  const int64_t tiles = g.batch * m_tiles * ceil_div(g.out_positions(), 64 * t.nv);
  t.splits = static_cast<uint32_t>(
      splits_override > 0 ? splits_override
                          : std::clamp<int64_t>(ceil_div(2 * kFewWorkgroups, std::max<int64_t>(tiles, 1)), 1,
                                                std::min<int64_t>(c_steps, 16)));
  if (splits_override <= 0) {  // no empty slices: as many as the chunks per slice need
    const int64_t per_split = ceil_div(c_steps, t.splits);
    t.splits = static_cast<uint32_t>(ceil_div(c_steps, per_split));
  }
  return t;
}

bool conv_implicit_applies(const KernelContext& kc, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                           const Tensor& y, const ChunkLimits& limits) {
  if (g.group != 1 || g.spatial_rank() > 2 || g.batch == 0 || x.numel() == 0) return false;
  if (g.in_channels == 0 || g.out_channels == 0 || g.out_positions() == 0) return false;
  if (g.transpose && !g.unit_dilations()) return false;
  for (const Tensor* t : {&x, &w, &y}) {
    if (t->device_bytes() + limits.slack > limits.binding) return false;
  }
  // The packed weight [phases][ci_pad][taps][co_pad] (f32, ci_pad <= C_in + 31) is bound whole too: a
  // ConvTranspose with a long kernel and stride repeats W's size in f32 with padding (larger than W in f16).
  const ConvGeometry phase_problem = phase_geometry(g);
  const uint64_t packed_bytes = static_cast<uint64_t>(phase_problem.batch / g.batch) * (g.in_channels + 31) *
                                phase_problem.kernel_elements() * ceil_div(g.out_channels, 4) * 4 * 4;
  if (packed_bytes + limits.slack > limits.binding) return false;
  const auto& l = kc.gpu.limits();
  // Either problem a ConvTranspose may be run as (ConvOptions::implicit_shuffle) fits the grid limits.
  for (const bool shuffle : {false, shuffle_applies(g)}) {
    const ConvGeometry pg = implicit_problem(g, shuffle);
    const ImplicitTile t = choose_implicit_tile(pg, 0);
    const int64_t bm = 8 * t.wg_y;
    if (ceil_div(pg.out_positions(), 64) > l.maxComputeWorkgroupsPerDimension ||
        ceil_div(pg.out_channels, bm) > l.maxComputeWorkgroupsPerDimension ||
        pg.batch * 16 > l.maxComputeWorkgroupsPerDimension) {
      return false;
    }
  }
  return l.maxComputeInvocationsPerWorkgroup >= 256 && l.maxComputeWorkgroupSizeY >= 16 &&
         l.maxComputeWorkgroupStorageSize >= 32 * (128 + 128) * 4;
}

void record_conv_implicit(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                          const ConvGeometry& g,
                          const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                          const ConvOptions& options) {
  const bool shuffle = options.implicit_shuffle.value_or(true) && shuffle_applies(g);
  const ConvGeometry pg = implicit_problem(g, shuffle);  // g itself for a Conv
  const ConvGeometry phase_problem = phase_geometry(g);  // one phase's taps J (a Conv: its own kernel)
  const int64_t phases = phase_problem.batch / std::max<int64_t>(g.batch, 1);
  ImplicitTile t = choose_implicit_tile(pg, options.implicit_nv, options.implicit_splits);
  if (t.nv != 1 && t.nv != 2) throw std::invalid_argument("conv: implicit_nv must be 0, 1 or 2");
  // The partial sums must fit one binding, and the slices one dispatch dimension.
  const uint64_t y_f32_bytes = static_cast<uint64_t>(y.numel()) * 4;
  while (t.splits > 1 && (t.splits * y_f32_bytes + kc.gpu.limits().minStorageBufferOffsetAlignment >
                              kc.gpu.limits().maxStorageBufferBindingSize ||
                          static_cast<uint64_t>(pg.batch) * t.splits > kc.gpu.limits().maxComputeWorkgroupsPerDimension))
    --t.splits;
  const bool split = t.splits > 1;
  ConvUniforms u = make_uniforms(g);
  u.activation_alpha = options.activation_alpha;
  const int64_t taps = phase_problem.kernel_elements();  // a ConvTranspose's taps per phase
  const int64_t ci_pad = ceil_div(g.in_channels, t.bk) * t.bk, co_pad = ceil_div(g.out_channels, 4) * 4;
  u.region[2] = u32(co_pad, "packed weight row");
  u.region[3] = u32(phases * co_pad, "shuffled rows");  // SHUFFLE: GEMM rows phase x co_pad
  u.chunk[2] = t.bk;  // the k loop bound under KEEP_K_LOOP
  const ConvUniforms pu_taps = make_uniforms(phase_problem);
  if (g.transpose) {
    u.region[0] = u32(ci_pad * taps * co_pad, "packed weight phase block");
    for (int d = 0; d < 3; ++d) u.kernel[d] = pu_taps.kernel[d];
  }

  // wp[phases, ci_pad, taps, co_pad] (f32, zero padded), packed now or taken from the caller's cache.
  ImplicitWeightCache* cache = options.implicit_weight;
  const int64_t packed_numel = phases * ci_pad * taps * co_pad;
  Tensor wp = cache && cache->packed.defined() && cache->packed.numel() == packed_numel ? cache->packed : Tensor();
  if (!wp.defined()) {
    const bool keep = cache && cache->pool;
    wp = Tensor::empty(keep ? *cache->pool : pool, DType::f32, {packed_numel});
    if (wp.element_offset(kc.gpu) % 4 != 0) throw std::logic_error("conv: the packed weight is not 16-byte aligned");
    ConvUniforms pu = make_uniforms(g);  // the ONNX kernel size
    pu.region[2] = u.region[2];
    pu.chunk[0] = u32(ci_pad, "padded C_in");
    for (int d = 0; d < 3; ++d) pu.tap_step[d] = pu_taps.kernel[d];
    pu.offsets[1] = w.element_offset(kc.gpu);
    pu.offsets[3] = wp.element_offset(kc.gpu);
    const char* pack_file = g.transpose ? "conv/implicit_pack_w_transpose.wgsl" : "conv/implicit_pack_w.wgsl";
    const auto& pack =
        shader_pipeline(kc.pipelines, pack_file, {{"W_ACCESS", tensor_access("w", 0, w.dtype(), false)}},
                        "conv implicit pack w");
    const gpu::BufferBinding pack_bindings[] = {w.binding(kc.gpu), wp.binding(kc.gpu)};
    dispatch(kc, recorder, pack, pack_bindings, pu, wp.numel(), "conv implicit pack w");
    if (keep) cache->packed = wp;
  }

  u.tap_step[3] = t.splits;
  Tensor part;  // split K: the slices' partial sums, f32 [splits, N, C_out, P]
  if (split) {
    part = Tensor::empty(pool, DType::f32, {static_cast<int64_t>(t.splits) * y.numel()});
  }
  const Tensor& out = split ? part : y;
  TemplateValues v = {{"X_ACCESS", tensor_access("x", 0, x.dtype(), false)},
                      {"HAS_BIAS", bias.defined() && !split ? "1" : "0"},
                      {"SPLIT", split ? "1" : "0"},
                      {"TRANSPOSE", g.transpose && !shuffle ? "1" : "0"},
                      {"SHUFFLE", shuffle ? "1" : "0"},
                      {"PREFETCH", options.implicit_prefetch ? "1" : "0"},
                      {"WG_Y", std::to_string(t.wg_y)},
                      {"NV", std::to_string(t.nv)},
                      {"BK", std::to_string(t.bk)},
                      {"KEEP_K_LOOP", kc.gpu.adapter_description().type == "CPU" ? "1" : "0"}};
  add_activation(v, options.activation);
  std::vector<gpu::BufferBinding> bindings = {x.binding(kc.gpu), wp.binding(kc.gpu)};
  int b = 2;
  const bool bind_bias = bias.defined() && !split;
  v["BIAS_ACCESS"] = bind_bias ? tensor_access("bias", b++, bias.dtype(), false) : "";
  if (bind_bias) bindings.push_back(bias.binding(kc.gpu));
  v["Y_ACCESS"] = tensor_access("y", b++, out.dtype(), true);
  bindings.push_back(out.binding(kc.gpu));
  v["PARAMS_BINDING"] = std::to_string(b);
  u.offsets[0] = x.element_offset(kc.gpu);
  u.offsets[1] = wp.element_offset(kc.gpu);
  u.offsets[2] = bind_bias ? bias.element_offset(kc.gpu) : 0;
  u.offsets[3] = out.element_offset(kc.gpu);
  const auto& pipeline = shader_pipeline(kc.pipelines, "conv/conv_implicit.wgsl", v, "conv implicit gemm");
  const int64_t bn = 64 * t.nv, bm = 8 * t.wg_y;
  // A ConvTranspose phase has at most ceil(out / s) positions per dimension (pg.out_positions()).
  const gpu::WorkgroupCount groups{u32(ceil_div(pg.out_positions(), bn), "position tiles"),
                                   u32(ceil_div(pg.out_channels, bm), "channel tiles"),
                                   u32(pg.batch * t.splits, "batch slices")};
  recorder.dispatch(pipeline, bindings, &u, sizeof(u), groups, "conv implicit gemm");
  if (!split) return;

  // y = act(bias + the sum of the slices).
  ConvUniforms ru = u;
  TemplateValues rv = {{"HAS_BIAS", bias.defined() ? "1" : "0"}};
  add_activation(rv, options.activation);
  std::vector<gpu::BufferBinding> reduce_bindings = {part.binding(kc.gpu)};
  b = 1;
  rv["BIAS_ACCESS"] = bias.defined() ? tensor_access("bias", b++, bias.dtype(), false) : "";
  if (bias.defined()) reduce_bindings.push_back(bias.binding(kc.gpu));
  rv["Y_ACCESS"] = tensor_access("y", b++, y.dtype(), true);
  reduce_bindings.push_back(y.binding(kc.gpu));
  rv["PARAMS_BINDING"] = std::to_string(b);
  ru.offsets[0] = part.element_offset(kc.gpu);
  ru.offsets[2] = bias.defined() ? bias.element_offset(kc.gpu) : 0;
  ru.offsets[3] = y.element_offset(kc.gpu);
  const auto& reduce =
      shader_pipeline(kc.pipelines, "conv/implicit_splitk_reduce.wgsl", rv, "conv implicit split-k reduce");
  dispatch(kc, recorder, reduce, reduce_bindings, ru, y.numel(), "conv implicit split-k reduce");
}

}  // namespace onda::kernels::conv::detail
