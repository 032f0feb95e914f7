// ONNX LSTM / GRU / RNN on the GPU (issue: one GEMM for all inputs, then per step one fused kernel).
//
//   1. The input projection X W^T of every timestep and both directions is one GEMM
//      (kernels/gemm, W^T row-major, float32 result).
//   2. Each timestep is one dispatch (rnn_step.wgsl) for both directions and all batch rows: a
//      workgroup multiplies H_prev by its tile of R^T columns (rnn_step_tiling.h; H_prev staged in
//      workgroup memory)
//      and applies the gates, clip, peepholes, sequence_lens masking and the state update, writing
//      Y / Y_h / Y_c. GRU with linear_before_reset=0 needs (r (.) H_prev) R_h^T, which depends on
//      every r of the row, so it takes two dispatches per step (z and r, then h).
//      When R is small, all timesteps run in one dispatch instead (StepMode::whole_sequence).
//   3. When the projection of all steps would not fit one storage binding, it is computed per
//      chunk of timesteps (per direction) just before those steps.
// The recurrent state is float32 whatever the tensors' dtype (f32 or f16). All steps are recorded
// into the caller's command buffer: no host synchronisation per step.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "kernels/kernel_context.h"
#include "kernels/rnn/rnn_spec.h"
#include "kernels/rnn/rnn_step_tiling.h"
#include "kernels/rnn/rnn_tuning.h"
#include "tensor/tensor.h"

namespace onda::kernels::rnn {

// The ONNX inputs; optional ones undefined when absent. Shapes as in the ONNX spec.
struct RnnInputs {
  Tensor x;              // [S, B, I] (layout 0) or [B, S, I]
  Tensor w;              // [D, G*H, I]
  Tensor r;              // [D, G*H, H]
  Tensor b;              // [D, 2*G*H]   (optional)
  Tensor sequence_lens;  // [B] int32    (optional)
  Tensor initial_h;      // [D, B, H] or [B, D, H] (optional)
  Tensor initial_c;      // LSTM only    (optional)
  Tensor p;              // LSTM [D, 3*H] peepholes i, o, f (optional)
};

// Outputs to write, each optional (undefined = not computed); dtype that of X.
struct RnnOutputs {
  Tensor y;    // rnn_y_shape
  Tensor y_h;  // rnn_state_shape
  Tensor y_c;  // rnn_state_shape, LSTM only
};

// The constant weights in the layouts the kernels read: W^T of all directions, float32 row-major
// [I, D*G*H], for the projection GEMM; W itself ([D, G*H, I], any float dtype) for projections chunked
// per direction (a transposed B); and one float32 buffer holding R^T [D][H][G*H], then the biases
// [D][2*G*H] (zero when absent), then the peepholes [D][3*H] (LSTM with P). Prepare once per weight
// set and record many times.
struct RnnWeights {
  // The tiled GEMM reads a row-major B faster than a K-contiguous (prepacked) one: on an H200 SCNet's
  // band-LSTM projections ran 20-25% faster so, the biLSTMs 5-8% (bench_rnn; docs/benchmark-log.md).
  Tensor w_t;
  Tensor w;              // the caller's W, kept for chunked projections
  Tensor r, b, p;        // the caller's R, B, P (b, p may be undefined), kept for rnn_time_chunks
  Tensor params;         // float32, see above
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int64_t directions = 0;
  bool has_peepholes = false;
  uint32_t bias_offset = 0;      // elements into params
  uint32_t peephole_offset = 0;  // elements into params
};

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
// at most kRowSequenceMaxRows (H200: MP-SENet's GRUs 1.8x, SCNet's B = 85 H256 LSTM 1.3x faster than
// per step; at B = 433-864 or R = 4 MiB the per-step tiled kernel stays faster).
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
  // false: the resident and cooperative kernels sum K slices through workgroup memory even where subgroups exist
  // (tests cover both).
  bool allow_subgroups = true;
  // Names the node in errors found after the run (gpu::RunGuards).
  std::string label;
};

// Validates W/R/B/P against the spec (std::invalid_argument naming the input) and records their
// repacking.
RnnWeights prepare_rnn_weights(const KernelContext& kernels, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                               const RnnSpec& spec, const Tensor& w, const Tensor& r, const Tensor& b, const Tensor& p);

// Records the whole layer. Throws std::invalid_argument for shapes/dtypes that do not match the
// spec, naming the tensor.
void record_rnn(const KernelContext& kernels, gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const RnnSpec& spec,
                const RnnWeights& weights, const RnnInputs& inputs, const RnnOutputs& outputs,
                const RnnOptions& options = {});

// prepare_rnn_weights + record_rnn.
void record_rnn(const KernelContext& kernels, gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const RnnSpec& spec,
                const RnnInputs& inputs, const RnnOutputs& outputs, const RnnOptions& options = {});

// Dispatches per timestep of the per-step mode (1, or 2 for GRU with linear_before_reset = 0).
int rnn_dispatches_per_step(const RnnSpec& spec);

}  // namespace onda::kernels::rnn
