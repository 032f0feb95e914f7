#include "kernels/attention/attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/common/binding_window.h"
#include "kernels/common/tensor_access.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

// Query rows per workgroup, as many invocations (one row each, or two per pair of invocations): 128
// against 64, 256 and 512 rows, and key tiles of 16 against 32, measured in docs/benchmark-log.md.
// 128-row workgroups ran a row ~1.23x faster than 64-row ones (HTDemucs' attentions 5.24 -> 4.25 ms);
// short query sequences take 64 where 128 would leave more of its rows empty than that gains
// (BS-RoFormer's 62-row frequency attentions: 128 leaves 66 of 128 rows empty).
constexpr uint32_t kRowsPerWorkgroup = 128;
constexpr uint32_t kRowsPerSmallWorkgroup = 64;

uint32_t rows_per_workgroup(int64_t lq) {
  const auto padded = [lq](int64_t rows) { return (lq + rows - 1) / rows * rows; };
  // Cost ~ padded rows / speed per row; 1.23 in hundredths to stay in integers.
  return padded(kRowsPerSmallWorkgroup) * 123 <= padded(kRowsPerWorkgroup) * 100 ? kRowsPerSmallWorkgroup
                                                                                  : kRowsPerWorkgroup;
}

// Keys per tile at most: more keys per barrier, as long as K and V tiles fit in workgroup memory.
constexpr uint32_t kMaxKeysPerTile = 32;

struct AttentionShape {
  int64_t batch, lq, lk, d, dv;
};

AttentionShape checked_shape(const AttentionOperand& q, const AttentionOperand& k, const AttentionOperand& v,
                             const AttentionOperand& out) {
  for (const AttentionOperand* t : {&q, &k, &v, &out}) {
    if (t->shape.size() != 3)
      throw std::invalid_argument("attention: q, k, v and out must be 3-D [batch, rows, head dim]");
    if (t->tensor.dtype() != q.tensor.dtype())
      throw std::invalid_argument("attention: q, k, v and out must share one dtype");
  }
  if (q.tensor.dtype() != DType::f32 && q.tensor.dtype() != DType::f16)
    throw std::invalid_argument("attention: f32 or f16 required");
  AttentionShape s{q.shape[0], q.shape[1], v.shape[1], q.shape[2], v.shape[2]};
  if (k.shape != Shape{s.batch, s.lk, s.d} || v.shape[0] != s.batch || out.shape != Shape{s.batch, s.lq, s.dv}) {
    throw std::invalid_argument(fmt::format("attention: shapes q {} k {} v {} out {} do not match",
                                            shape_string(q.shape), shape_string(k.shape), shape_string(v.shape),
                                            shape_string(out.shape)));
  }
  if (s.d < 1 || s.dv < 1 || s.d > kAttentionMaxHeadDim || s.dv > kAttentionMaxHeadDim) {
    throw std::invalid_argument(
        fmt::format("attention: head dims {} and {} must be in [1, {}]", s.d, s.dv, kAttentionMaxHeadDim));
  }
  return s;
}

uint32_t u32(int64_t v) {
  if (v < 0 || v > 0xFFFFFFFFll) throw std::invalid_argument(fmt::format("attention: stride {} out of range", v));
  return static_cast<uint32_t>(v);
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
  uint32_t strides[12];  // batch, row, col of q, k, v, o
};

struct CombineUniforms {
  uint32_t rows, splits, p_offset, o_offset;
  uint32_t lq, o_batch, o_row, o_col;
};

}  // namespace

int64_t attention_key_splits(const KernelContext& kc, int64_t rows, int64_t lk) {
  if (kc.tuning.attention.key_splits > 0)
    return std::clamp<int64_t>(kc.tuning.attention.key_splits, 1, std::max<int64_t>(lk, 1));
  if (rows <= 0 || rows >= kAttentionBusyRows) return 1;
  const int64_t wanted = (kAttentionBusyRows + rows - 1) / rows;
  return std::clamp<int64_t>(wanted, 1, std::max<int64_t>(lk / kAttentionMinSliceKeys, 1));
}

int64_t attention_lanes(const KernelContext& kc, int64_t d, int64_t dv) {
  const auto& gpu = kc.gpu;
  // The two lanes of a row pair must be neighbouring lanes of one subgroup: subgroups of one
  // power-of-two size of at least 4 (the shuffle's partner is lane ^ 1).
  const uint32_t size = gpu.subgroup_min_size();
  const bool subgroups = gpu.has(gpu::Feature::Subgroups) && size >= 4 && (size & (size - 1)) == 0;
  // Each lane keeps at least one vec4 of both head dims.
  return subgroups && std::min(d, dv) >= 8 ? 2 : 1;
}

AttentionOperand AttentionOperand::contiguous(const Tensor& t) {
  if (t.rank() != 3) throw std::invalid_argument("attention: operands must be 3-D [batch, rows, head dim]");
  const Shape& s = t.shape();
  return {t, s, s[1] * s[2], s[2], 1};
}

AttentionOperand AttentionOperand::transposed(const Tensor& t, const std::vector<int64_t>& perm) {
  if (t.rank() != 3 || perm.size() != 3)
    throw std::invalid_argument("attention: a transposed operand needs a 3-D tensor and a 3-D permutation");
  const Shape& s = t.shape();
  const int64_t strides[3] = {s[1] * s[2], s[2], 1};
  AttentionOperand a{t, Shape(3), 0, 0, 0};
  int64_t* out_strides[3] = {&a.batch, &a.row, &a.col};
  bool seen[3] = {false, false, false};
  for (size_t i = 0; i < 3; ++i) {
    if (perm[i] < 0 || perm[i] > 2 || seen[perm[i]])
      throw std::invalid_argument("attention: a transposed operand's permutation must be one of 0, 1, 2");
    seen[perm[i]] = true;
    a.shape[i] = s[static_cast<size_t>(perm[i])];
    *out_strides[i] = strides[perm[i]];
  }
  return a;
}

bool attention_fits_one_binding(const KernelContext& kc, const AttentionOperand& q, const AttentionOperand& k,
                                const AttentionOperand& v, const AttentionOperand& out) {
  for (const AttentionOperand* t : {&q, &k, &v, &out})
    if (!fits_one_binding(kc.gpu, t->tensor)) return false;
  return true;
}

void record_attention(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                      const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& options,
                      const Tensor& out) {
  record_attention(kc, recorder, pool, AttentionOperand::contiguous(q),
                   options.k_transposed ? AttentionOperand::transposed(k, {0, 2, 1}) : AttentionOperand::contiguous(k),
                   AttentionOperand::contiguous(v), options.scale, AttentionOperand::contiguous(out));
}

void record_attention(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                      const AttentionOperand& q, const AttentionOperand& k, const AttentionOperand& v,
                      float scale, const AttentionOperand& out) {
  const AttentionShape s = checked_shape(q, k, v, out);
  if (out.tensor.numel() == 0) return;
  if (s.lk == 0) throw std::invalid_argument("attention: no keys (Lk = 0): the softmax is undefined");
  const int64_t lanes = attention_lanes(kc, s.d, s.dv);
  // Head dims in vec4s, padded to a multiple of the lanes that share a row (attention.wgsl).
  const int64_t d4 = ((s.d + 3) / 4 + lanes - 1) / lanes * lanes, dv4 = ((s.dv + 3) / 4 + lanes - 1) / lanes * lanes;
  const wgpu::Limits& limits = kc.gpu.limits();
  const uint32_t bc = keys_per_tile(limits, d4, dv4);
  const uint32_t rows_per_group = rows_per_workgroup(s.lq);
  if (bc < 4 || limits.maxComputeInvocationsPerWorkgroup < rows_per_group) {  // 4 keys a step
    throw std::invalid_argument(
        fmt::format("attention: head dims {} and {} need more workgroup memory than the "
                    "device's {} bytes",
                    s.d, s.dv, limits.maxComputeWorkgroupStorageSize));
  }
  const bool fits = attention_fits_one_binding(kc, q, k, v, out);
  // Strided operands are not sliced by batch (a slice of a transposed view is no window of its
  // tensor); strided K^T alone is, as before: its slices of B are windows.
  const bool k_transposed = k.row == 1 && k.col == s.lk && k.batch == s.lk * s.d;
  const bool sliceable = q.is_contiguous() && v.is_contiguous() && out.is_contiguous() &&
                         (k.is_contiguous() || k_transposed);
  if (!fits && !sliceable)
    throw std::invalid_argument("attention: strided operands larger than one storage binding");
  // Slices of the keys (attention_key_splits), each ceil(Lk / splits) long, none empty.
  const int64_t wanted_splits = attention_key_splits(kc, s.batch * s.lq, s.lk);
  const int64_t keys_per_split = (s.lk + wanted_splits - 1) / wanted_splits;
  const int64_t splits = (s.lk + keys_per_split - 1) / keys_per_split;
  const bool split = splits > 1;
  const DType dtype = q.tensor.dtype();
  // Keys staged along the keys where k is contiguous along them (K^T), else along the head dim.
  const bool keys_along_rows = k.row == 1 && k.col != 1;
  TemplateValues values = {{"Q_ACCESS", tensor_access("q", 0, dtype, false)},
                           {"K_ACCESS", tensor_access("k", 1, dtype, false)},
                           {"V_ACCESS", tensor_access("v", 2, dtype, false)},
                           {"O_ACCESS", tensor_access("o", 3, split ? DType::f32 : dtype, true)},
                           {"SPLIT", split ? "1" : "0"},
                           {"D", std::to_string(s.d)},
                           {"DV", std::to_string(s.dv)},
                           {"DV4", std::to_string(dv4)},
                           {"K_TRANSPOSED", keys_along_rows ? "1" : "0"},
                           {"LANES", std::to_string(lanes)},
                           {"DS4", std::to_string(d4 / lanes)},
                           {"DVS4", std::to_string(dv4 / lanes)},
                           {"SUBGROUPS", lanes > 1 ? "1" : "0"}};
  values.insert({{"D4", std::to_string(d4)},
                 {"BR", std::to_string(rows_per_group)},
                 {"BC", std::to_string(bc)},
                 {"K_TILE", std::to_string(bc * d4)},
                 {"V_TILE", std::to_string(bc * dv4)}});
  const auto& pipeline = shader_pipeline(kc.pipelines, "attention/attention.wgsl", values, "attention");
  const wgpu::ComputePipeline* combine =
      split ? &shader_pipeline(kc.pipelines, "attention/attention_combine.wgsl",
                               {{"P_ACCESS", tensor_access("p", 0, DType::f32, false)},
                                {"O_ACCESS", tensor_access("o", 1, dtype, true)},
                                {"DV", std::to_string(s.dv)}},
                               "attention combine")
            : nullptr;

  // Slices of the batch (batch * heads) small enough that each tensor, and the partials of split
  // keys, fit one storage binding (one slice for operands that fit as they are).
  const int64_t per_batch = std::max({s.lq * s.d, s.lk * s.d, s.lk * s.dv, s.lq * s.dv});
  int64_t per_slice = fits ? s.batch : rows_per_window(kc.gpu, dtype, s.batch, per_batch);
  if (split)
    per_slice = std::min(per_slice, rows_per_window(kc.gpu, DType::f32, s.batch, splits * s.lq * (s.dv + 2)));
  if (per_slice < 1) {
    throw std::invalid_argument(
        fmt::format("attention: one head ({} bytes) exceeds the storage binding limit of {} bytes",
                    static_cast<uint64_t>(per_batch) * device_element_size(dtype), limits.maxStorageBufferBindingSize));
  }
  if (per_slice < s.batch && !sliceable)
    throw std::invalid_argument("attention: strided operands whose split-key partials exceed one storage binding");
  const int64_t row_blocks = (s.lq + rows_per_group - 1) / rows_per_group;
  for (int64_t begin = 0; begin < s.batch; begin += per_slice) {
    const int64_t end = std::min(s.batch, begin + per_slice);
    const bool whole = begin == 0 && end == s.batch;
    auto part = [&](const AttentionOperand& a) { return whole ? a.tensor : a.tensor.slice_outer(begin, end); };
    const Tensor qs = part(q), ks = part(k), vs = part(v), os = part(out);
    // Split keys: the slices' partials [splits, rows, Dv + 2] in a temporary, merged into os.
    const int64_t rows = (end - begin) * s.lq;
    const Tensor partials = split ? Tensor::empty(pool, DType::f32, {splits * rows * (s.dv + 2)}) : Tensor();
    const Tensor& target = split ? partials : os;
    AttentionUniforms u{static_cast<uint32_t>(end - begin), static_cast<uint32_t>(s.lq),
                        static_cast<uint32_t>(s.lk),        scale,
                        qs.element_offset(kc.gpu),          ks.element_offset(kc.gpu),
                        vs.element_offset(kc.gpu),          target.element_offset(kc.gpu),
                        static_cast<uint32_t>(splits),      static_cast<uint32_t>(keys_per_split),
                        0,
                        0,
                        {}};
    const AttentionOperand* operands[4] = {&q, &k, &v, &out};
    for (int i = 0; i < 4; ++i) {
      u.strides[3 * i] = u32(operands[i]->batch);
      u.strides[3 * i + 1] = u32(operands[i]->row);
      u.strides[3 * i + 2] = u32(operands[i]->col);
    }
    recorder.dispatch(
        pipeline, {qs.binding(kc.gpu), ks.binding(kc.gpu), vs.binding(kc.gpu), target.binding(kc.gpu)}, &u,
        sizeof(u), gpu::split_workgroups(static_cast<uint64_t>((end - begin) * splits * row_blocks), limits),
        "Attention");
    if (!split) continue;
    const CombineUniforms c{static_cast<uint32_t>(rows), static_cast<uint32_t>(splits),
                            partials.element_offset(kc.gpu), os.element_offset(kc.gpu),
                            static_cast<uint32_t>(s.lq), u32(out.batch), u32(out.row), u32(out.col)};
    const uint64_t elements = static_cast<uint64_t>(rows * s.dv);
    recorder.dispatch(*combine, {partials.binding(kc.gpu), os.binding(kc.gpu)}, &c, sizeof(c),
                      gpu::split_workgroups((elements + 255) / 256, limits), "Attention combine");
  }
}

}  // namespace onda::kernels
