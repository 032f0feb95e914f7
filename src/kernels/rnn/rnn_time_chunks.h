// A recurrent layer whose X or Y exceeds one storage binding (maxStorageBufferBindingSize) runs as a
// chain of smaller layers: per direction, chunks of consecutive timesteps (in the direction's own
// order), each a layer (RnnKernel) whose initial state is the state the previous chunk ended with.
// The step kernels bind X, Y and the projection of a chunk only, so each fits. A bidirectional layer
// runs its directions as two one-direction layers (weights sliced per direction), each chunk's Y
// copied into its direction's slots of Y; layout 1 is made time-major first (and back at the end).
// The recurrent state crosses a chunk boundary in X's dtype (float32 for float32 models: exact; a
// float16 layer rounds its state to float16 there). sequence_lens is not supported on this path
// (gpu::DeviceLimitError).
#pragma once
#include <memory>
#include <vector>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "kernels/kernel_context.h"
#include "kernels/rnn/rnn_kernel.h"

namespace onda::kernels::rnn {

// Whether X or Y of the layer is larger than one storage binding.
bool rnn_needs_time_chunks(const KernelContext& kernels, const RnnInputs& inputs, const RnnOutputs& outputs);

// The layer in chunks of time (see above), planned once: the chunk length, each direction's weights
// and its chunk layers (one for whole chunks, one for the last, shorter chunk).
class RnnTimeChunks {
 public:
  // Throws gpu::DeviceLimitError when one timestep alone does not fit a binding, or with
  // sequence_lens. A bidirectional layer's per-direction weights are recorded into `recorder`, kept
  // in `weights_pool`.
  RnnTimeChunks(const KernelContext& kernels, gpu::CommandRecorder& recorder, gpu::BufferPool& weights_pool,
                const RnnSpec& spec, const std::shared_ptr<const RnnWeights>& weights,
                const RnnProblem& problem, const RnnOptions& options);

  // The inputs and outputs as RnnKernel::record checked them.
  void record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const RnnInputs& inputs,
              const RnnOutputs& outputs) const;

 private:
  // One direction as a one-direction, time-major layer.
  struct DirectionLayer {
    std::unique_ptr<RnnKernel> whole;  // a chunk of steps_ steps
    std::unique_ptr<RnnKernel> tail;   // the last chunk, when shorter
  };

  KernelContext k_;
  RnnSpec spec_;
  RnnDims d_;
  int64_t steps_ = 0;   // per chunk
  int64_t chunks_ = 0;  // per direction
  std::vector<DirectionLayer> directions_;
};

}  // namespace onda::kernels::rnn
