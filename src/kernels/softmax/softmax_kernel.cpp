#include "kernels/softmax/softmax_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "gpu/gpu_error.h"
#include "kernels/common/binding_window.h"
#include "kernels/common/tensor_access.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

// Mirrors the Params of softmax_params.wgsl.
struct SoftmaxUniforms {
  uint32_t outer, size, inner, x_offset, y_offset, pad[3];
};

}  // namespace

Softmax::Softmax(const KernelContext& kc, SoftmaxProblem problem) : kc_(kc), problem_(std::move(problem)) {
  const Shape& s = problem_.shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = problem_.axis;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) {
    throw std::invalid_argument(fmt::format("Softmax: axis out of range for rank {}", rank));
  }
  if (element_count(s) == 0) return;
  for (int64_t d = 0; d < axis; ++d) outer_ *= s[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner_ *= s[d];
  size_ = rank == 0 ? 1 : s[axis];
  const bool log = problem_.log_softmax;
  const bool inner_one = inner_ == 1;
  if (inner_one && size_ <= kRegisterRowMax) {
    // Rows in registers (softmax_rows.wgsl): RT invocations per row, the fewest that keep V <= 16.
    uint32_t rt = 1;
    while ((size_ + rt - 1) / rt > 16) rt *= 2;
    const uint32_t values = static_cast<uint32_t>((size_ + rt - 1) / rt);
    const bool subgroup_reduce = kc.gpu.has(gpu::Feature::Subgroups) && kc.gpu.subgroup_min_size() >= rt;
    TemplateValues v = {{"X_ACCESS", tensor_access("x", 0, problem_.dtype, false)},
                        {"Y_ACCESS", tensor_access("y", 1, problem_.dtype, true)},
                        {"LOG_SOFTMAX", log ? "1" : "0"},
                        {"RT", std::to_string(rt)},
                        {"V", std::to_string(values)},
                        {"SUBGROUP_REDUCE", subgroup_reduce ? "1" : "0"}};
    pipeline_ = &shader_pipeline(kc.pipelines, "softmax/softmax_rows.wgsl", v, "softmax_rows");
    const int64_t rows_per_group = 256 / rt;
    groups_ = (outer_ + rows_per_group - 1) / rows_per_group;
    return;
  }
  TemplateValues v = {{"X_ACCESS", tensor_access("x", 0, problem_.dtype, false)},
                      {"Y_ACCESS", tensor_access("y", 1, problem_.dtype, true)},
                      {"LOG_SOFTMAX", log ? "1" : "0"},
                      {"INNER_ONE", inner_one ? "1" : "0"}};
  pipeline_ = &shader_pipeline(kc.pipelines, "softmax/softmax.wgsl", v, "softmax");
  groups_ = inner_one ? outer_ : (outer_ * inner_ + 255) / 256;
}

Softmax::~Softmax() = default;
Softmax::Softmax(Softmax&&) noexcept = default;

const Softmax& Softmax::slice_plan(const Shape& slice_shape) const {
  const SoftmaxProblem slice{slice_shape, problem_.dtype, 1, problem_.log_softmax};
  for (const auto& plan : slice_plans_) {
    if (plan->problem() == slice) return *plan;
  }
  slice_plans_.push_back(std::make_unique<Softmax>(kc_, slice));
  return *slice_plans_.back();
}

// Larger than one storage binding: the rows before the axis are independent, so slices of them run
// as views (a float16 slice must start on a whole word).
void Softmax::record_in_slices(gpu::CommandRecorder& recorder, const Tensor& x, const Tensor& y) const {
  const int64_t row = size_ * inner_;
  int64_t per_slice = window_capacity(kc_.gpu, x.dtype()) / std::max<int64_t>(row, 1);
  if (x.dtype() == DType::f16 && row % 2 != 0) per_slice &= ~int64_t{1};
  if (per_slice < 1 || outer_ == 1) {
    throw gpu::DeviceLimitError(
        fmt::format("Softmax: {} rows of {} elements do not fit the storage binding limit of {} bytes",
                    outer_, row, kc_.gpu.limits().maxStorageBufferBindingSize));
  }
  const Tensor xs = x.reshape({outer_, size_, inner_}), ys = y.reshape({outer_, size_, inner_});
  for (int64_t r0 = 0; r0 < outer_; r0 += per_slice) {
    const int64_t r1 = std::min(outer_, r0 + per_slice);
    const Tensor x_slice = xs.slice_outer(r0, r1);
    slice_plan(x_slice.shape()).record(recorder, x_slice, ys.slice_outer(r0, r1));
  }
}

void Softmax::record(gpu::CommandRecorder& recorder, const Tensor& x, const Tensor& y) const {
  if (x.shape() != problem_.shape || x.dtype() != problem_.dtype) {
    throw std::invalid_argument(fmt::format("Softmax: input {} {} differs from the plan",
                                            dtype_name(x.dtype()), shape_string(x.shape())));
  }
  if (y.shape() != x.shape() || y.dtype() != x.dtype())
    throw std::invalid_argument("Softmax: output must match input");
  if (!pipeline_) return;  // empty
  if (!fits_one_binding(kc_.gpu, x) || !fits_one_binding(kc_.gpu, y)) {
    record_in_slices(recorder, x, y);
    return;
  }
  const SoftmaxUniforms u{static_cast<uint32_t>(outer_), static_cast<uint32_t>(size_),
                          static_cast<uint32_t>(inner_), x.element_offset(kc_.gpu),
                          y.element_offset(kc_.gpu),     {0, 0, 0}};
  recorder.dispatch(*pipeline_, {x.binding(kc_.gpu), y.binding(kc_.gpu)}, &u, sizeof(u),
                    gpu::split_workgroups(groups_, kc_.gpu.limits()),
                    problem_.log_softmax ? "LogSoftmax" : "Softmax");
}

void record_softmax(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x, int64_t axis,
                    bool log_softmax, const Tensor& y) {
  Softmax(kc, {x.shape(), x.dtype(), axis, log_softmax}).record(recorder, x, y);
}

}  // namespace onda::kernels
