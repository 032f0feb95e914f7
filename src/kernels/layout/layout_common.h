// Small helpers every layout kernel shares: strides, constant bits, argument checks.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// Row-major element strides of a contiguous tensor of `shape`.
std::vector<int64_t> contiguous_strides(const Shape& shape);

// Bits of a constant value as `dtype` stores it on the GPU (f16 rounded to nearest even).
uint32_t value_bits(DType dtype, double value);

// Throws std::invalid_argument naming `op` when `input` and `output` have different dtypes.
void require_same_dtype(const std::string& op, const Tensor& input, const Tensor& output);

// Throws gpu::DeviceLimitError when `t` cannot be bound as one storage buffer.
void require_bindable(const KernelContext& kc, const Tensor& t, const std::string& name);

}  // namespace onda::kernels
