#include "kernels/reduce/reduce_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gpu/gpu_error.h"
#include "kernels/common/binding_window.h"
#include "kernels/common/tensor_access.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr int64_t kThreads = 256;
constexpr int64_t kChunk = kThreads * 32;

struct ReduceUniforms {
  uint32_t outer, reduce, inner, chunk_size, chunks, x_offset, y_offset;
  float final_count;
};

struct OpExpressions {
  const char* pre;
  const char* combine;
  const char* final;
  const char* identity;
};

OpExpressions expressions(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return {"x", "a + b", "acc", "0.0"};
    case ReduceOp::Mean:
      return {"x", "a + b", "acc / n", "0.0"};
    case ReduceOp::Max:
      return {"x", "max(a, b)", "acc", "-0x1.fffffep+127"};
    case ReduceOp::Min:
      return {"x", "min(a, b)", "acc", "0x1.fffffep+127"};
    case ReduceOp::Prod:
      return {"x", "a * b", "acc", "1.0"};
    case ReduceOp::L1:
      return {"abs(x)", "a + b", "acc", "0.0"};
    case ReduceOp::L2:
      return {"x * x", "a + b", "sqrt(acc)", "0.0"};
    case ReduceOp::SumSquare:
      return {"x * x", "a + b", "acc", "0.0"};
    case ReduceOp::LogSumExp:
      break;
  }
  throw std::invalid_argument("ReduceLogSumExp is not supported by the GPU reduce kernel");
}

}  // namespace

Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& axes, bool keepdims) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced) {
      out.push_back(shape[d]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

Reduce::Reduce(const KernelContext& kc, ReduceProblem problem) : kc_(kc), problem_(std::move(problem)) {
  (void)expressions(problem_.op);  // refuses LogSumExp
  const Shape& shape = problem_.shape;
  const auto& axes = problem_.axes;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= static_cast<int64_t>(shape.size()) || (i > 0 && axes[i] <= axes[i - 1])) {
      throw std::invalid_argument("reduce: axes must be sorted, unique and within the rank");
    }
  }
  output_count_ = element_count(reduced_shape(shape, axes, false));
  if (output_count_ == 0) return;
  if (element_count(shape) == 0) throw std::invalid_argument("reduce: empty input with a non-empty output");
  double total_reduced = 1;
  for (int64_t a : axes) total_reduced *= static_cast<double>(shape[a]);
  total_reduced_ = static_cast<float>(total_reduced);
  steps_ = plan_steps(shape, axes);
  pipelines_.assign(steps_.size(), nullptr);
}

Reduce::~Reduce() = default;
Reduce::Reduce(Reduce&&) noexcept = default;

// Runs of neighbouring reduced axes, innermost run first; each pass shrinks the tensor. A pass over
// contiguous rows longer than one chunk splits them, then combines the partials in one more step.
std::vector<Reduce::Step> Reduce::plan_steps(const Shape& shape, const std::vector<int64_t>& axes) {
  struct Pass {
    int64_t outer, reduce, inner;
  };
  std::vector<Pass> passes;
  Shape current = shape;
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : axes) reduced[a] = true;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0;) {
    if (!reduced[d]) {
      --d;
      continue;
    }
    int64_t begin = d;
    while (begin > 0 && reduced[begin - 1]) --begin;
    Pass p{1, 1, 1};
    for (int64_t i = 0; i < begin; ++i) p.outer *= current[i];
    for (int64_t i = begin; i <= d; ++i) p.reduce *= current[i];
    for (int64_t i = d + 1; i < static_cast<int64_t>(current.size()); ++i) p.inner *= current[i];
    passes.push_back(p);
    current.erase(current.begin() + begin, current.begin() + d + 1);
    current.insert(current.begin() + begin, 1);
    d = begin - 1;
  }
  if (passes.empty()) passes.push_back({element_count(shape), 1, 1});

  std::vector<Step> steps;
  for (size_t p = 0; p < passes.size(); ++p) {
    const Pass& pass = passes[p];
    const bool inner_one = pass.inner == 1;
    const int64_t chunks = inner_one ? (pass.reduce + kChunk - 1) / kChunk : 1;
    Step first{pass.outer, pass.reduce, pass.inner, chunks};
    first.outputs = chunks > 1 ? pass.outer * chunks : pass.outer * pass.inner;
    first.partial_input = p > 0;
    first.row_mode = inner_one;
    steps.push_back(first);
    if (chunks > 1) {  // combine [outer, chunks] partials
      Step combine{pass.outer, chunks, 1, 1};
      combine.outputs = pass.outer;
      combine.partial_input = true;
      combine.row_mode = true;
      steps.push_back(combine);
    }
  }
  steps.back().is_final = true;
  return steps;
}

void Reduce::check_tensors(const Tensor& x, const Tensor& y) const {
  if (x.shape() != problem_.shape || x.dtype() != problem_.dtype) {
    throw std::invalid_argument(fmt::format("reduce: input {} {} differs from the planned {} {}",
                                            dtype_name(x.dtype()), shape_string(x.shape()),
                                            dtype_name(problem_.dtype), shape_string(problem_.shape)));
  }
  if (y.numel() != output_count_ || y.dtype() != x.dtype()) {
    throw std::invalid_argument(fmt::format("reduce: output {} does not match {} reduced over the axes",
                                            shape_string(y.shape()), shape_string(x.shape())));
  }
}

const wgpu::ComputePipeline& Reduce::pipeline_for(size_t index) const {
  if (pipelines_[index]) return *pipelines_[index];
  const Step& step = steps_[index];
  const OpExpressions e = expressions(problem_.op);
  const DType source = step.partial_input ? DType::f32 : problem_.dtype;
  const DType target = step.is_final ? problem_.dtype : DType::f32;
  TemplateValues v = {
      {"X_ACCESS", tensor_access("x", 0, source, false)},
      {"Y_ACCESS", tensor_access("y", 1, target, true)},
      {"PRE", e.pre},
      {"COMBINE", e.combine},
      {"FINAL", e.final},
      {"IDENTITY", e.identity},
      {"PARTIAL_INPUT", step.partial_input ? "1" : "0"},
      {"APPLY_FINAL", step.is_final ? "1" : "0"},
      {"INNER_ONE", step.row_mode ? "1" : "0"},
  };
  pipelines_[index] = &shader_pipeline(kc_.pipelines, "reduce/reduce.wgsl", v, "reduce");
  return *pipelines_[index];
}

void Reduce::record_steps(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const Tensor& x,
                          const Tensor& y) const {
  Tensor source = x;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& step = steps_[i];
    Tensor target = step.is_final ? y : Tensor::empty(pool, DType::f32, {step.outputs});
    ReduceUniforms u{static_cast<uint32_t>(step.outer),  static_cast<uint32_t>(step.reduce),
                     static_cast<uint32_t>(step.inner),  static_cast<uint32_t>(kChunk),
                     static_cast<uint32_t>(step.chunks), source.element_offset(kc_.gpu),
                     target.element_offset(kc_.gpu),     total_reduced_};
    const int64_t groups =
        step.row_mode ? step.outer * step.chunks : (step.outputs + kThreads - 1) / kThreads;
    recorder.dispatch(pipeline_for(i), {source.binding(kc_.gpu), target.binding(kc_.gpu)}, &u, sizeof(u),
                      gpu::split_workgroups(groups, kc_.gpu.limits()), "reduce");
    source = target;
  }
}

const Reduce& Reduce::slice_plan(const Shape& slice_shape, const std::vector<int64_t>& slice_axes) const {
  const ReduceProblem slice{problem_.op, slice_shape, problem_.dtype, slice_axes};
  for (const auto& plan : slice_plans_) {
    if (plan->problem() == slice) return *plan;
  }
  slice_plans_.push_back(std::make_unique<Reduce>(kc_, slice));
  return *slice_plans_.back();
}

// An input larger than one storage binding: the dims before the first reduced axis are kept, so the
// input and output split into independent slices of them (views). A reduction over the leading dim
// itself would need partial results combined across slices: refused.
void Reduce::record_in_leading_slices(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const Tensor& x,
                                      const Tensor& y) const {
  const Shape& shape = x.shape();
  const auto& axes = problem_.axes;
  const int64_t first = axes.empty() ? static_cast<int64_t>(shape.size()) : axes.front();
  int64_t leading = 1;
  for (int64_t d = 0; d < first; ++d) leading *= shape[d];
  const int64_t row = x.numel() / std::max<int64_t>(leading, 1),
                out_row = y.numel() / std::max<int64_t>(leading, 1);
  int64_t per_slice = window_capacity(kc_.gpu, x.dtype()) / std::max<int64_t>(row, 1);
  if (x.dtype() == DType::f16 && (row % 2 != 0 || out_row % 2 != 0)) per_slice &= ~int64_t{1};
  if (leading == 1 || per_slice < 1) {
    throw gpu::DeviceLimitError(
        fmt::format("reduce: {} of {} bytes exceeds the storage binding limit of {} bytes, and no "
                    "leading kept dims split it into slices that fit",
                    shape_string(shape), x.device_bytes(), kc_.gpu.limits().maxStorageBufferBindingSize));
  }
  Shape slice_shape(shape.begin() + first, shape.end());
  slice_shape.insert(slice_shape.begin(), leading);
  std::vector<int64_t> slice_axes;
  for (int64_t a : axes) slice_axes.push_back(a - first + 1);
  const Tensor xs = x.reshape(slice_shape), ys = y.reshape({leading, out_row});
  for (int64_t r0 = 0; r0 < leading; r0 += per_slice) {
    const int64_t r1 = std::min(leading, r0 + per_slice);
    const Tensor x_slice = xs.slice_outer(r0, r1);
    slice_plan(x_slice.shape(), slice_axes).record(recorder, pool, x_slice, ys.slice_outer(r0, r1));
  }
}

void Reduce::record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const Tensor& x,
                    const Tensor& y) const {
  check_tensors(x, y);
  if (output_count_ == 0) return;
  if (!fits_one_binding(kc_.gpu, x)) {
    record_in_leading_slices(recorder, pool, x, y);
    return;
  }
  record_steps(recorder, pool, x, y);
}

void record_reduce(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                   ReduceOp op, const Tensor& x, const std::vector<int64_t>& axes, const Tensor& y) {
  Reduce(kc, {op, x.shape(), x.dtype(), axes}).record(recorder, pool, x, y);
}

}  // namespace onda::kernels
