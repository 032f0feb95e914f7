#include "kernels/layout/gather.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/common/binding_window.h"
#include "kernels/layout/layout_common.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr uint32_t kWorkgroupSize = 256;

// Mirrors `Params` in gather.wgsl.
struct GatherUniforms {
  uint32_t threads, words_per_row, run_length, out_offset;
  uint32_t in_offset, indices_offset;
  int32_t axis_dim;
  uint32_t count_k, inner, pad0, pad1, pad2;
};

}  // namespace

Shape gather_output_shape(const Shape& data, const Shape& indices, int64_t axis) {
  if (axis < 0 || axis >= static_cast<int64_t>(data.size())) {
    throw std::invalid_argument(
        fmt::format("Gather: axis {} out of range for data {}", axis, shape_string(data)));
  }
  Shape out(data.begin(), data.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  return out;
}

void check_gather_indices(std::span<const int64_t> indices, int64_t axis_dim, const std::string& op) {
  for (size_t k = 0; k < indices.size(); ++k) {
    if (indices[k] < -axis_dim || indices[k] >= axis_dim) {
      throw std::out_of_range(fmt::format("{}: index {} (at position {}) is outside [{}, {})", op, indices[k],
                                          k, -axis_dim, axis_dim));
    }
  }
}

Gather::Gather(const KernelContext& kc, GatherProblem problem) : kc_(kc), problem_(std::move(problem)) {
  const GatherProblem& p = problem_;
  output_shape_ = gather_output_shape(p.data, p.indices, p.axis);
  if (p.indices_dtype != DType::i32 && p.indices_dtype != DType::i64) {
    throw std::invalid_argument(
        fmt::format("Gather: indices must be int32 or int64, got {}", dtype_name(p.indices_dtype)));
  }
  axis_dim_ = p.data[p.axis];
  count_ = element_count(output_shape_);
  if (count_ == 0) return;
  if (axis_dim_ == 0) throw std::out_of_range("Gather: indices into an empty axis");
  for (size_t d = p.axis + 1; d < p.data.size(); ++d) inner_ *= p.data[d];
  pipeline_ = &shader_pipeline(kc.pipelines, "layout/gather.wgsl",
                               {{"HALF", p.dtype == DType::f16 ? "1" : "0"}}, "layout Gather");
}

Gather::~Gather() = default;
Gather::Gather(Gather&&) noexcept = default;

void Gather::check_tensors(const Tensor& data, const Tensor& indices, const Tensor& output,
                           std::optional<std::span<const int64_t>> host_indices) const {
  if (output.shape() != output_shape_) {
    throw std::invalid_argument(fmt::format("Gather: output must be {}, got {}", shape_string(output_shape_),
                                            shape_string(output.shape())));
  }
  require_same_dtype("Gather", data, output);
  if (data.shape() != problem_.data || data.dtype() != problem_.dtype ||
      indices.shape() != problem_.indices || indices.dtype() != problem_.indices_dtype) {
    throw std::invalid_argument(fmt::format("Gather: data {} {} and indices {} {} differ from the plan",
                                            dtype_name(data.dtype()), shape_string(data.shape()),
                                            dtype_name(indices.dtype()), shape_string(indices.shape())));
  }
  if (host_indices) {
    if (static_cast<int64_t>(host_indices->size()) != indices.numel()) {
      throw std::invalid_argument(fmt::format("Gather: {} host indices for an indices tensor of {}",
                                              host_indices->size(), shape_string(indices.shape())));
    }
    check_gather_indices(*host_indices, axis_dim_);
  }
}

const Gather& Gather::slice_plan(const Shape& slice_data, const Shape& flat_indices) const {
  const GatherProblem slice{slice_data, problem_.dtype, flat_indices, problem_.indices_dtype, 1};
  for (const auto& plan : slice_plans_) {
    if (plan->problem() == slice) return *plan;
  }
  slice_plans_.push_back(std::make_unique<Gather>(kc_, slice));
  return *slice_plans_.back();
}

// Larger than one storage binding: the rows before `axis` gather independently, so slices of them
// run as views of data and output (whole words for float16).
void Gather::record_in_slices(gpu::CommandRecorder& recorder, const Tensor& data, const Tensor& indices,
                              const Tensor& output,
                              std::optional<std::span<const int64_t>> host_indices) const {
  const int64_t axis = problem_.axis;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.shape()[d];
  const int64_t k = indices.numel();
  const int64_t row = std::max(axis_dim_, k) * inner_;
  int64_t per_slice = window_capacity(kc_.gpu, data.dtype()) / std::max<int64_t>(row, 1);
  if (data.dtype() == DType::f16 && (inner_ * axis_dim_ % 2 != 0 || inner_ * k % 2 != 0))
    per_slice &= ~int64_t{1};
  if (outer == 1 || per_slice < 1) {
    require_bindable(kc_, data, "Gather");
    require_bindable(kc_, output, "Gather");
  }
  const Tensor flat_indices = indices.reshape({k});
  const Tensor d3 = data.reshape({outer, axis_dim_, inner_}), o3 = output.reshape({outer, k, inner_});
  for (int64_t r0 = 0; r0 < outer; r0 += per_slice) {
    const int64_t r1 = std::min(outer, r0 + per_slice);
    const Tensor d_slice = d3.slice_outer(r0, r1);
    slice_plan(d_slice.shape(), flat_indices.shape())
        .record(recorder, d_slice, flat_indices, o3.slice_outer(r0, r1), host_indices);
  }
}

void Gather::record(gpu::CommandRecorder& recorder, const Tensor& data, const Tensor& indices,
                    const Tensor& output, std::optional<std::span<const int64_t>> host_indices) const {
  check_tensors(data, indices, output, host_indices);
  if (count_ == 0) return;
  if (!fits_one_binding(kc_.gpu, data) || !fits_one_binding(kc_.gpu, output)) {
    record_in_slices(recorder, data, indices, output, host_indices);
    return;
  }
  if (count_ > INT32_MAX || data.numel() > INT32_MAX)
    throw std::invalid_argument("Gather: more than 2^31 elements");
  const bool half = data.dtype() == DType::f16;
  GatherUniforms u{};
  u.out_offset = output.element_offset(kc_.gpu);
  u.in_offset = data.element_offset(kc_.gpu);
  u.indices_offset = indices.element_offset(kc_.gpu);
  u.axis_dim = static_cast<int32_t>(axis_dim_);
  u.count_k = static_cast<uint32_t>(indices.numel());
  u.inner = static_cast<uint32_t>(inner_);
  // The output is one contiguous row; f16 invocations each own one output word.
  u.run_length = static_cast<uint32_t>(count_);
  u.words_per_row = half ? static_cast<uint32_t>(count_ / 2 + 1) : 1;
  u.threads = half ? u.words_per_row : static_cast<uint32_t>(count_);
  const auto workgroups =
      gpu::split_workgroups((u.threads + kWorkgroupSize - 1) / kWorkgroupSize, kc_.gpu.limits());
  recorder.dispatch(*pipeline_, {data.binding(kc_.gpu), indices.binding(kc_.gpu), output.binding(kc_.gpu)},
                    &u, sizeof(u), workgroups, "Gather");
}

void record_gather(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& data,
                   const Tensor& indices, int64_t axis, const Tensor& output,
                   std::optional<std::span<const int64_t>> host_indices) {
  const Shape expected = gather_output_shape(data.shape(), indices.shape(), axis);
  if (output.shape() != expected) {
    throw std::invalid_argument(fmt::format("Gather: output must be {}, got {}", shape_string(expected),
                                            shape_string(output.shape())));
  }
  const Gather plan(kc, {data.shape(), data.dtype(), indices.shape(), indices.dtype(), axis});
  plan.record(recorder, data, indices, output, host_indices);
}

}  // namespace onda::kernels
