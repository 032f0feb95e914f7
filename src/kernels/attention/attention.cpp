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

}  // namespace

void record_attention(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& q,
                      const Tensor& k, const Tensor& v, const AttentionOptions& options, const Tensor& out) {
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
  TemplateValues values = {{"Q_ACCESS", tensor_access("q", 0, q.dtype(), false)},
                           {"K_ACCESS", tensor_access("k", 1, k.dtype(), false)},
                           {"V_ACCESS", tensor_access("v", 2, v.dtype(), false)},
                           {"O_ACCESS", tensor_access("o", 3, out.dtype(), true)},
                           {"D", std::to_string(s.d)},
                           {"DV", std::to_string(s.dv)},
                           {"D4", std::to_string(d4)},
                           {"DV4", std::to_string(dv4)},
                           {"BR", std::to_string(kRowsPerWorkgroup)},
                           {"BC", std::to_string(bc)},
                           {"K_TILE", std::to_string(bc * d4)},
                           {"V_TILE", std::to_string(bc * dv4)},
                           {"K_TRANSPOSED", options.k_transposed ? "1" : "0"}};
  const auto& pipeline = shader_pipeline(kc.pipelines, "attention/attention.wgsl", values, "attention");

  // Slices of the batch (batch * heads) small enough that each tensor fits one storage binding.
  const int64_t per_batch = std::max({s.lq * s.d, s.lk * s.d, s.lk * s.dv, s.lq * s.dv});
  const int64_t per_slice = rows_per_window(kc.gpu, q.dtype(), s.batch, per_batch);
  if (per_slice < 1) {
    throw std::invalid_argument(
        fmt::format("attention: one head ({} bytes) exceeds the storage binding limit of {} bytes",
                    static_cast<uint64_t>(per_batch) * device_element_size(q.dtype()),
                    limits.maxStorageBufferBindingSize));
  }
  const int64_t row_blocks = (s.lq + kRowsPerWorkgroup - 1) / kRowsPerWorkgroup;
  for (int64_t begin = 0; begin < s.batch; begin += per_slice) {
    const int64_t end = std::min(s.batch, begin + per_slice);
    const bool whole = begin == 0 && end == s.batch;
    const Tensor qs = whole ? q : q.slice_outer(begin, end), ks = whole ? k : k.slice_outer(begin, end),
                 vs = whole ? v : v.slice_outer(begin, end), os = whole ? out : out.slice_outer(begin, end);
    struct {
      uint32_t batch, lq, lk;
      float scale;
      uint32_t q_offset, k_offset, v_offset, o_offset;
    } u{static_cast<uint32_t>(end - begin), static_cast<uint32_t>(s.lq),
        static_cast<uint32_t>(s.lk),        options.scale,
        qs.element_offset(kc.gpu),          ks.element_offset(kc.gpu),
        vs.element_offset(kc.gpu),          os.element_offset(kc.gpu)};
    recorder.dispatch(
        pipeline, {qs.binding(kc.gpu), ks.binding(kc.gpu), vs.binding(kc.gpu), os.binding(kc.gpu)}, &u,
        sizeof(u), gpu::split_workgroups(static_cast<uint64_t>((end - begin) * row_blocks), limits),
        "Attention");
  }
}

}  // namespace onda::kernels
