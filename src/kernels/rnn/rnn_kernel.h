// ONNX LSTM / GRU / RNN on the GPU: a layer planned once (RnnKernel), then recorded per run.
//
//   1. The input projection X W^T of every timestep and both directions is one GEMM
//      (kernels/gemm, W^T row-major, float32 result).
//   2. The recurrence: which kernel runs it is plan_rnn's choice (rnn_plan.h; the strategies are
//      listed there and in README.md): one dispatch for the whole sequence (resident, cooperative,
//      row-sequence, whole-sequence kernels), or one or two dispatches per timestep (vec4, tiled or
//      dot step kernels; the GEMM step) for both directions and all batch rows, each applying the
//      gates, clip, peepholes, sequence_lens masking and the state update and writing Y / Y_h / Y_c.
//      GRU with linear_before_reset=0 needs (r (.) H_prev) R_h^T, which depends on every r of the
//      row, so its step takes two dispatches (z and r, then h).
//   3. When the projection of all steps would not fit one storage binding, it is computed per
//      chunk of timesteps (per direction) just before those steps; when X or Y itself does not fit,
//      the layer runs as a chain of shorter layers (rnn_time_chunks.h).
// The recurrent state is float32 whatever the tensors' dtype (f32 or f16). All steps are recorded
// into the caller's command buffer: no host synchronisation per step.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "kernels/gemm/gemm.h"
#include "kernels/kernel_context.h"
#include "kernels/rnn/rnn_options.h"
#include "kernels/rnn/rnn_plan.h"
#include "kernels/rnn/rnn_spec.h"
#include "kernels/rnn/rnn_uniforms.h"
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
  // Row-major, not prepacked: the tiled GEMM reads a row-major B faster than a K-contiguous one
  // (measured on SCNet's band-LSTM projections and the biLSTMs: docs/benchmark-log.md).
  Tensor w_t;
  Tensor w;        // the caller's W, kept for chunked projections
  Tensor r, b, p;  // the caller's R, B, P (b, p may be undefined), kept for rnn_time_chunks
  Tensor params;   // float32, see above
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int64_t directions = 0;
  bool has_peepholes = false;
  uint32_t bias_offset = 0;      // elements into params
  uint32_t peephole_offset = 0;  // elements into params
};

// Validates W/R/B/P against the spec (std::invalid_argument naming the input) and records their
// repacking (into `pool`: a pool whose buffers outlive the runs for weights kept across runs).
RnnWeights prepare_rnn_weights(const KernelContext& kernels, gpu::CommandRecorder& recorder,
                               gpu::BufferPool& pool, const RnnSpec& spec, const Tensor& w, const Tensor& r,
                               const Tensor& b, const Tensor& p);

// What a layer is planned for, besides the spec and the weights: X's shape and dtype, which of the
// optional run tensors are given (they are compiled into the cell: StepFlags), and whether X or Y
// exceeds one storage binding (then the layer runs in chunks of time). The initial states are not
// part of it: they are copied in at record time whatever their dtype.
struct RnnProblem {
  Shape x_shape;
  DType x_dtype = DType::f32;
  bool sequence_lens = false;
  bool y = false, y_h = false, y_c = false;
  bool time_chunks = false;  // rnn_needs_time_chunks

  // The problem of a run with these tensors.
  static RnnProblem of(const KernelContext& kernels, const RnnInputs& inputs, const RnnOutputs& outputs);
  bool operator==(const RnnProblem&) const = default;
};

class RnnTimeChunks;

// One recurrent layer, planned once for a weight set and a problem: the kernel and its tiling
// (plan_rnn; the cooperative kernels' residency probed here, once), the pipelines, the projection
// and recurrent-product GEMMs, and every uniform but the buffers' offsets. record() then only
// allocates the run's scratch (state, projection, exchange) and records the dispatches. An op keeps
// one per node and input shape, with its weights (ops/rnn_ops.cpp).
class RnnKernel {
 public:
  // Throws std::invalid_argument when the problem does not match the spec and the weights (naming
  // the tensor) or a forced kernel or tiling cannot run here; gpu::DeviceLimitError when a layer
  // that needs chunks of time cannot be split so. `recorder` and `weights_pool` receive what
  // planning derives from the weights (a bidirectional layer in chunks of time: each direction's
  // weights); the kernel keeps `kernels` (its references must outlive it).
  RnnKernel(const KernelContext& kernels, gpu::CommandRecorder& recorder, gpu::BufferPool& weights_pool,
            const RnnSpec& spec, std::shared_ptr<const RnnWeights> weights, const RnnProblem& problem,
            const RnnOptions& options = {});
  ~RnnKernel();
  RnnKernel(const RnnKernel&) = delete;
  RnnKernel& operator=(const RnnKernel&) = delete;

  const RnnProblem& problem() const { return problem_; }
  // The kernel chosen; meaningless when the layer runs in chunks of time (each chunk has its own).
  const RnnPlan& plan() const { return plan_; }
  bool runs_in_time_chunks() const { return time_chunks_ != nullptr; }
  const std::shared_ptr<const RnnWeights>& weights() const { return weights_; }
  // Lets go of the caller's W, R, B and P where the recording reads only the packed forms (W^T and
  // the parameters: the projection of all steps at once, not in chunks of time): weights() is then a
  // copy without them, and the caller's tensors are freed once nothing else holds them.
  void drop_unread_weights();

  // Records the layer, its scratch from `pool`. The inputs' W, R, B and P are ignored (the kernel's
  // weights are used). Throws std::invalid_argument when the tensors do not match the problem.
  void record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const RnnInputs& inputs,
              const RnnOutputs& outputs) const;

 private:
  struct Run;  // one record's buffers, bindings and uniforms (rnn_kernel.cpp)
  // One planned dispatch: its pipeline and grid.
  struct Stage {
    const wgpu::ComputePipeline* pipeline = nullptr;
    gpu::WorkgroupCount groups;
  };

  // Planning, in order.
  void plan_projection();
  void plan_uniforms();
  void plan_kernel();
  void plan_stages();
  Stage step_stage(const RnnStepPhase& phase, const char* label) const;
  void plan_gemms();
  std::string exchange_guard(const char* name, const char* avoid) const;
  bool grid_resident(const wgpu::ComputePipeline& pipeline, gpu::WorkgroupCount groups) const;

  // Recording: the run's buffers, then one of the strategies below.
  Run bind(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const RnnInputs& inputs,
           const RnnOutputs& outputs) const;
  void record_projection(gpu::CommandRecorder& recorder, Run& run, int64_t chunk_index) const;
  void start_sequence(gpu::CommandRecorder& recorder, Run& run) const;
  void record_resident(gpu::CommandRecorder& recorder, Run& run) const;
  void record_exchange(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, Run& run,
                       const char* name) const;
  void record_row_sequence(gpu::CommandRecorder& recorder, Run& run) const;
  void record_whole_sequence(gpu::CommandRecorder& recorder, Run& run) const;
  void record_gemm_steps(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, Run& run) const;
  void record_steps(gpu::CommandRecorder& recorder, Run& run) const;

  KernelContext k_;
  RnnSpec spec_;
  std::shared_ptr<const RnnWeights> weights_;
  RnnProblem problem_;
  RnnOptions options_;
  RnnDims d_;
  std::unique_ptr<RnnTimeChunks> time_chunks_;  // set: the layer is a chain of shorter ones
  bool chunked_ = false;                        // the projection computed per chunk of steps
  int64_t chunk_ = 0;                           // steps per projection chunk (all of them unless chunked_)
  bool widen_x_ = false;  // chunked projections read X made time-major and float32 (Run::x_time_major)
  uint32_t flags_ = 0;    // StepFlags
  RnnPlan plan_;
  StepUniforms uniforms_{};     // everything but the buffers' offsets and the step
  Stage first_, second_;        // the strategy's dispatch; second_: GRU's h phase
  std::string exchange_guard_;  // cooperative, persistent vec4: the error when the grid was not resident
  std::optional<gemm::Gemm> projection_;       // all steps, or a whole chunk of steps of one direction
  std::optional<gemm::Gemm> projection_tail_;  // the last, shorter chunk
  std::optional<gemm::Gemm> gates_product_;    // gemm_step: H_prev R^T
};

// Plans (RnnProblem::of) and records in one call: for callers that do not keep the plan (tests,
// benchmarks, ops whose weights change every run). Throws as RnnKernel and RnnKernel::record.
void record_rnn(const KernelContext& kernels, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                const RnnSpec& spec, const RnnWeights& weights, const RnnInputs& inputs,
                const RnnOutputs& outputs, const RnnOptions& options = {});

// prepare_rnn_weights + record_rnn.
void record_rnn(const KernelContext& kernels, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                const RnnSpec& spec, const RnnInputs& inputs, const RnnOutputs& outputs,
                const RnnOptions& options = {});

// How many RnnKernels this process has planned (tests check that a session plans a layer once).
uint64_t rnn_kernels_planned();

}  // namespace onda::kernels::rnn
