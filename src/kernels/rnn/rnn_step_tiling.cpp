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
                              uint64_t max_workgroup_bytes, uint32_t max_invocations, int64_t target_workgroups) {
  StepTiling t;
  // Measured on the H200 (bench_rnn --sweep, two runs): a step is a chain of memory latencies.
  // Where 64-unit tiles of 4 batch rows already give ~128 workgroups (MP-SENet's GRUs, SCNet's
  // LSTMs) they are as fast as anything narrower; below that (batch <= 64, or 1-2 rows with a large
  // hidden size) one row per workgroup and unit tiles narrowed until the grid has
  // target_workgroups (LSTM H512 B1: 128 workgroups of 4 units x 64 K slices, 2x faster than the
  // 8 workgroups of 64 units).
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
    if (t.k_chunk > 64) t.k_chunk /= 2;
    else t.k_split /= 2;
  }
  return t;
}

TiledStepTiling choose_tiled_step_tiling(int64_t batch, int64_t hidden, int64_t directions, uint32_t gates,
                                         uint64_t max_workgroup_bytes, uint32_t max_invocations,
                                         int64_t target_workgroups) {
  // Blind first cut (no GPU here): the R^T traffic of a step is (B / rows) x R, the FMAs per
  // invocation TM x TU x G per K entry, and the grid should cover the 132 multiprocessors.
  TiledStepTiling t;
  if (batch >= 256) {
    // 8 rows per invocation: each R^T entry loaded from workgroup memory feeds 8 FMAs, which
    // lifts the product off the workgroup-memory bound of 4 rows (SCNet's B = 433 / 864 steps).
    t = TiledStepTiling{128, 8, 16, 1, 32, 1};
  }
  const auto grid = [&] {
    return (hidden + t.units - 1) / t.units * ((batch + t.rows - 1) / t.rows) * directions;
  };
  while (t.rows > 16 && grid() < target_workgroups) t.rows /= 2;
  while (t.units > 8 && grid() < target_workgroups) {
    t.units /= 2;
    t.thread_units = t.units >= 32 ? 2 : 1;
  }
  // Small hidden sizes: no unit tile wider than the hidden size needs.
  while (t.units > 8 && t.units / 2 >= hidden) {
    t.units /= 2;
    t.thread_units = t.units >= 32 ? 2 : 1;
  }
  // Small row tiles do little work per K tile: halve the tiles' dependent L2 round trips.
  if (t.rows <= 32) t.k_tile = 64;
  while (t.k_split < 4 && t.workgroup_size() * 2 <= 256 && t.k_split * 2 <= t.k_tile) t.k_split *= 2;
  while (t.workgroup_size() > max_invocations && t.k_split > 1) t.k_split /= 2;
  while (t.workgroup_size() > max_invocations && t.rows > t.thread_rows) t.rows /= 2;
  while (t.workgroup_bytes(gates) > max_workgroup_bytes && (t.k_split > 1 || t.k_tile > 8)) {
    if (t.k_split > 1) t.k_split /= 2;
    else t.k_tile /= 2;
  }
  return t;
}

}  // namespace onda::kernels::rnn
