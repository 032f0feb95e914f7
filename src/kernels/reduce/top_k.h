// The k largest (or smallest) elements along one axis, sorted, with their indices (ONNX TopK):
// f32/f16 values, indices as int32 or int64 (both i32 on the GPU). Each element finds its own rank
// in its row by comparing with the whole row (O(length) per element: meant for the short rows of
// classification and beam-search heads, not for sorting long axes).
#pragma once
#include <cstdint>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// Order: larger first (`largest`) or smaller first; equal values keep their index order, NaN
// counts as larger than every number (numpy's sort order). `values` and `indices` have x's shape
// with k at `axis`. Throws std::invalid_argument for other dtypes, a bad axis, k outside
// 0..length or mismatched outputs.
void record_top_k(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x, int64_t axis,
                  int64_t k, bool largest, const Tensor& values, const Tensor& indices);

}  // namespace onda::kernels
