#include "kernels/attention/attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/common/binding_window.h"
#include "kernels/common/tensor_access.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

// Query rows per workgroup (one invocation each).
constexpr uint32_t kRowsPerWorkgroup = 64;
// Keys per tile at most: more keys per barrier, as long as K and V tiles fit in workgroup memory.
constexpr uint32_t kMaxKeysPerTile = 32;

struct AttentionShape {
  int64_t batch, lq, lk, d, dv;
};

AttentionShape checked_shape(const Tensor& q, const Tensor& k, const Tensor& v,
                             const AttentionOptions& options, const Tensor& out) {
  for (const Tensor* t : {&q, &k, &v, &out}) {
    if (t->rank() != 3)
      throw std::invalid_argument("attention: q, k, v and out must be 3-D [batch, rows, head dim]");
    if (t->dtype() != q.dtype())
      throw std::invalid_argument("attention: q, k, v and out must share one dtype");
  }
  if (q.dtype() != DType::f32 && q.dtype() != DType::f16)
    throw std::invalid_argument("attention: f32 or f16 required");
  AttentionShape s{q.shape()[0], q.shape()[1], v.shape()[1], q.shape()[2], v.shape()[2]};
  const Shape k_expected = options.k_transposed ? Shape{s.batch, s.d, s.lk} : Shape{s.batch, s.lk, s.d};
  if (k.shape() != k_expected || v.shape()[0] != s.batch || out.shape() != Shape{s.batch, s.lq, s.dv}) {
    throw std::invalid_argument(fmt::format("attention: shapes q {} k {} v {} out {} do not match{}",
                                            shape_string(q.shape()), shape_string(k.shape()),
                                            shape_string(v.shape()), shape_string(out.shape()),
                                            options.k_transposed ? " (k transposed)" : ""));
  }
  if (s.d < 1 || s.dv < 1 || s.d > kAttentionMaxHeadDim || s.dv > kAttentionMaxHeadDim) {
    throw std::invalid_argument(
        fmt::format("attention: head dims {} and {} must be in [1, {}]", s.d, s.dv, kAttentionMaxHeadDim));
  }
  return s;
}

// The largest power-of-two key tile whose K and V tiles fit in workgroup memory; 0 if none does.
// (WebGPU's 16 KiB minimum holds 8 keys of the largest head dims, kAttentionMaxHeadDim.)
uint32_t keys_per_tile(const wgpu::Limits& limits, int64_t d4, int64_t dv4) {
  const uint64_t bytes_per_key = static_cast<uint64_t>(d4 + dv4) * 16;
  uint32_t bc = kMaxKeysPerTile;
  while (bc > 0 && bc * bytes_per_key > limits.maxComputeWorkgroupStorageSize) bc /= 2;
  return bc;
}

struct AttentionUniforms {
  uint32_t batch, lq, lk;
  float scale;
  uint32_t q_offset, k_offset, v_offset, o_offset;
  uint32_t splits, keys_per_split, pad0 = 0, pad1 = 0;
};

struct CombineUniforms {
  uint32_t rows, splits, p_offset, o_offset;
};

// Row groups of 4 per workgroup of the tiled kernel (attention_tiled.wgsl): 16 (64 rows, 128
// invocations) where its workgroup memory fits, else 8; 0 when it does not apply (head dims above
// 64, or too little workgroup memory) or the tuning asks for the row kernel.
uint32_t tiled_row_groups(const KernelContext& kc, const AttentionShape& s) {
  if (kc.tuning.attention.kernel == attention::AttentionKernel::rows) return 0;
  if (s.d > kAttentionTiledMaxHeadDim || s.dv > kAttentionTiledMaxHeadDim) return 0;
  const wgpu::Limits& limits = kc.gpu.limits();
  const uint64_t dv4 = static_cast<uint64_t>((s.dv + 3) / 4), d = static_cast<uint64_t>(s.d);
  for (uint32_t rg : {16u, 8u}) {
    const uint64_t bytes = 16 * (d * rg + std::max<uint64_t>(d * 8, 32 * rg) + 32 * dv4 + 8 * rg);
    if (bytes <= limits.maxComputeWorkgroupStorageSize && 8 * rg <= limits.maxComputeInvocationsPerWorkgroup)
      return rg;
  }
  return 0;
}

}  // namespace

int64_t attention_key_splits(const KernelContext& kc, int64_t rows, int64_t lk) {
  if (kc.tuning.attention.key_splits > 0)
    return std::clamp<int64_t>(kc.tuning.attention.key_splits, 1, std::max<int64_t>(lk, 1));
  if (rows <= 0 || rows >= kAttentionBusyRows) return 1;
  const int64_t wanted = (kAttentionBusyRows + rows - 1) / rows;
  return std::clamp<int64_t>(wanted, 1, std::max<int64_t>(lk / kAttentionMinSliceKeys, 1));
}

void record_attention(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                      const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& options,
                      const Tensor& out) {
  const AttentionShape s = checked_shape(q, k, v, options, out);
  if (out.numel() == 0) return;
  if (s.lk == 0) throw std::invalid_argument("attention: no keys (Lk = 0): the softmax is undefined");
  const int64_t d4 = (s.d + 3) / 4, dv4 = (s.dv + 3) / 4;
  const wgpu::Limits& limits = kc.gpu.limits();
  const uint32_t bc = keys_per_tile(limits, d4, dv4);
  if (bc < 4 || limits.maxComputeInvocationsPerWorkgroup < kRowsPerWorkgroup) {  // 4 keys a step
    throw std::invalid_argument(
        fmt::format("attention: head dims {} and {} need more workgroup memory than the "
                    "device's {} bytes",
                    s.d, s.dv, limits.maxComputeWorkgroupStorageSize));
  }
  // Slices of the keys (attention_key_splits), each ceil(Lk / splits) long, none empty.
  const int64_t wanted_splits = attention_key_splits(kc, s.batch * s.lq, s.lk);
  const int64_t keys_per_split = (s.lk + wanted_splits - 1) / wanted_splits;
  const int64_t splits = (s.lk + keys_per_split - 1) / keys_per_split;
  const bool split = splits > 1;
  const uint32_t rg = tiled_row_groups(kc, s);
  TemplateValues values = {{"Q_ACCESS", tensor_access("q", 0, q.dtype(), false)},
                           {"K_ACCESS", tensor_access("k", 1, k.dtype(), false)},
                           {"V_ACCESS", tensor_access("v", 2, v.dtype(), false)},
                           {"O_ACCESS", tensor_access("o", 3, split ? DType::f32 : out.dtype(), true)},
                           {"SPLIT", split ? "1" : "0"},
                           {"D", std::to_string(s.d)},
                           {"DV", std::to_string(s.dv)},
                           {"DV4", std::to_string(dv4)},
                           {"K_TRANSPOSED", options.k_transposed ? "1" : "0"}};
  if (rg > 0) {
    const int64_t dvg = (dv4 + 7) / 8;
    values.insert({{"DVG", std::to_string(dvg)},
                   {"RG", std::to_string(rg)},
                   {"THREADS", std::to_string(8 * rg)},
                   {"Q_TILE", std::to_string(s.d * rg)},
                   {"KP_TILE", std::to_string(std::max<int64_t>(s.d * 8, 32 * rg))},
                   {"V_TILE", std::to_string(32 * dv4)},
                   {"RED", std::to_string(8 * rg)},
                   {"O_REGS", std::to_string(4 * dvg)}});
  } else {
    values.insert({{"D4", std::to_string(d4)},
                   {"BR", std::to_string(kRowsPerWorkgroup)},
                   {"BC", std::to_string(bc)},
                   {"K_TILE", std::to_string(bc * d4)},
                   {"V_TILE", std::to_string(bc * dv4)}});
  }
  const int64_t rows_per_group = rg > 0 ? 4 * rg : kRowsPerWorkgroup;
  const auto& pipeline =
      shader_pipeline(kc.pipelines, rg > 0 ? "attention/attention_tiled.wgsl" : "attention/attention.wgsl",
                      values, rg > 0 ? "attention tiled" : "attention");
  const wgpu::ComputePipeline* combine =
      split ? &shader_pipeline(kc.pipelines, "attention/attention_combine.wgsl",
                               {{"P_ACCESS", tensor_access("p", 0, DType::f32, false)},
                                {"O_ACCESS", tensor_access("o", 1, out.dtype(), true)},
                                {"DV", std::to_string(s.dv)}},
                               "attention combine")
            : nullptr;

  // Slices of the batch (batch * heads) small enough that each tensor, and the partials of split
  // keys, fit one storage binding.
  const int64_t per_batch = std::max({s.lq * s.d, s.lk * s.d, s.lk * s.dv, s.lq * s.dv});
  int64_t per_slice = rows_per_window(kc.gpu, q.dtype(), s.batch, per_batch);
  if (split)
    per_slice = std::min(per_slice, rows_per_window(kc.gpu, DType::f32, s.batch, splits * s.lq * (s.dv + 2)));
  if (per_slice < 1) {
    throw std::invalid_argument(
        fmt::format("attention: one head ({} bytes) exceeds the storage binding limit of {} bytes",
                    static_cast<uint64_t>(per_batch) * device_element_size(q.dtype()),
                    limits.maxStorageBufferBindingSize));
  }
  const int64_t row_blocks = (s.lq + rows_per_group - 1) / rows_per_group;
  for (int64_t begin = 0; begin < s.batch; begin += per_slice) {
    const int64_t end = std::min(s.batch, begin + per_slice);
    const bool whole = begin == 0 && end == s.batch;
    const Tensor qs = whole ? q : q.slice_outer(begin, end), ks = whole ? k : k.slice_outer(begin, end),
                 vs = whole ? v : v.slice_outer(begin, end), os = whole ? out : out.slice_outer(begin, end);
    // Split keys: the slices' partials [splits, rows, Dv + 2] in a temporary, merged into os.
    const int64_t rows = (end - begin) * s.lq;
    const Tensor partials = split ? Tensor::empty(pool, DType::f32, {splits * rows * (s.dv + 2)}) : Tensor();
    const Tensor& target = split ? partials : os;
    const AttentionUniforms u{static_cast<uint32_t>(end - begin), static_cast<uint32_t>(s.lq),
                              static_cast<uint32_t>(s.lk),        options.scale,
                              qs.element_offset(kc.gpu),          ks.element_offset(kc.gpu),
                              vs.element_offset(kc.gpu),          target.element_offset(kc.gpu),
                              static_cast<uint32_t>(splits),      static_cast<uint32_t>(keys_per_split)};
    recorder.dispatch(
        pipeline, {qs.binding(kc.gpu), ks.binding(kc.gpu), vs.binding(kc.gpu), target.binding(kc.gpu)}, &u,
        sizeof(u), gpu::split_workgroups(static_cast<uint64_t>((end - begin) * splits * row_blocks), limits),
        "Attention");
    if (!split) continue;
    const CombineUniforms c{static_cast<uint32_t>(rows), static_cast<uint32_t>(splits),
                            partials.element_offset(kc.gpu), os.element_offset(kc.gpu)};
    const uint64_t elements = static_cast<uint64_t>(rows * s.dv);
    recorder.dispatch(*combine, {partials.binding(kc.gpu), os.binding(kc.gpu)}, &c, sizeof(c),
                      gpu::split_workgroups((elements + 255) / 256, limits), "Attention combine");
  }
}

}  // namespace onda::kernels
