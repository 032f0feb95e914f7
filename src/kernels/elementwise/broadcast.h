// numpy / ONNX multidirectional broadcasting, reduced to the fewest dimensions a kernel must walk.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "tensor/tensor.h"

namespace onda::kernels {

// The broadcast result shape; throws std::invalid_argument naming the shapes when incompatible.
Shape broadcast_shape(std::span<const Shape> shapes);

// Same: the output's own layout (vector loads). Scalar: one element. Rows: strided, but the innermost
// coalesced dim is contiguous and a multiple of 4 long and the outer strides are multiples of 4, so an
// invocation's 4 output elements are 4 neighbours (one index computation and one vector load per 4).
// Strided: any other walk (an index per element).
enum class BroadcastMode { Same, Scalar, Strided, Rows };

struct BroadcastLayout {
  std::vector<int64_t> out_dims;                 // coalesced output dims (size-1 dims dropped)
  std::vector<std::vector<int64_t>> strides;     // per input, per coalesced dim; 0 = broadcast
  std::vector<BroadcastMode> modes;              // per input
};

// Right-aligns each input against `out`, gives broadcast dims stride 0, drops size-1 dims and merges
// neighbouring dims that every input walks contiguously (or all broadcast), so most real cases
// become Same/Scalar (vector loads) and the rest walk few dims.
// `strides` (empty, or one entry per input): where an entry is not empty, that input is a strided view
// (its element at index i sits at sum i_d strides[d] from its start) instead of a contiguous tensor;
// it walks Strided unless its strides are the contiguous ones.
BroadcastLayout plan_broadcast(std::span<const Shape> inputs, const Shape& out,
                               std::span<const std::vector<int64_t>> strides = {});

}  // namespace onda::kernels
