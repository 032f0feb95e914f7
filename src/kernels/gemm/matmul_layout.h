// How a (batched, broadcast) matrix product maps onto flat buffers: ONNX MatMul semantics
// (numpy.matmul: 1-D operands are promoted to a matrix and the added dimension is dropped from the
// output; batch dimensions broadcast right-aligned) plus ONNX Gemm's optional transposes and an
// optional addend broadcast to the output (Gemm's C, a fused bias).
//
// Batch dimensions are collapsed before they reach the shader: size-1 dimensions are dropped and
// neighbours merged whenever every operand walks them as one (stride[i] == stride[i+1] * size[i+1],
// which also merges two broadcast dimensions), so the kernel sees at most kMaxBatchDims of them.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "tensor/tensor.h"

namespace onda::kernels::gemm {

inline constexpr size_t kMaxBatchDims = 4;

struct MatmulLayout {
  Shape output_shape;
  int64_t m = 0, n = 0, k = 0;
  int64_t batch_count = 1;
  // Collapsed batch dimensions, outermost first; strides in elements, 0 = broadcast.
  std::vector<int64_t> batch_shape;
  std::vector<int64_t> a_batch_strides, b_batch_strides, addend_batch_strides;
  // Stored matrix geometry: A is stored [M, K] (or [K, M] when transposed), row stride a_row_stride.
  int64_t a_row_stride = 0, b_row_stride = 0;
  // Addend element (m, n) of one batch is at m * addend_row_stride + n * addend_col_stride.
  bool has_addend = false;
  int64_t addend_row_stride = 0, addend_col_stride = 0;
};

// Throws std::invalid_argument naming the shapes when they do not fit together.
MatmulLayout plan_matmul_layout(const Shape& a, bool transpose_a, const Shape& b, bool transpose_b,
                                const std::optional<Shape>& addend);

// numpy broadcast of two shapes (right-aligned); throws std::invalid_argument on a mismatch.
Shape broadcast_shapes(const Shape& x, const Shape& y, const char* what);

}  // namespace onda::kernels::gemm
