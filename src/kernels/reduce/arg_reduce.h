// Index of the largest / smallest element along one axis (ONNX ArgMax / ArgMin), f32/f16 in, int32
// or int64 out (both are i32 on the GPU).
#pragma once
#include <cstdint>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

enum class ArgReduceOp { Max, Min };

// `y` holds x's element count divided by shape[axis] (either keepdims form). Ties take the first
// index, or the last when `last_index`. Throws std::invalid_argument for other dtypes, a bad axis,
// an empty axis or a mismatched output.
void record_arg_reduce(const KernelContext& kc, gpu::CommandRecorder& recorder, ArgReduceOp op,
                       const Tensor& x, int64_t axis, bool last_index, const Tensor& y);

}  // namespace onda::kernels
