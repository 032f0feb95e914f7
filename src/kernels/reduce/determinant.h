// Determinants of square matrices (ONNX Det): x [..., n, n] f32/f16 to y [...] of its dtype, by
// Gaussian elimination with partial pivoting in f32, one invocation per matrix held in private
// memory (n <= 16: the small matrices of geometry heads, not a linear-algebra library).
#pragma once
#include <cstdint>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

constexpr int64_t kMaxDeterminantSize = 16;

// Throws std::invalid_argument for other dtypes, a non-square or too large matrix, or an output
// that is not x's shape without its last two dims.
void record_determinant(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x,
                        const Tensor& y);

}  // namespace onda::kernels
