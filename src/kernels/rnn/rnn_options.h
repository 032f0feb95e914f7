// What a caller may ask of one recurrent layer (RnnOptions): the step mode, a kernel and tiling
// forced (tests, benchmarks), the projection chunk bound, the node's label for errors. The session's
// RnnTuning (rnn_tuning.h) applies where these leave the choice automatic; plan_rnn (rnn_plan.h)
// reads both.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/rnn/rnn_step_tiling.h"
#include "kernels/rnn/rnn_tuning.h"

namespace onda::kernels::rnn {

// per_step: one dispatch per timestep (two for GRU with linear_before_reset=0). whole_sequence:
// one dispatch for all timesteps, a workgroup per (batch tile, direction) looping over the steps
// with workgroup barriers; only where the step is one fused kernel and the projection is not
// chunked (else per_step). automatic: whole_sequence when R of a direction is at most
// kWholeSequenceMaxWeightBytes (it stays in the multiprocessor's cache: UVR's H32 / H64 LSTMs).
// row_sequence: one dispatch for all timesteps too, a workgroup per block of batch rows of one
// direction owning all hidden units (rnn_sequence_rows.wgsl: register-tiled, h in workgroup memory),
// streaming R^T from cache each step; one fused kernel only, projection not chunked, h of the rows
// within workgroup memory (else per_step). automatic, on GPUs: row_sequence when R of a direction is
// above kWholeSequenceMaxWeightBytes and at most kRowSequenceMaxWeightBytes and batch * directions is
// at most kRowSequenceMaxRows (where it measured faster than per step: MP-SENet's GRUs, SCNet's B = 85
// H256 LSTM; at B = 433-864 or R = 4 MiB the per-step tiled kernel stays faster).
// resident: one dispatch for all timesteps, R^T of a direction held in the registers of each
// workgroup for the whole sequence (rnn_sequence_resident.wgsl; ResidentTiling); one fused kernel
// only, projection not chunked, the workgroup within the device's invocation limit (else per_step).
// automatic, on GPUs, before the others: resident when R of a direction is at most
// kResidentMaxWeightBytes and the grid at most kResidentMaxWorkgroups.
// cooperative: one dispatch for all timesteps, R^T of a direction spread over the registers of
// ceil(H / JT) workgroups per block of rows, which trade h through an exchange buffer every step
// (rnn_sequence_cooperative.wgsl; CooperativeTiling); one fused kernel only, projection not chunked,
// the exchange within a storage binding, and the grid resident all at once (probe_grid_resident),
// else std::invalid_argument when forced. automatic, on GPUs, after resident: where R^T of a
// direction exceeds kResidentMaxWeightBytes, the batch is at most kCooperativeMaxBatch and the probe
// passes for one of cooperative_tiling_candidates.
enum class StepMode { automatic, per_step, whole_sequence, row_sequence, resident, cooperative };
constexpr uint64_t kWholeSequenceMaxWeightBytes = 64 * 1024;
constexpr uint64_t kRowSequenceMaxWeightBytes = 1024 * 1024;
constexpr int64_t kRowSequenceMaxRows = 1024;

// StepKernel: rnn_tuning.h.

struct RnnOptions {
  // Projection buffer bytes above which the chunked projection is used; 0: the device's
  // maxStorageBufferBindingSize. (Tests lower it to exercise the chunked path.)
  uint64_t max_projection_bytes = 0;
  // The step kernel's tiling; unset: choose_step_tiling. (Benchmarks compare tilings; tests force
  // every shape of tile.) std::invalid_argument when it exceeds the device's workgroup limits.
  std::optional<StepTiling> step_tiling;
  StepMode step_mode = StepMode::automatic;
  StepKernel step_kernel = StepKernel::automatic;
  // The tiled kernel's tiling; unset: choose_tiled_step_tiling. std::invalid_argument when it is
  // malformed or exceeds the device's workgroup limits.
  std::optional<TiledStepTiling> tiled_tiling;
  // The vec4 kernel's tiling; unset: choose_vec4_step_tiling. std::invalid_argument when it is
  // malformed or exceeds the device's workgroup limits. A persistent tiling runs every step in one
  // dispatch whatever step_mode says; std::invalid_argument when the projection is chunked or its grid
  // does not run all at once (asked of the probe unless probe_cooperative_grid is false).
  std::optional<Vec4StepTiling> vec4_tiling;
  // The row-sequence kernel's tiling; unset: choose_row_sequence_tiling. std::invalid_argument when it
  // is malformed or exceeds the device's workgroup limits.
  std::optional<RowSequenceTiling> row_tiling;
  // The resident kernel's tiling; unset: choose_resident_tiling. std::invalid_argument when it is
  // malformed or exceeds the device's workgroup limits.
  std::optional<ResidentTiling> resident_tiling;
  // The cooperative kernel's tiling; unset: the first of cooperative_tiling_candidates whose grid is
  // resident. std::invalid_argument when it is malformed or exceeds the device's workgroup limits.
  std::optional<CooperativeTiling> cooperative_tiling;
  // false: the cooperative kernel runs its first tiling that fits without asking the probe whether
  // the grid is resident (tests use it to exercise the bounded waits: NaN outputs, never a hang).
  bool probe_cooperative_grid = true;
  // false: the resident and cooperative kernels sum K slices through workgroup memory even where subgroups
  // exist (tests cover both).
  bool allow_subgroups = true;
  // Names the node in errors found after the run (gpu::RunGuards).
  std::string label;
};

}  // namespace onda::kernels::rnn
