// A constant B (weights) repacked once at load into the layout the GEMMs read fastest:
// [N, K_pad] with K contiguous and K_pad = K rounded up to 4 (zero padding), plus 32 more when that
// is a multiple of 256 (see packed_row_length). Both GEMM paths read it
// with vector loads along K (the skinny path streams each row of it with coalesced lanes; the tiled
// path sees it as a transposed B whose rows are 16-byte aligned). The dtype is kept (f16 stays
// packed halves), so packing never changes the numbers.
#pragma once
#include <cstdint>

#include "gpu/command_recorder.h"
#include "gpu/pipeline_cache.h"
#include "tensor/tensor.h"

namespace onda::kernels::gemm {

// The row length (elements) of a packed B with k rows in op(B): k rounded up to 4, so rows start
// 16-byte aligned for vector loads; and when that is a multiple of 256 (a row of 1 KiB or a larger
// power-of-two multiple: K = 256, 512, ..., 4096), 32 more, so that the tiled path, which reads a
// short piece of many rows per K step, does not hit the same memory channels / cache sets with
// every row (power-of-two leading dimensions; the classic remedy is to pad them, as BLAS guides
// advise). Suspected cause of the K-contiguous B's slowdown on large square products against a
// row-major B (docs/benchmark-log.md); to be confirmed on hardware. The padding is zeros.
constexpr int64_t packed_row_length(int64_t k) {
  const int64_t k4 = (k + 3) / 4 * 4;
  return k4 >= 256 && k4 % 256 == 0 ? k4 + 32 : k4;
}

struct PackedB {
  Tensor data;    // shape [n, k_pad]
  int64_t k = 0;  // logical op(B) is k x n
  int64_t n = 0;
  int64_t k_pad() const { return packed_row_length(k); }
  DType dtype() const { return data.dtype(); }
};

// Records the packing of a 2-D `b` (op(B) = b, or b^T when transpose_b) into a fresh pool tensor.
// Throws std::invalid_argument for a non-2-D or non-float b.
PackedB prepack_b(gpu::Context& context, gpu::BufferPool& pool, gpu::PipelineCache& pipelines,
                  gpu::CommandRecorder& recorder, const Tensor& b, bool transpose_b);

}  // namespace onda::kernels::gemm
