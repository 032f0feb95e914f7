// ONNX-style reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceSumSquare, ReduceLogSumExp) over any set of axes, f32/f16 (f32 accumulation).
// Axes are first grouped into runs of neighbouring reduced dims; each run is one pass over
// [outer, R, inner]; long contiguous rows are split across workgroups and combined in a second pass.
#pragma once
#include <string_view>
#include <vector>

#include "gpu/buffer_pool.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

enum class ReduceOp { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSumExp };

// Output shape for `axes` (already normalised, unique, sorted) and keepdims.
Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& axes, bool keepdims);

// y has reduced_shape(x, axes, keepdims) (either keepdims form is accepted: only the element count
// and order matter). Empty `axes` reduces nothing (a copy through the op's PRE/FINAL, as ONNX's
// noop_with_empty_axes = 0 with all axes is the caller's to expand).
void record_reduce(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool, ReduceOp op,
                   const Tensor& x, const std::vector<int64_t>& axes, const Tensor& y);

}  // namespace onda::kernels
