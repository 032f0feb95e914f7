#include "kernels/rnn/rnn_step_tiling.h"

#include <algorithm>

namespace onda::kernels::rnn {
namespace {

constexpr uint32_t kInvocations = 256;
constexpr int64_t kWideTileWorkgroups = 128;

uint32_t next_pow2(int64_t v) {
  uint32_t p = 1;
  while (p < v && p < (1u << 30)) p <<= 1;
  return p;
}

}  // namespace

StepTiling choose_step_tiling(int64_t batch, int64_t hidden, int64_t directions, uint32_t gates,
                              uint64_t max_workgroup_bytes, uint32_t max_invocations,
                              int64_t target_workgroups) {
  StepTiling t;
  // From bench_rnn --sweep (docs/benchmark-log.md): a step is a chain of memory latencies. Where
  // 64-unit tiles of 4 batch rows already give ~128 workgroups (MP-SENet's GRUs, SCNet's LSTMs) they
  // are as fast as anything narrower; below that (batch <= 64, or 1-2 rows with a large hidden size)
  // one row per workgroup and unit tiles narrowed until the grid has target_workgroups (LSTM H512 B1:
  // 128 workgroups of 4 units x 64 K slices rather than 8 workgroups of 64 units).
  const auto grid = [&](uint32_t units, uint32_t rows) {
    return (hidden + units - 1) / units * ((batch + rows - 1) / rows) * directions;
  };
  t.units = std::min<uint32_t>(64, std::max<uint32_t>(4, next_pow2(hidden)));
  t.batch_tile = static_cast<uint32_t>(std::min<int64_t>(batch, 4));
  const bool wide = grid(t.units, t.batch_tile) >= std::min<int64_t>(target_workgroups, kWideTileWorkgroups);
  if (!wide) {
    t.batch_tile = 1;
    while (t.units > 4 && grid(t.units, 1) < target_workgroups) t.units /= 2;
  }
  uint32_t invocations = kInvocations;  // a power of two, like KS and JT
  while (invocations > 64 && invocations > max_invocations) invocations /= 2;
  // K slices fill the workgroup, but each keeps at least 2 entries of K (a slice of one entry
  // spends more on the reduction than on the products).
  t.k_split = std::max<uint32_t>(1, std::min<uint32_t>(invocations / t.units, next_pow2(hidden) / 2));
  // Chunks of 64, or 256 for narrow tiles with H > 128 (the sweep's better choices).
  t.k_chunk = !wide && hidden > 128 ? 256 : 64;
  while (t.workgroup_bytes(gates) > max_workgroup_bytes && (t.k_split > 1 || t.k_chunk > 64)) {
    if (t.k_chunk > 64)
      t.k_chunk /= 2;
    else
      t.k_split /= 2;
  }
  return t;
}

TiledStepTiling choose_tiled_step_tiling(int64_t batch, int64_t hidden, int64_t directions, uint32_t gates,
                                         uint64_t max_workgroup_bytes, uint32_t max_invocations,
                                         int64_t target_workgroups) {
  // From bench_rnn's variants (docs/benchmark-log.md): with a few hundred batch rows, 8 rows per
  // invocation and 128-row tiles cut the per-step R^T traffic most (SCNet's B = 433 / 864 band LSTMs,
  // ahead of the dot kernel); below that, 32-row tiles of 2 rows per invocation with K split in two
  // were the best or near it for every other shape (SCNet B = 85, MP-SENet B = 201 / 321). Tiles of 2
  // units per invocation were slower everywhere (register spills), so TU stays 1.
  (void)target_workgroups;
  (void)directions;
  TiledStepTiling t =
      batch >= 400 ? TiledStepTiling{128, 8, 16, 1, 32, 1} : TiledStepTiling{32, 2, 16, 1, 32, 2};
  // Small hidden sizes: no unit tile wider than the hidden size needs.
  while (t.units > 8 && t.units / 2 >= hidden) {
    t.units /= 2;
    t.thread_units = t.units >= 32 ? 2 : 1;
  }
  while (t.workgroup_size() > max_invocations && t.k_split > 1) t.k_split /= 2;
  while (t.workgroup_size() > max_invocations && t.rows > t.thread_rows) t.rows /= 2;
  while (t.workgroup_bytes(gates) > max_workgroup_bytes && (t.k_split > 1 || t.k_tile > 8)) {
    if (t.k_split > 1)
      t.k_split /= 2;
    else
      t.k_tile /= 2;
  }
  return t;
}

Vec4StepTiling choose_vec4_step_tiling(int64_t batch, uint64_t max_workgroup_bytes,
                                       uint32_t max_invocations) {
  // From bench_rnn --sweep (with the cell's flags compiled in; docs/benchmark-log.md), the best
  // tilings: 32 rows x 16 units at 4 x 1 per invocation with 2 K slices, K tiles of 16
  // for a few hundred rows (SCNet's B = 864 band LSTM: ahead of the GEMM step and of the GEMM core's
  // tile), and 32 rows x 32 units with K tiles of 32 for fewer (SCNet's B = 85 time LSTM: ahead of 32 x
  // 16 and of the tiled step).
  Vec4StepTiling t = batch >= kGemmStepMinBatch ? Vec4StepTiling{16, 8, 4, 1, 16, 2, true}
                                                : Vec4StepTiling{32, 8, 4, 1, 32, 2, true};
  while (t.workgroup_size() > max_invocations && t.k_split > 1) t.k_split /= 2;
  while (t.workgroup_size() > max_invocations && t.wg_y > 1) t.wg_y /= 2;
  while (t.workgroup_bytes() > max_workgroup_bytes && (t.k_split > 1 || t.k_tile > 4)) {
    if (t.k_split > 1)
      t.k_split /= 2;
    else
      t.k_tile /= 2;
  }
  return t;
}

RowSequenceTiling choose_row_sequence_tiling(int64_t batch, int64_t hidden, int64_t directions,
                                             uint32_t gates, uint64_t max_workgroup_bytes,
                                             uint32_t max_invocations) {
  // From bench_rnn's rows variants (docs/benchmark-log.md): the stream of R^T is latency-bound, so
  // what pays is loads in flight (vec4 units, K slices, blocks of 8 entries for GRU), not fewer
  // workgroups: one row per invocation was the best tiling on every shape where the kernel wins (2+
  // rows per invocation were several times slower), one row per workgroup too except H >= 256 with
  // 128+ rows (two row groups: faster for SCNet's B = 85 time LSTM).
  RowSequenceTiling t;
  t.unit_vector = hidden % 4 == 0 ? 4 : 1;
  t.thread_rows = 1;
  t.rows = hidden >= 256 && batch * directions >= 128 ? 2 : 1;
  t.k_split = 1;
  const int64_t workgroups = (batch + t.rows - 1) / t.rows * directions;
  const uint32_t invocations = std::min<uint32_t>(kRowSequenceMaxInvocations, max_invocations);
  while (t.rows > 1 &&
         (t.workgroup_size(hidden) > invocations || t.workgroup_bytes(hidden, gates) > max_workgroup_bytes)) {
    t.rows /= 2;
  }
  // K slices double while a slice keeps 16+ entries, the workgroup fits, and the grid stays under
  // ~96K invocations (MP-SENet: 8 slices for 202 workgroups, 4 for 642).
  while (t.slice_length(hidden) >= 32 && t.workgroup_size(hidden) * 2 <= invocations &&
         workgroups * t.workgroup_size(hidden) * 2 <= kRowSequenceMaxGridInvocations) {
    RowSequenceTiling c = t;
    c.k_split *= 2;
    if (c.workgroup_bytes(hidden, gates) > max_workgroup_bytes) break;
    t = c;
  }
  // Weights of 8 entries of K in flight where the registers allow (GRU: 12 accumulators + 96).
  t.k_block = t.accumulators(gates) + 8 * gates * t.unit_vector <= 128 ? 8 : 4;
  return t;
}

ResidentTiling choose_resident_tiling(int64_t batch, int64_t hidden, int64_t directions, uint32_t gates,
                                      uint32_t max_invocations) {
  ResidentTiling t;
  // KQ = 8 for LSTMs too where the grid is a few workgroups (occupancy does not matter) and H is small:
  // UVR's batch-1 biLSTMs measured faster with KQ 8 than with KQ 4.
  const bool few_small_rows = hidden <= 64 && batch * directions <= 16;
  t.slice_vectors = gates <= 3 || few_small_rows ? 8 : 4;
  while (t.workgroup_size(hidden) > max_invocations && t.slice_vectors < 16) t.slice_vectors *= 2;
  t.rows = 1;
  while ((batch + t.rows - 1) / t.rows * directions > kResidentTargetWorkgroups &&
         t.rows * 2 <= t.slices(hidden)) {
    t.rows *= 2;
  }
  return t;
}

std::vector<CooperativeTiling> cooperative_tiling_candidates(int64_t batch, int64_t hidden,
                                                             uint32_t max_invocations, uint32_t max_slices) {
  // (The gate count does not enter: R^T takes G * KQ * 4 registers per invocation, 128 at most.)
  std::vector<CooperativeTiling> out;
  for (uint32_t kq : {8u, 4u}) {
    CooperativeTiling t;
    t.slice_vectors = kq;
    while (max_slices > 0 && t.slices(hidden) > max_slices && t.slice_vectors < 16) t.slice_vectors *= 2;
    const uint32_t slices = t.slices(hidden);
    const uint64_t row_bytes = 16ull * slices * t.slice_vectors;
    const int64_t max_rows = std::max<int64_t>(1, std::min<int64_t>(slices, (16 * 1024) / row_bytes));
    const int64_t blocks = (std::max<int64_t>(batch, 1) + max_rows - 1) / max_rows;
    t.rows = static_cast<uint32_t>((std::max<int64_t>(batch, 1) + blocks - 1) / blocks);  // balanced blocks
    for (uint32_t invocations : {256u, 128u}) {
      t.units = std::max<uint32_t>(1, std::min(invocations, max_invocations) / slices);
      while (t.units > 1 && t.units / 2 >= hidden) t.units /= 2;
      // Distinct tilings only (KQ = 4 may have been doubled into KQ = 8).
      const bool seen = std::any_of(out.begin(), out.end(), [&](const CooperativeTiling& o) {
        return o.units == t.units && o.rows == t.rows && o.slice_vectors == t.slice_vectors;
      });
      if (!seen) out.push_back(t);
    }
  }
  return out;
}

}  // namespace onda::kernels::rnn
