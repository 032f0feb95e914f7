// Fused scaled dot-product attention, out = softmax(scale * Q K^T) V over the last axis, in one
// pass over the keys (flash attention: Dao et al. 2022, with Milakov & Gimelshein's online softmax):
// the [.., Lq, Lk] scores never reach memory.
//
// q [B, Lq, D], k [B, Lk, D] (or k^T [B, D, Lk] with `k_transposed`), v [B, Lk, Dv], out [B, Lq, Dv];
// B is batch * heads. Every tensor f32 or f16, all of one dtype; the math is f32.
#pragma once
#include <cstdint>

#include "gpu/buffer_pool.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// Head dims up to this are held in registers (one query row and its accumulator per invocation).
constexpr int64_t kAttentionMaxHeadDim = 256;
// Head dims up to this take the register-tiled kernel (attention_tiled.wgsl) where its workgroup
// memory fits (AttentionTuning::kernel chooses otherwise).
constexpr int64_t kAttentionTiledMaxHeadDim = 64;

struct AttentionOptions {
  float scale = 1.0f;         // multiplies the scores Q K^T before the softmax
  bool k_transposed = false;  // k holds K^T [B, D, Lk]
};

// Key slices per query row: kc.tuning.attention.key_splits where nonzero, else 1 when B x Lq rows keep
// the GPU busy (kAttentionBusyRows) and otherwise enough slices of at least kAttentionMinSliceKeys
// keys to reach that many (rows x slices); never more slices than keys.
constexpr int64_t kAttentionBusyRows = 65536;
constexpr int64_t kAttentionMinSliceKeys = 128;
int64_t attention_key_splits(const KernelContext& kc, int64_t rows, int64_t lk);

// Records the dispatches (one per slice of B when a tensor exceeds the storage binding limit; with
// split keys, a second dispatch merging the slices, whose partials are a temporary from `pool`).
// Throws std::invalid_argument for mismatched shapes or dtypes, or a head dim above
// kAttentionMaxHeadDim or too large for the device's workgroup memory.
void record_attention(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                      const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& options,
                      const Tensor& out);

}  // namespace onda::kernels
