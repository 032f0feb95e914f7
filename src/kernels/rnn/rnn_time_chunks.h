// A recurrent layer whose X or Y exceeds one storage binding (maxStorageBufferBindingSize) runs as a
// chain of smaller layers: per direction, chunks of consecutive timesteps (in the direction's own
// order), each a record_rnn whose initial state is the state the previous chunk ended with. The
// step kernels bind X, Y and the projection of a chunk only, so each fits. A bidirectional layer
// runs its directions as two one-direction layers (weights sliced per direction), each chunk's Y
// copied into its direction's slots of Y; layout 1 is made time-major first (and back at the end).
// The recurrent state crosses a chunk boundary in X's dtype (float32 for float32 models: exact; a
// float16 layer rounds its state to float16 there). sequence_lens is not supported on this path
// (gpu::DeviceLimitError).
#pragma once
#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "kernels/kernel_context.h"
#include "kernels/rnn/rnn_kernel.h"

namespace onda::kernels::rnn {

// Whether X or Y of the layer is larger than one storage binding.
bool rnn_needs_time_chunks(const KernelContext& kernels, const RnnInputs& inputs, const RnnOutputs& outputs);

// The layer in chunks of time (see above). `weights` must keep the caller's W, R, B and P
// (prepare_rnn_weights does). Throws gpu::DeviceLimitError when one timestep alone does not fit a
// binding, or with sequence_lens.
void record_rnn_time_chunks(const KernelContext& kernels, gpu::CommandRecorder& recorder,
                            gpu::BufferPool& pool, const RnnSpec& spec, const RnnWeights& weights,
                            const RnnInputs& inputs, const RnnOutputs& outputs, const RnnOptions& options);

}  // namespace onda::kernels::rnn
