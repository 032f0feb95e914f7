// The uniforms every cell kernel of the recurrent family reads (StepParams in rnn_cell.wgsl /
// rnn_step.wgsl), and the range check for the 32-bit values in them. Internal to kernels/rnn.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>

namespace onda::kernels::rnn {

// Mirrors StepParams in rnn_step.wgsl.
struct StepUniforms {
  uint32_t dims[4];  // step (or the probe marker), seq, batch, hidden
  uint32_t misc[4];  // directions, flags, projection row stride, projection offset
  uint32_t
      xw_base[4];    // projection base of direction 0, 1; first time of the projected chunk, direction 0, 1
  uint32_t st[4];    // state offsets: h_in, h_out, c, source vector of the product (or the exchange)
  uint32_t wts[4];   // bias offset, peephole offset, sequence_lens offset, first R^T column
  uint32_t outs[4];  // Y, Y_h, Y_c offsets; GRU scratch: r (.) H_prev, followed by z
  float clip[4];
  float act[6][4];
};

// StepParams' flags (misc[1]).
enum StepFlags : uint32_t {
  kSeqLens = 1,
  kY = 2,
  kYh = 4,
  kYc = 8,
  kReverse0 = 16,
  kInputForget = 64,
  kPeephole = 128,
  kClip = 256,
  kLayout1 = 512,
  kTimeMajorXw = 1024,
  kYDirectionsInner = 2048,
};

// `v` as a uniform word; std::invalid_argument naming `what` when it does not fit.
inline uint32_t u32(int64_t v, const char* what) {
  if (v < 0 || v > 0xFFFFFFFFll)
    throw std::invalid_argument(fmt::format("RNN: {} = {} out of range", what, v));
  return static_cast<uint32_t>(v);
}

}  // namespace onda::kernels::rnn
