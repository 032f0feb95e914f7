// One elementwise op (unary, binary with broadcasting, Where, Cast) over GPU tensors, as a plan built
// once per problem (validation, result dtype and shape, the coalesced broadcast layout) and recorded
// per run. The shader depends on the op, the dtypes, each operand's broadcast mode and its alignment
// (vector loads need an element offset that is a multiple of 4), the last known only from the
// tensors: a plan keeps the pipeline of each alignment it has met, so a second run with the same
// views looks nothing up.
#pragma once
#include <array>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/elementwise/broadcast.h"
#include "kernels/elementwise/elementwise_ops.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// What one elementwise call computes: shapes and dtypes only, no buffers.
struct ElementwiseProblem {
  ElementwiseOp op = ElementwiseOp::Identity;
  std::vector<Shape> input_shapes;
  std::vector<DType> input_dtypes;
  ElementwiseAttributes attributes;

  // The problem of `inputs` (their shapes and dtypes).
  static ElementwiseProblem of(ElementwiseOp op, std::span<const Tensor> inputs,
                               const ElementwiseAttributes& attributes = {});
  bool operator==(const ElementwiseProblem&) const = default;
};

class Elementwise {
 public:
  // Throws std::invalid_argument naming the op when the dtypes are not accepted, the shapes do not
  // broadcast, or the output has more than 2^32 elements or 8 dims after coalescing.
  Elementwise(const KernelContext& kc, ElementwiseProblem problem);

  const ElementwiseProblem& problem() const { return problem_; }
  DType output_dtype() const { return out_dtype_; }
  const Shape& output_shape() const { return out_shape_; }

  // `inputs` must match the problem, `output` be output_dtype() x output_shape(); throws
  // std::invalid_argument otherwise.
  void record(gpu::CommandRecorder& recorder, std::span<const Tensor> inputs, const Tensor& output) const;

 private:
  // What of the shader depends on the tensors' element offsets.
  struct Alignment {
    bool out_vec4 = false;
    std::array<uint32_t, 3> in_alignment{};  // each input's element offset divisible by 4, 2 or 1
    bool operator==(const Alignment&) const = default;
  };

  void check_tensors(std::span<const Tensor> inputs, const Tensor& output) const;
  Alignment alignment_of(std::span<const Tensor> inputs, uint32_t out_offset) const;
  const wgpu::ComputePipeline& pipeline_for(const Alignment& alignment) const;
  std::string render_wgsl(const Alignment& alignment) const;

  KernelContext kc_;
  ElementwiseProblem problem_;
  DType out_dtype_;
  Shape out_shape_;
  int64_t count_ = 0;
  BroadcastLayout layout_;
  mutable std::vector<std::pair<Alignment, const wgpu::ComputePipeline*>> pipelines_;  // owned by the cache
};

// The WGSL pieces shared with the fused kernel (fused_elementwise.h):
// the compute type of a storage dtype ("f32" for f32/f16, "i32" for i32/i64, "u32" for u8/bool);
std::string elementwise_compute_type(DType dtype);
// the expression of one element of `op` over a, b, c (in their compute types), giving `out`;
std::string elementwise_expression(ElementwiseOp op, std::span<const DType> inputs, DType out);
// input k's binding and load functions (elementwise/input.wgsl); `alignment` is 4, 2 or 1, the
// largest of them dividing the view's element offset.
std::string render_elementwise_input(size_t k, DType dtype, BroadcastMode mode, uint32_t alignment);

// Plans and records in one call, for callers that keep no plans.
void record_elementwise(const KernelContext& kc, gpu::CommandRecorder& recorder, ElementwiseOp op,
                        std::span<const Tensor> inputs, const Tensor& output,
                        const ElementwiseAttributes& attributes = {});

}  // namespace onda::kernels
