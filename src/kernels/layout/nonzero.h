// The positions of a tensor's nonzero elements in row-major order (ONNX NonZero; Compress selects
// with it): stream compaction by a two-level scan. Three dispatches over blocks of 256 elements:
//   count    each workgroup counts its block's nonzero elements;
//   scan     one workgroup turns the block counts into exclusive offsets and writes the total;
//   scatter  each workgroup scans its block's flags and writes every nonzero element's coordinates
//            at its block's offset plus its rank within the block.
// The output's size is the total, which only the GPU knows: the caller reads the count back between
// the scan and the scatter (the runtime's mid-run read-back, ops::OpContext::read_back).
// "Nonzero" is by value: +0.0 and -0.0 are zero, NaN is not (the sign bit is ignored for floats).
#pragma once
#include <cstdint>

#include "gpu/buffer_pool.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

struct NonzeroCount {
  Tensor block_offsets;  // i32 per block: the nonzero elements of the blocks before it
  Tensor count;          // i64 [1]: the nonzero elements of the whole tensor
  int64_t blocks = 0;
};

// The count and scan passes over `x` (any dtype; rank <= 8, fewer than 2^31 elements). Throws
// std::invalid_argument for a tensor it cannot take, gpu::DeviceLimitError when x cannot be bound.
NonzeroCount record_nonzero_count(const KernelContext& kc, gpu::CommandRecorder& recorder,
                                  gpu::BufferPool& pool, const Tensor& x);

// The scatter pass: `indices` (i64, [rank(x), count] with count the value `counted.count` holds;
// [1, count] for a scalar x) receives the coordinates of each nonzero element, one column each.
void record_nonzero_indices(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x,
                            const NonzeroCount& counted, const Tensor& indices);

}  // namespace onda::kernels
