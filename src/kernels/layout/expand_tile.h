// ONNX Expand (numpy broadcast of the input to a shape) and Tile (repeat along each dim).
#pragma once
#include <cstdint>
#include <span>

#include "kernels/kernel_context.h"
#include "kernels/layout/index_map.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// ONNX Expand's output shape: the numpy broadcast of `input` and `shape` (either may be larger in a
// dim where the other is 1). Throws std::invalid_argument when they do not broadcast.
Shape expand_output_shape(const Shape& input, std::span<const int64_t> shape);

// The index maps of Expand and Tile, checking the shapes as the record functions below say.
IndexMap expand_map(const Shape& input, const Shape& output);
IndexMap tile_map(const Shape& input, std::span<const int64_t> repeats, const Shape& output);

// `output` must have a shape that `input` broadcasts to (right-aligned, dims equal or 1).
void record_expand(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                   const Tensor& output);

// `repeats` has one non-negative entry per input dim; output dim d = input dim d * repeats[d].
void record_tile(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                 std::span<const int64_t> repeats, const Tensor& output);

}  // namespace onda::kernels
