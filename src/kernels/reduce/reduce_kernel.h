// Reductions (sum, mean, max, min, product, L1, L2, sum of squares) over any set of axes, f32/f16
// (f32 accumulation). Axes are first grouped into runs of neighbouring reduced dims; each run is one
// pass over [outer, R, inner]; long contiguous rows are split across workgroups and combined in a
// second pass. A plan (Reduce) holds those passes and their pipelines, built once per problem and
// recorded per run; an input larger than one storage binding is recorded as slices of its leading
// kept dims, each slice shape planned once.
#pragma once
#include <memory>
#include <vector>

#include "gpu/buffer_pool.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// LogSumExp is composed by the ops from Max, Exp, Sum and Log; the kernel refuses it.
enum class ReduceOp { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSumExp };

// Output shape for `axes` (already normalised, unique, sorted) and keepdims.
Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& axes, bool keepdims);

// What one reduction computes: shapes and dtypes only, no buffers. Empty `axes` reduces nothing (a
// copy through the op's PRE/FINAL, as ONNX's noop_with_empty_axes = 0 with all axes is the caller's
// to expand).
struct ReduceProblem {
  ReduceOp op = ReduceOp::Sum;
  Shape shape;
  DType dtype = DType::f32;
  std::vector<int64_t> axes;  // sorted, unique, within the rank
  bool operator==(const ReduceProblem&) const = default;
};

class Reduce {
 public:
  // Throws std::invalid_argument for LogSumExp, axes that are not sorted, unique and within the
  // rank, or an empty input with a non-empty output.
  Reduce(const KernelContext& kc, ReduceProblem problem);
  ~Reduce();
  Reduce(Reduce&&) noexcept;

  const ReduceProblem& problem() const { return problem_; }

  // x must match the problem; y have reduced_shape(x, axes, keepdims) (either keepdims form is
  // accepted: only the element count and order matter) and x's dtype. Partial results of the
  // multi-pass reductions are allocated from `pool` (kept alive by the recorder).
  void record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const Tensor& x, const Tensor& y) const;

 private:
  // One dispatch: a pass over [outer, reduce, inner], or the combination of its chunk partials.
  struct Step {
    int64_t outer = 1, reduce = 1, inner = 1, chunks = 1;
    int64_t outputs = 0;         // elements it writes
    bool is_final = false;       // writes y (through FINAL), else float32 partials
    bool partial_input = false;  // reads float32 partials, not x
    bool row_mode = false;       // INNER_ONE: a workgroup per (row, chunk)
  };
  static std::vector<Step> plan_steps(const Shape& shape, const std::vector<int64_t>& axes);

  void check_tensors(const Tensor& x, const Tensor& y) const;
  const wgpu::ComputePipeline& pipeline_for(size_t step) const;
  void record_steps(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const Tensor& x,
                    const Tensor& y) const;
  void record_in_leading_slices(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const Tensor& x,
                                const Tensor& y) const;
  const Reduce& slice_plan(const Shape& slice_shape, const std::vector<int64_t>& slice_axes) const;

  KernelContext kc_;
  ReduceProblem problem_;
  int64_t output_count_ = 0;
  float total_reduced_ = 1;  // elements behind each output, for FINAL (mean)
  std::vector<Step> steps_;
  mutable std::vector<const wgpu::ComputePipeline*> pipelines_;  // per step, owned by the cache
  mutable std::vector<std::unique_ptr<Reduce>> slice_plans_;     // inputs over one binding
};

// Plans and records in one call, for callers that keep no plans.
void record_reduce(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                   ReduceOp op, const Tensor& x, const std::vector<int64_t>& axes, const Tensor& y);

}  // namespace onda::kernels
