// The GPU side of an FFT: builds the plan's pipelines and constant tables once, then records the
// transform of any pair of tensors that match the description (an ONNX DFT/STFT op creates one
// FftKernel per distinct description and reuses it every run).
//
//   FftDescription d;  d.length = 400; d.outer_count = frames; d.domain = FftDomain::real_to_complex;
//   d.input = contiguous_layout(400, 1, 1);  d.output = contiguous_layout(201, 1, 2);
//   FftKernel fft(context, pool, pipelines, d);
//   fft.record(recorder, signal, spectrum);  recorder.submit();
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "gpu/context.h"
#include "gpu/pipeline_cache.h"
#include "kernels/fft/fft_plan.h"
#include "kernels/fft/fft_tuning.h"
#include "kernels/fft/stockham_codegen.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels::fft {

FftDeviceLimits fft_device_limits(const gpu::Context& context);

// The path tuning.code_path resolves to on this context (never automatic): generic on CPU adapters,
// unrolled elsewhere, unless the tuning names one.
FftCodePath resolve_code_path(const gpu::Context& context, FftCodePath requested);

class FftKernel {
 public:
  // Plans (FftPlan::create with this device's limits, or tighter `limits`, e.g. to bound scratch
  // memory), re-shapes the passes for the unrolled path when tuning.code_path resolves to it, compiles
  // every pass and uploads the tables.
  FftKernel(gpu::Context& context, gpu::BufferPool& pool, gpu::PipelineCache& pipelines,
            const FftDescription& description, const std::optional<FftDeviceLimits>& limits = std::nullopt,
            const FftTuning& tuning = {});
  // The same from a KernelContext: its device, pipeline cache and FFT tuning; the tables and scratch
  // buffers from `pool` (an op keeps the kernel across runs, so a pool nothing is released to
  // during a run).
  FftKernel(const KernelContext& kc, gpu::BufferPool& pool, const FftDescription& description,
            const std::optional<FftDeviceLimits>& limits = std::nullopt);

  const FftPlan& plan() const { return plan_; }
  // Whether user tensors are read and written as vec2 where their offsets allow (vec2_user_io).
  bool vec2_io() const { return vec2_io_; }

  // Records the passes reading `input` (times `window` when the description is windowed) and writing
  // `output`. Throws std::invalid_argument when a tensor has the wrong dtype or is too small for its
  // layout, when a window is missing or unexpected, or when input and output share one buffer.
  void record(gpu::CommandRecorder& recorder, const Tensor& input, const Tensor& output,
              const Tensor* window = nullptr) const;

 private:
  struct CompiledPass {
    wgpu::ComputePipeline pipeline;
    std::vector<PassBinding> bindings;
  };

  void check_tensor(const Tensor& tensor, const FftLayout& layout, int64_t samples, bool real,
                    const char* which) const;

  std::vector<CompiledPass> compile_passes(bool vec2_io) const;
  void check_tensors(const Tensor& input, const Tensor& output, const Tensor* window) const;
  std::vector<gpu::BufferBinding> bindings_for(const std::vector<PassBinding>& roles, const Tensor& input,
                                               const Tensor& output, const Tensor* window) const;

  gpu::Context& context_;
  gpu::PipelineCache& pipelines_;
  FftPlan plan_;
  // With vec2 user I/O where the plan allows it (vec2_user_io); a tensor at an odd element offset
  // takes scalar_passes_, compiled the first time one comes.
  bool vec2_io_ = false;
  std::vector<CompiledPass> passes_;
  mutable std::vector<CompiledPass> scalar_passes_;
  std::shared_ptr<gpu::PooledBuffer> tables_;
  std::shared_ptr<gpu::PooledBuffer> stage_scratch_;
  std::shared_ptr<gpu::PooledBuffer> spectrum_;
  uint64_t tables_bytes_ = 0;
  uint64_t split_twiddle_offset_ = 0;  // complex index of split_twiddle_table in tables_ (four-step plans)
  uint64_t scratch_bytes_ = 0;  // of each of stage_scratch_ and spectrum_ (the pool may hand out more)
};

}  // namespace onda::kernels::fft
