// ONNX Transpose (any permutation, rank <= 8 after coalescing).
#pragma once
#include <cstdint>
#include <span>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// Output dim d is input dim perm[d]; an empty perm reverses the dims (ONNX default).
Shape transpose_output_shape(const Shape& input, std::span<const int64_t> perm);

// Dims that stay adjacent are merged first. When the input's innermost dim moves (and both swapped
// dims are >= 8), a tiled workgroup-memory transpose reads and writes whole rows (coalesced on both
// sides); otherwise it is the generic index-map gather.
void record_transpose(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                      std::span<const int64_t> perm, const Tensor& output);

}  // namespace onda::kernels
