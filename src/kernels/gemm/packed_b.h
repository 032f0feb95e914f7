// A constant B (weights) repacked once at load into the layout the GEMMs read fastest:
// [N, K_pad] with K contiguous and K_pad = K rounded up to 4 (zero padding). Both GEMM paths read it
// with vector loads along K (the skinny path streams each row of it with coalesced lanes; the tiled
// path sees it as a transposed B whose rows are 16-byte aligned). The dtype is kept (f16 stays
// packed halves), so packing never changes the numbers.
#pragma once
#include <cstdint>

#include "gpu/command_recorder.h"
#include "gpu/pipeline_cache.h"
#include "tensor/tensor.h"

namespace onda::kernels::gemm {

struct PackedB {
  Tensor data;    // shape [n, k_pad]
  int64_t k = 0;  // logical op(B) is k x n
  int64_t n = 0;
  int64_t k_pad() const { return (k + 3) / 4 * 4; }
  DType dtype() const { return data.dtype(); }
};

// Records the packing of a 2-D `b` (op(B) = b, or b^T when transpose_b) into a fresh pool tensor.
// Throws std::invalid_argument for a non-2-D or non-float b.
PackedB prepack_b(gpu::Context& context, gpu::BufferPool& pool, gpu::PipelineCache& pipelines,
                  gpu::CommandRecorder& recorder, const Tensor& b, bool transpose_b);

}  // namespace onda::kernels::gemm
