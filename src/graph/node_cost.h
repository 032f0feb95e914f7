// The roofline cost of one node from its shapes: the arithmetic it must do (FLOPs, an FMA counting
// two) and the bytes it must move at least (every input read once, every output written once, at
// the GPU's element sizes; weights are inputs, so they count as read). A kernel can be no faster than
// max(FLOPs / peak FLOP rate, bytes / peak bandwidth): the profile prints each node's time against
// that floor (runtime/roofline.h), so the recoverable milliseconds show.
//
// The model per op family:
//   MatMul, Gemm          2 M N K per product (+ M N for Gemm's C)
//   Conv                  2 * |Y| * (C / group * kernel volume) (+ |Y| for a bias, + the fused activation)
//   ConvTranspose         2 * |X| * (M / group * kernel volume): each input element meets every tap
//   LSTM, GRU, RNN        per step and direction 2 * batch * gates * H * (I + H) + a few per gate element;
//                         `sequential_steps` = sequence length (one step depends on the one before)
//   DFT, STFT             5 N log2 N per transform (the radix-2 Cooley-Tukey count, as FFTW's and
//                         cuFFT's benchmarks quote it), STFT + N for the window
//   elementwise           1 FLOP per output element for arithmetic and comparisons, 4 for
//                         transcendentals (exp, tanh, erf, ...): a few, not an exact instruction count
//   reductions            1 per input element (2 for ReduceSumSquare, L2, LogSumExp-like)
//   normalizations        5 per element (mean, variance, normalize, scale, shift); BatchNorm 2
//   softmax               5 per element (max, subtract, exp, sum, divide)
//   pools                 |Y| * kernel volume (global pools: |X|)
//   layout ops            0 FLOPs: pure data movement; Slice and Gather read only what they write
//   NonZero, Compress     1 per element scanned (the count pass and the scatter pass each read it)
//   Unique                n log2 n (a sort of the read-back input, on the host)
//   NonMaxSuppression     10 per pair of boxes of a class (IoU on the host, after a read-back)
//   random ops            40 per element drawn (Philox4x32-10: ten rounds of two products and xors)
//   GridSample            per output element 2 per tap (1, 2^r or 4^r taps) + 10 per spatial dim
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/graph.h"
#include "graph/shape_inference.h"  // TensorType

namespace onda {

struct NodeCost {
  double flops = 0;
  double bytes = 0;
  int64_t sequential_steps = 0;  // recurrent layers: dependent steps (each at least one dispatch)
  bool modeled = false;          // false: an op type the model does not know (bytes only, FLOPs 0)

  NodeCost& operator+=(const NodeCost& other);
};

// `inputs` and `outputs` have one entry per node input / output (nullopt: omitted, or not a tensor).
// `constant_inputs` (optional, one per input, null where unknown) gives values such as DFT's axis.
NodeCost node_cost(const Node& node, const std::vector<std::optional<TensorType>>& inputs,
                   const std::vector<std::optional<TensorType>>& outputs,
                   const std::vector<const HostTensor*>& constant_inputs = {});

}  // namespace onda
