// The recurrent family's tuning: a kernel and tiling forced on every layer of a model where the
// layer's RnnOptions leave the choice automatic (a bench_rnn variant tried on a whole model), or an
// automatic one-dispatch kernel turned off. KernelContext carries one, SessionOptions::tuning sets it,
// benchmarks take it as --tuning (bench/tuning_args.h); plan_rnn (rnn_plan.h) applies it.
#pragma once
#include <optional>

#include "kernels/rnn/rnn_step_tiling.h"

namespace onda::kernels::rnn {

// Which per-step kernel: dot (rnn_step.wgsl: dot products of JT units x BT <= 4 rows per
// workgroup, StepTiling) or tiled (rnn_step_tiled.wgsl: register-tiled GEMM of BM rows x BU units,
// TiledStepTiling). automatic: on GPUs vec4 for batches kVec4StepMinBatch..kGemmStepMinBatch - 1
// (fused phase, G <= 4), else tiled for batch >= kTiledMinBatch. Ignored by whole_sequence.
// gemm: per step H_prev R^T of all directions on the GEMM core (one batched tiled GEMM) into a
// gates buffer, then rnn_step_gates.wgsl applies the cell (2 dispatches per step); automatic on GPUs
// for batch >= kGemmStepMinBatch (not GRU linear_before_reset=0, which keeps its two-phase step).
// vec4: rnn_step_vec4.wgsl (Vec4StepTiling), the GEMM core's tile on R^T's gate-major layout with the
// cell in its epilogue, one dispatch per step (fused phase only: not GRU linear_before_reset=0).
enum class StepKernel { automatic, dot, tiled, gemm, vec4 };

struct RnnTuning {
  std::optional<ResidentTiling> resident;  // forces the resident kernel with this tiling
  bool resident_off = false;               // the resident kernel is never chosen automatically
  std::optional<CooperativeTiling> cooperative;
  bool cooperative_off = false;
  std::optional<RowSequenceTiling> rows;
  bool rows_off = false;
  StepKernel step_kernel = StepKernel::automatic;  // the per-step kernel where the layer runs per step
  std::optional<TiledStepTiling> tiled;
  std::optional<Vec4StepTiling> vec4;
};

}  // namespace onda::kernels::rnn
