// Softmax and LogSoftmax along one axis (ONNX opset >= 13 semantics), f32/f16 with f32 math, as a
// plan (Softmax) built once per problem and recorded per run.
#pragma once
#include <memory>
#include <vector>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// Rows (softmax axis innermost) up to this length are held in registers: one read of x
// (softmax_rows.wgsl); longer ones, and axes with inner elements, read x twice (softmax.wgsl).
constexpr int64_t kRegisterRowMax = 16 * 256;

// What one softmax computes: shapes and dtypes only, no buffers.
struct SoftmaxProblem {
  Shape shape;
  DType dtype = DType::f32;
  int64_t axis = -1;  // may be negative
  bool log_softmax = false;
  bool operator==(const SoftmaxProblem&) const = default;
};

class Softmax {
 public:
  // Throws std::invalid_argument for an axis out of range.
  Softmax(const KernelContext& kc, SoftmaxProblem problem);
  ~Softmax();
  Softmax(Softmax&&) noexcept;

  const SoftmaxProblem& problem() const { return problem_; }

  // x must match the problem, y have x's shape and dtype; throws std::invalid_argument otherwise.
  // Tensors larger than one storage binding run as slices of the rows before the axis (views).
  void record(gpu::CommandRecorder& recorder, const Tensor& x, const Tensor& y) const;

 private:
  void record_in_slices(gpu::CommandRecorder& recorder, const Tensor& x, const Tensor& y) const;
  const Softmax& slice_plan(const Shape& slice_shape) const;

  KernelContext kc_;
  SoftmaxProblem problem_;
  int64_t outer_ = 1, size_ = 1, inner_ = 1;
  int64_t groups_ = 0;                               // workgroups of one dispatch
  const wgpu::ComputePipeline* pipeline_ = nullptr;  // owned by the cache; none for an empty x
  mutable std::vector<std::unique_ptr<Softmax>> slice_plans_;
};

// Plans and records in one call. `axis` may be negative. y must have x's shape and dtype; throws
// std::invalid_argument otherwise.
void record_softmax(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x, int64_t axis,
                    bool log_softmax, const Tensor& y);

}  // namespace onda::kernels
