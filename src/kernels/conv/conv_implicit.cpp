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
#include "kernels/conv/conv_step.h"
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
  // 64 positions per tile; 128 (NV = 2, ConvOptions::implicit_nv) measured slower on every large conv
  // of SCNet, UVR and HTDemucs and ahead only on two deep-K UVR convs (docs/benchmark-log.md).
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

bool conv_implicit_applies(const KernelContext& kc, const ConvGeometry& g, DType x, DType w, DType y,
                           const ChunkLimits& limits) {
  const int64_t x_numel = g.batch * g.in_channels * g.in_positions();
  if (g.group != 1 || g.spatial_rank() > 2 || g.batch == 0 || x_numel == 0) return false;
  if (g.in_channels == 0 || g.out_channels == 0 || g.out_positions() == 0) return false;
  if (g.transpose && !g.unit_dilations()) return false;
  for (const auto& [numel, dtype] : {std::pair{x_numel, x}, std::pair{element_count(g.weight_shape()), w},
                                     std::pair{element_count(g.output_shape()), y}}) {
    if (static_cast<uint64_t>(numel) * device_element_size(dtype) + limits.slack > limits.binding)
      return false;
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

namespace {

// The implicit GEMM of one Conv, or of a ConvTranspose per stride phase or as one shuffled GEMM:
// W repacked once (kept in the weight cache of a constant weight), then the tiled kernel, then, with
// split K, the reduce of the slices' partial sums.
class ImplicitStep final : public ConvStep {
 public:
  explicit ImplicitStep(const StepInputs& in)
      : kc_(in.kc),
        g_(in.g),
        options_(in.options),
        cache_(in.operands.weight_cache),
        shuffle_(options_.implicit_shuffle.value_or(true) && shuffle_applies(g_)),
        pg_(implicit_problem(g_, shuffle_)) {
    const ConvGeometry phase_problem = phase_geometry(g_);  // one phase's taps J (a Conv: its own kernel)
    const int64_t phases = phase_problem.batch / std::max<int64_t>(g_.batch, 1);
    plan_tile();
    const int64_t taps = phase_problem.kernel_elements();  // a ConvTranspose's taps per phase
    const int64_t ci_pad = ceil_div(g_.in_channels, tile_.bk) * tile_.bk,
                  co_pad = ceil_div(g_.out_channels, 4) * 4;
    packed_numel_ = phases * ci_pad * taps * co_pad;
    plan_uniforms(phase_problem, phases, taps, ci_pad, co_pad);
    plan_pipelines(in.operands);
  }

  void record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const ConvTensors& t) const override {
    const Tensor wp = packed_weight(recorder, pool, t.weights.w);
    const bool split = tile_.splits > 1;
    Tensor part;  // split K: the slices' partial sums, f32 [splits, N, C_out, P]
    if (split) {
      part = Tensor::empty(pool, DType::f32, {static_cast<int64_t>(tile_.splits) * t.y.numel()});
    }
    const Tensor& out = split ? part : t.y;
    const bool bind_bias = t.bias.defined() && !split;
    std::vector<gpu::BufferBinding> bindings = {t.x.binding(kc_.gpu), wp.binding(kc_.gpu)};
    if (bind_bias) bindings.push_back(t.bias.binding(kc_.gpu));
    bindings.push_back(out.binding(kc_.gpu));
    ConvUniforms u = u_;
    u.offsets[0] = t.x.element_offset(kc_.gpu);
    u.offsets[1] = wp.element_offset(kc_.gpu);
    u.offsets[2] = bind_bias ? t.bias.element_offset(kc_.gpu) : 0;
    u.offsets[3] = out.element_offset(kc_.gpu);
    recorder.dispatch(*main_, bindings, &u, sizeof(u), groups_, "conv implicit gemm");
    if (split) record_reduce(recorder, u, part, t.bias, t.y);
  }

 private:
  // The tile for the GEMM problem, split K cut back until the partial sums fit one binding and the
  // slices one dispatch dimension.
  void plan_tile() {
    tile_ = choose_implicit_tile(pg_, options_.implicit_nv, options_.implicit_splits);
    if (tile_.nv != 1 && tile_.nv != 2) throw std::invalid_argument("conv: implicit_nv must be 0, 1 or 2");
    const auto& limits = kc_.gpu.limits();
    const uint64_t y_f32_bytes = static_cast<uint64_t>(element_count(g_.output_shape())) * 4;
    while (tile_.splits > 1 &&
           (tile_.splits * y_f32_bytes + limits.minStorageBufferOffsetAlignment >
                limits.maxStorageBufferBindingSize ||
            static_cast<uint64_t>(pg_.batch) * tile_.splits > limits.maxComputeWorkgroupsPerDimension))
      --tile_.splits;
  }

  void plan_uniforms(const ConvGeometry& phase_problem, int64_t phases, int64_t taps, int64_t ci_pad,
                     int64_t co_pad) {
    u_ = make_uniforms(g_);
    u_.activation_alpha = options_.activation_alpha;
    u_.region[2] = u32(co_pad, "packed weight row");
    u_.region[3] = u32(phases * co_pad, "shuffled rows");  // SHUFFLE: GEMM rows phase x co_pad
    u_.chunk[2] = tile_.bk;                                // the k loop bound under KEEP_K_LOOP
    const ConvUniforms pu_taps = make_uniforms(phase_problem);
    if (g_.transpose) {
      u_.region[0] = u32(ci_pad * taps * co_pad, "packed weight phase block");
      for (int d = 0; d < 3; ++d) u_.kernel[d] = pu_taps.kernel[d];
    }
    u_.tap_step[3] = tile_.splits;
    pack_u_ = make_uniforms(g_);  // the ONNX kernel size
    pack_u_.region[2] = u_.region[2];
    pack_u_.chunk[0] = u32(ci_pad, "padded C_in");
    for (int d = 0; d < 3; ++d) pack_u_.tap_step[d] = pu_taps.kernel[d];
    // A ConvTranspose phase has at most ceil(out / s) positions per dimension (pg_.out_positions()).
    const int64_t bn = 64 * tile_.nv, bm = 8 * tile_.wg_y;
    groups_ = {u32(ceil_div(pg_.out_positions(), bn), "position tiles"),
               u32(ceil_div(pg_.out_channels, bm), "channel tiles"),
               u32(pg_.batch * tile_.splits, "batch slices")};
  }

  void plan_pipelines(const ConvOperands& o) {
    const bool split = tile_.splits > 1, bind_bias = o.bias && !split;
    const char* pack_file =
        g_.transpose ? "conv/implicit_pack_w_transpose.wgsl" : "conv/implicit_pack_w.wgsl";
    pack_ = &shader_pipeline(kc_.pipelines, pack_file, {{"W_ACCESS", tensor_access("w", 0, *o.w, false)}},
                             "conv implicit pack w");
    TemplateValues v = {{"X_ACCESS", tensor_access("x", 0, o.x, false)},
                        {"HAS_BIAS", bind_bias ? "1" : "0"},
                        {"SPLIT", split ? "1" : "0"},
                        {"TRANSPOSE", g_.transpose && !shuffle_ ? "1" : "0"},
                        {"SHUFFLE", shuffle_ ? "1" : "0"},
                        {"PREFETCH", options_.implicit_prefetch ? "1" : "0"},
                        {"WG_Y", std::to_string(tile_.wg_y)},
                        {"NV", std::to_string(tile_.nv)},
                        {"BK", std::to_string(tile_.bk)},
                        {"KEEP_K_LOOP", kc_.gpu.adapter_description().type == "CPU" ? "1" : "0"}};
    add_activation(v, options_.activation);
    int b = 2;
    v["BIAS_ACCESS"] = bind_bias ? tensor_access("bias", b++, *o.bias, false) : "";
    v["Y_ACCESS"] = tensor_access("y", b++, split ? DType::f32 : o.y, true);
    v["PARAMS_BINDING"] = std::to_string(b);
    main_ = &shader_pipeline(kc_.pipelines, "conv/conv_implicit.wgsl", v, "conv implicit gemm");
    if (!split) return;
    TemplateValues rv = {{"HAS_BIAS", o.bias ? "1" : "0"}};
    add_activation(rv, options_.activation);
    b = 1;
    rv["BIAS_ACCESS"] = o.bias ? tensor_access("bias", b++, *o.bias, false) : "";
    rv["Y_ACCESS"] = tensor_access("y", b++, o.y, true);
    rv["PARAMS_BINDING"] = std::to_string(b);
    reduce_ = &shader_pipeline(kc_.pipelines, "conv/implicit_splitk_reduce.wgsl", rv,
                               "conv implicit split-k reduce");
  }

  bool reads_weight() const override { return !cached(); }

  bool cached() const {
    return cache_ && cache_->implicit_packed.defined() && cache_->implicit_packed.numel() == packed_numel_;
  }

  // wp[phases, ci_pad, taps, co_pad] (f32, zero padded): packed now, or taken from (and on the first
  // run put into) the weight cache of a constant weight.
  Tensor packed_weight(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const Tensor& w) const {
    if (cached()) return cache_->implicit_packed;
    const bool keep = cache_ && cache_->pool;
    const Tensor wp = Tensor::empty(keep ? *cache_->pool : pool, DType::f32, {packed_numel_});
    if (wp.element_offset(kc_.gpu) % 4 != 0)
      throw std::logic_error("conv: the packed weight is not 16-byte aligned");
    ConvUniforms pu = pack_u_;
    pu.offsets[1] = w.element_offset(kc_.gpu);
    pu.offsets[3] = wp.element_offset(kc_.gpu);
    const gpu::BufferBinding bindings[] = {w.binding(kc_.gpu), wp.binding(kc_.gpu)};
    dispatch(kc_, recorder, *pack_, bindings, pu, wp.numel(), "conv implicit pack w");
    if (keep) cache_->implicit_packed = wp;
    return wp;
  }

  // y = act(bias + the sum of the slices).
  void record_reduce(gpu::CommandRecorder& recorder, const ConvUniforms& u, const Tensor& part,
                     const Tensor& bias, const Tensor& y) const {
    ConvUniforms ru = u;
    std::vector<gpu::BufferBinding> bindings = {part.binding(kc_.gpu)};
    if (bias.defined()) bindings.push_back(bias.binding(kc_.gpu));
    bindings.push_back(y.binding(kc_.gpu));
    ru.offsets[0] = part.element_offset(kc_.gpu);
    ru.offsets[2] = bias.defined() ? bias.element_offset(kc_.gpu) : 0;
    ru.offsets[3] = y.element_offset(kc_.gpu);
    dispatch(kc_, recorder, *reduce_, bindings, ru, y.numel(), "conv implicit split-k reduce");
  }

  KernelContext kc_;
  ConvGeometry g_;
  ConvOptions options_;
  ConvWeightCache* cache_;
  bool shuffle_;
  ConvGeometry pg_;  // the GEMM problem: g_ itself for a Conv
  ImplicitTile tile_;
  int64_t packed_numel_ = 0;
  ConvUniforms u_{}, pack_u_{};
  gpu::WorkgroupCount groups_{};
  const wgpu::ComputePipeline* pack_ = nullptr;
  const wgpu::ComputePipeline* main_ = nullptr;
  const wgpu::ComputePipeline* reduce_ = nullptr;
};

}  // namespace

std::unique_ptr<ConvStep> plan_implicit(const StepInputs& in) {
  return std::make_unique<ImplicitStep>(in);
}

}  // namespace onda::kernels::conv::detail
