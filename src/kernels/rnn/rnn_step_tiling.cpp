#include "kernels/rnn/rnn_step_tiling.h"

#include <algorithm>

namespace onda::kernels::rnn {
namespace {

constexpr uint32_t kInvocations = 256;

uint32_t next_pow2(int64_t v) {
  uint32_t p = 1;
  while (p < v && p < (1u << 30)) p <<= 1;
  return p;
}

}  // namespace

StepTiling choose_step_tiling(int64_t batch, int64_t hidden, int64_t directions, uint32_t gates,
                              uint64_t max_workgroup_bytes, uint32_t max_invocations, int64_t target_workgroups) {
  StepTiling t;
  // Measured on the H200 (bench_rnn --sweep): a step is a chain of memory latencies, so more
  // workgroups in flight beat more reuse of each R^T load: one batch row per workgroup, two from
  // 384 rows on (SCNet's 864-row LSTMs).
  t.batch_tile = batch >= 384 ? 2 : 1;
  const int64_t batch_tiles = (batch + t.batch_tile - 1) / t.batch_tile;
  // Widest tile (64, 32, ..., 4 units, no wider than the hidden size) that still gives the target.
  t.units = std::min<uint32_t>(64, std::max<uint32_t>(4, next_pow2(hidden)));
  while (t.units > 4 && ((hidden + t.units - 1) / t.units) * batch_tiles * directions < target_workgroups) t.units /= 2;
  uint32_t invocations = kInvocations;  // a power of two, like KS and JT
  while (invocations > 64 && invocations > max_invocations) invocations /= 2;
  // K slices fill the workgroup, but each keeps at least 2 entries of K (a slice of one entry
  // spends more on the reduction than on the products).
  t.k_split = std::max<uint32_t>(1, std::min<uint32_t>(invocations / t.units, next_pow2(hidden) / 2));
  // Chunks of 64 up to H = 128, else 256 (the sweep's better choice on each side).
  t.k_chunk = hidden <= 128 ? 64 : 256;
  while (t.workgroup_bytes(gates) > max_workgroup_bytes && (t.k_split > 1 || t.k_chunk > 64)) {
    if (t.k_chunk > 64) t.k_chunk /= 2;
    else t.k_split /= 2;
  }
  return t;
}

}  // namespace onda::kernels::rnn
