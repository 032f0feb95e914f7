// ONNX Transpose (any permutation, rank <= 8 after coalescing).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "kernels/kernel_context.h"
#include "kernels/layout/index_map.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// Output dim d is input dim perm[d]; an empty perm reverses the dims (ONNX default).
Shape transpose_output_shape(const Shape& input, std::span<const int64_t> perm);

// The tiled workgroup-memory transpose of coalesced dims (transpose_tiled.wgsl), planned once: every
// uniform but the tensors' element offsets, and the pipeline.
class TiledTranspose {
 public:
  struct Geometry;  // the uniforms without the offsets (transpose.cpp)
  TiledTranspose(const KernelContext& kc, const Geometry& geometry, DType dtype);
  ~TiledTranspose();
  TiledTranspose(TiledTranspose&&) noexcept;
  // Both tensors must fit one storage binding.
  void record(gpu::CommandRecorder& recorder, const Tensor& input, const Tensor& output) const;

 private:
  KernelContext kc_;
  std::unique_ptr<Geometry> geometry_;
  uint64_t groups_ = 0;
  const wgpu::ComputePipeline* pipeline_;  // owned by the cache
};

// A transpose planned for its shapes (LayoutPlan holds it): the index map always, the tiled kernel
// where it applies (picked when both tensors fit one binding). Checks `output` against the
// permutation (std::invalid_argument).
struct TransposePlan {
  std::optional<IndexMapKernel> map;  // none when the output is empty
  std::optional<TiledTranspose> tiled;
};
TransposePlan plan_transpose(const KernelContext& kc, const Shape& input, DType dtype,
                             std::span<const int64_t> perm, const Shape& output);

// Records a planned transpose: the tiled kernel when planned and both tensors fit one binding.
void record_planned_transpose(const KernelContext& kc, const TransposePlan& plan,
                              gpu::CommandRecorder& recorder, const Tensor& input, const Tensor& output);

// Dims that stay adjacent are merged first. When the input's innermost dim moves (and both swapped
// dims are >= 8), a tiled workgroup-memory transpose reads and writes whole rows (coalesced on both
// sides); otherwise it is the generic index-map gather.
void record_transpose(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                      std::span<const int64_t> perm, const Tensor& output);

}  // namespace onda::kernels
