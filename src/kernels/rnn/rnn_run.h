// One RnnKernel::record's buffers, bindings and uniforms, shared by the planning file
// (rnn_kernel.cpp, which binds them) and the strategies (rnn_strategies.cpp). Internal to kernels/rnn.
#pragma once
#include <vector>

#include "kernels/rnn/rnn_kernel.h"

namespace onda::kernels::rnn {

struct RnnKernel::Run {
  const RnnInputs& in;
  Tensor state;         // float32: h ping, h pong, c, then the GRU scratch r (.) H_prev and z
  uint32_t st0 = 0;     // the state's first element in its binding
  Tensor xw;            // the projection (all steps, or one chunk of steps per direction)
  Tensor x_time_major;  // X, or X widened to float32 time-major for chunked projections (widen_x_)
  // Bindings 0-6 of every cell kernel: projection, weights, state, sequence_lens, Y, Y_h, Y_c.
  std::vector<gpu::BufferBinding> bindings;
  StepUniforms u{};  // the plan's, with this run's offsets
  // Stand-ins for absent outputs: held to the end of the record, so that no later scratch of this
  // run (the exchange) is given their bytes while a dispatch binds both.
  std::vector<Tensor> stand_ins;
};

}  // namespace onda::kernels::rnn
