// Fused scaled dot-product attention, out = softmax(scale * Q K^T) V over the last axis, in one
// pass over the keys (flash attention: Dao et al. 2022, with Milakov & Gimelshein's online softmax):
// the [.., Lq, Lk] scores never reach memory.
//
// q [B, Lq, D], k [B, Lk, D] (or k^T [B, D, Lk] with `k_transposed`), v [B, Lk, Dv], out [B, Lq, Dv];
// B is batch * heads. Every tensor f32 or f16, all of one dtype; the math is f32.
#pragma once
#include <cstdint>
#include <vector>

#include "gpu/buffer_pool.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// Head dims up to this are held in registers: an invocation keeps one row's query and accumulator,
// or half of each of two rows' in a pair (attention_lanes).
constexpr int64_t kAttentionMaxHeadDim = 256;

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

// Invocations that share a group of as many query rows, each holding its share of the head dims
// (attention.wgsl's LANES): 2 on a device with subgroups of one known power-of-two size >= 4 for head
// dims >= 8, else 1. On an H100 (2026-12-07) two lanes took HTDemucs' attentions from 6.21 to 5.57 ms
// and BS-RoFormer's from 73.8 to 68.5; four lanes gained nothing over one (docs/benchmark-log.md).
int64_t attention_lanes(const KernelContext& kc, int64_t d, int64_t dv);

// Where an operand's logical [B, rows, cols] lies in its tensor: element (b, r, c) at the tensor's
// first element + b * batch + r * row + c * col. Besides a contiguous [B, rows, cols] tensor, a
// transposed view of a rank-3 tensor: K^T read as K, and the Transposes that PyTorch's
// MultiheadAttention export puts around the attention, folded into the node
// (graph/fold_attention_transposes.h) so that they move no data.
struct AttentionOperand {
  Tensor tensor;
  Shape shape;  // logical [B, rows, cols]
  int64_t batch = 0, row = 0, col = 0;

  static AttentionOperand contiguous(const Tensor& t);  // t is [B, rows, cols]
  // The logical operand is Transpose(t, perm): its dim i is t's dim perm[i] (t rank 3).
  static AttentionOperand transposed(const Tensor& t, const std::vector<int64_t>& perm);
  bool is_contiguous() const { return batch == shape[1] * shape[2] && row == shape[2] && col == 1; }
};

// Records the dispatches (with split keys, a second dispatch merging the slices, whose partials are a
// temporary from `pool`). Contiguous operands larger than one storage binding run in slices of B,
// each its own dispatch; strided ones must fit one binding (attention_fits_one_binding; the caller
// copies them out otherwise). Throws std::invalid_argument for mismatched shapes or dtypes, or a head
// dim above kAttentionMaxHeadDim or too large for the device's workgroup memory.
void record_attention(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                      const AttentionOperand& q, const AttentionOperand& k, const AttentionOperand& v,
                      float scale, const AttentionOperand& out);

// Contiguous q [B, Lq, D], k [B, Lk, D] (or K^T [B, D, Lk] with `k_transposed`), v, out.
void record_attention(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                      const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& options,
                      const Tensor& out);

// Whether every operand's tensor fits one storage binding (strided operands must).
bool attention_fits_one_binding(const KernelContext& kc, const AttentionOperand& q, const AttentionOperand& k,
                                const AttentionOperand& v, const AttentionOperand& out);

}  // namespace onda::kernels
