// How rnn_step.wgsl splits one timestep over workgroups. A workgroup computes JT hidden units (all
// gates of the product) for BT batch rows of one direction, with KS invocations per unit splitting
// the K = hidden_size dot products; grid (ceil(H / JT), ceil(B / BT), D).
//
// Each step is one short dependent dispatch whose time is a chain of memory latencies (a few times
// the dispatch floor on a large GPU), so the tiling wants many workgroups in flight: 64-unit tiles of 4 rows
// where they give ~128 workgroups, else one row per workgroup and unit tiles narrowed (64 down to 4, with
// more K slices) until the grid has ~512 workgroups: LSTM H512 B1 gets 128 workgroups of 4 units x 64 K
// slices instead of 8 of 64 units.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace onda::kernels::rnn {

struct StepTiling {
  uint32_t units = 64;      // JT: hidden units per workgroup
  uint32_t k_split = 4;     // KS: invocations per hidden unit (workgroup size JT * KS), a power of two
  uint32_t batch_tile = 4;  // BT: batch rows per workgroup
  uint32_t k_chunk = 64;    // KC: source entries staged in workgroup memory at a time

  uint32_t workgroup_size() const { return units * k_split; }
  // Workgroup memory of rnn_step.wgsl: the staged source rows and the partial sums of the slices.
  uint64_t workgroup_bytes(uint32_t gates) const {
    const uint64_t partials = k_split > 1 ? uint64_t{k_split} * gates * batch_tile * units : 0;
    return 4ull * (uint64_t{batch_tile} * k_chunk + partials);
  }
};

// Workgroups a step should have on a GPU (the H200 has 132 multiprocessors). A CPU adapter runs
// workgroups on a few cores, where narrow tiles only add reduction work: target 1 there.
// 512: the best of a bench_rnn --sweep for MP-SENet's GRU, the H128 B64 and the small-batch LSTMs.
constexpr int64_t kGpuTargetWorkgroups = 512;

// `gates`: gates multiplied in the dispatch (LSTM 4, GRU 3 / 2 / 1, RNN 1). Unit tiles narrow
// (64 down to 4) until the grid has `target_workgroups`. The tiling fits `max_workgroup_bytes` and
// `max_invocations` (at least 64 each way is assumed: WebGPU's minimum limits are 16 KiB and 256).
StepTiling choose_step_tiling(int64_t batch, int64_t hidden, int64_t directions, uint32_t gates,
                              uint64_t max_workgroup_bytes, uint32_t max_invocations,
                              int64_t target_workgroups = kGpuTargetWorkgroups);

// The register-tiled step kernel (rnn_step_tiled.wgsl) for batches where H_prev R^T is a real GEMM:
// a workgroup owns `rows` batch rows x `units` hidden units (all gates), reads its R^T slice once
// per step (K tiles of `k_tile` through workgroup memory, the next tile prefetched into registers),
// and each invocation accumulates thread_rows x thread_units x gates products; `k_split` invocations
// may share each K tile (partial sums meet in workgroup memory). Grid (ceil(H / units),
// ceil(B / rows), D).
struct TiledStepTiling {
  uint32_t rows = 64;         // BM
  uint32_t thread_rows = 4;   // TM (divides BM)
  uint32_t units = 32;        // BU
  uint32_t thread_units = 2;  // TU (divides BU)
  uint32_t k_tile = 32;       // KT
  uint32_t k_split = 1;       // KS

  // Workgroup row of the staged source: padded against bank conflicts, 16-byte aligned when the
  // kernel reads it as vec4 (k_tile a multiple of 4 k_split).
  uint32_t padded_k_tile() const { return k_tile % (4 * k_split) == 0 ? k_tile + 4 : k_tile + 1; }
  uint32_t base_invocations() const { return (units / thread_units) * (rows / thread_rows); }
  uint32_t workgroup_size() const { return base_invocations() * k_split; }
  uint64_t workgroup_bytes(uint32_t gates) const {
    const uint64_t partials = uint64_t{k_split - 1} * thread_units * gates * thread_rows * base_invocations();
    return 4ull * (uint64_t{rows} * padded_k_tile() + uint64_t{k_tile} * gates * units + partials);
  }
  bool well_formed() const {
    return rows > 0 && thread_rows > 0 && units > 0 && thread_units > 0 && k_tile > 0 && k_split > 0 &&
           rows % thread_rows == 0 && units % thread_units == 0 && k_tile % k_split == 0;
  }
};

// Batches from this size up use the tiled kernel on GPUs (StepKernel::automatic); below, the dot-product
// kernel with its narrow unit tiles and K slices (rnn_step_tiling above) spreads the work better.
constexpr int64_t kTiledMinBatch = 16;
// Batches from this size up run the GEMM step on GPUs (StepKernel::gemm): the product is then a real
// GEMM (SCNet's band LSTMs, B = 433-864) that the GEMM core runs faster than the fused tiled step.
constexpr int64_t kGemmStepMinBatch = 256;
// On CPU adapters (lavapipe) the automatic choice is the resident kernel where R^T fits
// (kResidentMaxWeightBytes, any grid), else the GEMM step from this batch, else the dot kernel; the
// tiled and vec4 steps, staged through workgroup memory behind barriers, ran slowest there
// (docs/benchmark-log.md, thirteenth session).
constexpr int64_t kCpuGemmStepMinBatch = 16;
// Workgroups the tiled step aims for: one per multiprocessor of the H200 (132).
constexpr int64_t kTiledTargetWorkgroups = 132;

// Starts from 64 rows x 32 units (TM 4, TU 2: 32 LSTM accumulators per invocation) and halves the
// row tile (down to 16), then the unit tile (down to 8, TU 1) until the grid has
// `target_workgroups`; then K slices (up to 4) bring a workgroup to ~256 invocations. Fits
// `max_workgroup_bytes` and `max_invocations` (WebGPU's minimum limits assumed at least).
TiledStepTiling choose_tiled_step_tiling(int64_t batch, int64_t hidden, int64_t directions, uint32_t gates,
                                         uint64_t max_workgroup_bytes, uint32_t max_invocations,
                                         int64_t target_workgroups = kTiledTargetWorkgroups);

// The vec4 step kernel (rnn_step_vec4.wgsl, StepKernel::vec4): the GEMM core's tile with the cell in
// its epilogue. Invocation (tx, ty, ks) owns thread_rows rows x thread_units units, one vec4
// accumulator per (row, unit) holding the unit's gates, over K slice ks of `k_split`; a workgroup owns
// rows() = thread_rows * wg_y rows x units() = thread_units * wg_x units, staging K tiles of `k_tile`
// entries. Grid (ceil(H / units()), ceil(B / rows()), D).
struct Vec4StepTiling {
  uint32_t wg_x = 16;          // invocations along units
  uint32_t wg_y = 16;          // invocations along rows
  uint32_t thread_rows = 8;    // TM: a multiple of 4 (the staged rows are read as vec4s)
  uint32_t thread_units = 1;   // NV
  uint32_t k_tile = 16;        // BK
  uint32_t k_split = 1;        // KS (divides BK)
  bool prefetch = true;        // the next K tile loaded into registers during the product
  bool double_buffer = false;  // with prefetch: two copies of the staged tiles, one barrier per K tile
  // Every step in one dispatch, h traded through an exchange buffer (rnn_exchange.wgsl); the grid must
  // be resident at once and the projection not chunked. Opt-in (not measured on a GPU yet).
  bool persistent = false;

  uint32_t rows() const { return thread_rows * wg_y; }
  uint32_t units() const { return thread_units * wg_x; }
  uint32_t workgroup_size() const { return wg_x * wg_y * k_split; }
  // The staged rows (padded by 4) and R^T tile (a vec4 per unit), and the slices' partial sums of one
  // unit.
  uint32_t copies() const { return double_buffer ? 2 : 1; }
  uint64_t workgroup_bytes() const {
    const uint64_t partials = uint64_t{k_split - 1} * thread_rows * wg_x * wg_y;
    return copies() * (4ull * uint64_t{k_tile} * (rows() + 4) + 16ull * uint64_t{k_tile} * units()) +
           16ull * partials;
  }
  bool well_formed() const {
    return wg_x > 0 && wg_y > 0 && thread_rows > 0 && thread_rows % 4 == 0 && thread_units > 0 &&
           k_tile > 0 && k_split > 0 && k_tile % k_split == 0 && (prefetch || !double_buffer);
  }
};

// Batches from this size up run the vec4 step on GPUs (StepKernel::automatic, fused phase, G <= 4)
// where no whole-sequence kernel applies, except batches of kGemmStepMinBatch or more with a hidden size
// of kGemmStepMinHidden or more, which run the GEMM step (it measured ahead of the vec4 step on
// SCNet's B = 433 H512 band LSTM; at H256, B = 864 the vec4 step is ahead).
constexpr int64_t kVec4StepMinBatch = 32;
constexpr int64_t kGemmStepMinHidden = 512;

// By batch alone (see rnn_step_tiling.cpp for the measurements behind it). Fits `max_workgroup_bytes`
// and `max_invocations` (WebGPU's minimum limits assumed at least).
Vec4StepTiling choose_vec4_step_tiling(int64_t batch, uint64_t max_workgroup_bytes, uint32_t max_invocations);

// The row-sequence kernel (rnn_sequence_rows.wgsl, StepMode::row_sequence): every step in one dispatch,
// a workgroup per `rows` batch rows of one direction owning all hidden units; invocation (tx, ty, ks)
// holds thread_rows rows x unit_vector consecutive units x gates accumulators over K slice ks of
// k_split, loading the weights of k_block entries of K at once. Grid (1, ceil(B / rows), D);
// workgroup (hidden / unit_vector) x (rows / thread_rows) x k_split.
struct RowSequenceTiling {
  uint32_t rows = 2;         // BM
  uint32_t thread_rows = 2;  // TM (divides BM)
  uint32_t unit_vector = 4;  // UV: 4 (vec4 loads of R^T; hidden a multiple of 4) or 1
  uint32_t k_split = 1;      // KS
  uint32_t k_block = 4;      // KB

  uint32_t unit_invocations(int64_t hidden) const {
    return static_cast<uint32_t>((hidden + unit_vector - 1) / unit_vector);
  }
  uint32_t slice_invocations(int64_t hidden) const { return unit_invocations(hidden) * (rows / thread_rows); }
  uint32_t workgroup_size(int64_t hidden) const { return slice_invocations(hidden) * k_split; }
  uint32_t accumulators(uint32_t gates) const { return thread_rows * unit_vector * gates; }
  // K entries per slice.
  uint32_t slice_length(int64_t hidden) const {
    return static_cast<uint32_t>((hidden + k_split - 1) / k_split);
  }
  // The double-buffered h of the rows (rows padded to a multiple of 4 entries) and the slices' partial sums.
  uint64_t workgroup_bytes(int64_t hidden, uint32_t gates) const {
    const uint64_t partials = uint64_t{k_split - 1} * accumulators(gates) * slice_invocations(hidden);
    return 4ull * (2ull * rows * ((hidden + 3) / 4 * 4) + partials);
  }
  bool well_formed(int64_t hidden) const {
    return rows > 0 && thread_rows > 0 && k_split > 0 && k_block > 0 && rows % thread_rows == 0 &&
           (unit_vector == 1 || (unit_vector == 4 && hidden % 4 == 0));
  }
};

// Invocations per workgroup and in the whole grid the row-sequence chooser keeps to.
constexpr uint32_t kRowSequenceMaxInvocations = 512;
constexpr int64_t kRowSequenceMaxGridInvocations = 96 * 1024;

// One row per invocation, vec4 units where the hidden size allows, one row per workgroup (two for
// H >= 256 with 128+ rows), K slices while each keeps 16+ entries and the grid ~96K invocations.
// Fits `max_workgroup_bytes` and `max_invocations`.
RowSequenceTiling choose_row_sequence_tiling(int64_t batch, int64_t hidden, int64_t directions,
                                             uint32_t gates, uint64_t max_workgroup_bytes,
                                             uint32_t max_invocations);

// The resident kernel (rnn_sequence_resident.wgsl, StepMode::resident): every step in one dispatch, a
// workgroup per `rows` batch rows of one direction holding all of that direction's R^T in registers
// for the whole sequence. Invocation (j, s) keeps unit j's gate columns for K slice s: slice_vectors
// (KQ) vec4 registers per gate, a slice covering 4 * KQ entries of K; slices(hidden) = the power of two
// >= ceil(hidden / (4 * KQ)). Slice s applies the cell to row s, so rows <= slices. Grid
// (1, ceil(B / rows), D), workgroup hidden * slices.
struct ResidentTiling {
  uint32_t rows = 1;           // BM
  uint32_t slice_vectors = 8;  // KQ

  uint32_t slices(int64_t hidden) const {
    const int64_t length = 4 * int64_t{std::max(slice_vectors, 1u)};  // (0 is not well formed)
    const int64_t needed = (hidden + length - 1) / length;
    uint32_t n = 1;
    while (n < needed) n *= 2;
    return n;
  }
  uint32_t workgroup_size(int64_t hidden) const { return static_cast<uint32_t>(hidden) * slices(hidden); }
  // The double-buffered h of the rows, and without subgroups the partial sums of one row.
  uint64_t workgroup_bytes(int64_t hidden, uint32_t gates, bool subgroup_reduce) const {
    const uint64_t row_vectors = uint64_t{slices(hidden)} * slice_vectors;
    return 32ull * rows * row_vectors + (subgroup_reduce ? 0 : 4ull * gates * workgroup_size(hidden));
  }
  bool well_formed(int64_t hidden) const {
    return hidden > 0 && rows > 0 && slice_vectors > 0 && slice_vectors <= 16 && rows <= slices(hidden);
  }
};

// R^T of a direction up to this size is held in registers (automatic choice; the H200's register
// file is 256 KiB per multiprocessor, and the workgroup needs some for everything else).
constexpr uint64_t kResidentMaxWeightBytes = 192 * 1024;
// Workgroups the resident chooser aims for (one per multiprocessor of the H200, 132: the kernel runs
// every step, so a second wave of workgroups would double its time), and the most it accepts.
constexpr int64_t kResidentTargetWorkgroups = 128;
constexpr int64_t kResidentMaxWorkgroups = 256;

// KQ = 8 for up to 3 gates (GRU: 96 registers of R^T), 4 for LSTM (64; 8 where H <= 64 and batch *
// directions <= 16, a grid too small for occupancy to matter), doubled while the workgroup
// exceeds `max_invocations`; rows doubled (up to the slices) until the grid is at most
// kResidentTargetWorkgroups.
ResidentTiling choose_resident_tiling(int64_t batch, int64_t hidden, int64_t directions, uint32_t gates,
                                      uint32_t max_invocations);

// The cooperative kernel (rnn_sequence_cooperative.wgsl, StepMode::cooperative): every step in one
// dispatch, R^T of a direction spread over ceil(H / JT) workgroups per block of rows, each holding its
// JT units' gate columns in registers (invocation (jl, s): KQ vec4 registers per gate for K slice s,
// as ResidentTiling) and serving `row_chunks` chunks of `rows` batch rows one after the other; the
// workgroups trade h through an exchange buffer, so the whole grid must be resident at once. Grid
// (ceil(H / JT), ceil(B / (rows * row_chunks)), D), workgroup JT * slices.
struct CooperativeTiling {
  uint32_t units = 8;          // JT
  uint32_t rows = 1;           // BM (<= slices)
  uint32_t slice_vectors = 4;  // KQ
  uint32_t row_chunks = 1;     // RC

  uint32_t slices(int64_t hidden) const { return ResidentTiling{rows, slice_vectors}.slices(hidden); }
  uint32_t workgroup_size(int64_t hidden) const { return units * slices(hidden); }
  // h of one chunk's rows, c of every chunk's rows, and without subgroups the partial sums of one row.
  uint64_t workgroup_bytes(int64_t hidden, uint32_t gates, bool subgroup_reduce) const {
    const uint64_t row_vectors = uint64_t{slices(hidden)} * slice_vectors;
    return 16ull * rows * row_vectors + 4ull * row_chunks * units * rows +
           (subgroup_reduce ? 0 : 4ull * gates * workgroup_size(hidden));
  }
  int64_t row_blocks(int64_t batch) const {
    const int64_t block = int64_t{rows} * row_chunks;
    return (batch + block - 1) / block;
  }
  int64_t workgroups(int64_t batch, int64_t hidden, int64_t directions) const {
    return (hidden + units - 1) / units * row_blocks(batch) * directions;
  }
  bool well_formed(int64_t hidden) const {
    return hidden > 0 && units > 0 && rows > 0 && row_chunks > 0 && slice_vectors > 0 &&
           slice_vectors <= 16 && rows <= slices(hidden);
  }
};

// The largest grid the automatic choice asks the probe about (a GPU with fewer resident
// workgroups gets another kernel), and the largest batch it tries the kernel for (beyond, the GEMM
// step's throughput wins).
constexpr int64_t kCooperativeMaxWorkgroups = 512;
constexpr int64_t kCooperativeMaxBatch = 128;
// The exchange buffer (every step's h) the automatic choice accepts.
constexpr uint64_t kCooperativeMaxExchangeBytes = 256ull << 20;

// The tilings the automatic choice probes, best first (the first whose grid is resident runs).
// KQ = 8 then 4 (NS = the slices it gives, at most `max_slices`, the subgroup size, so that a unit's
// slices sum by shuffles; 0: no limit), 256 then 128 invocations' worth of units (JT = invocations /
// NS, at most H); rows: the batch in balanced blocks of at most NS rows and 16 KiB of h; one chunk of
// rows per workgroup. KQ 8 won or tied KQ 4 on every shape measured, and the larger JT where its grid
// was resident. Chunks of rows (RC > 1) were slower on every shape (per step they serialise). The
// figures: docs/benchmark-log.md.
std::vector<CooperativeTiling> cooperative_tiling_candidates(int64_t batch, int64_t hidden,
                                                             uint32_t max_invocations, uint32_t max_slices);

}  // namespace onda::kernels::rnn
