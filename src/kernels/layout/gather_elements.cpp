#include "kernels/layout/gather_elements.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/layout/gather.h"
#include "kernels/layout/layout_common.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr uint32_t kWorkgroupSize = 256;
constexpr size_t kMaxRank = 8;

// Mirrors `Params` in gather_elements.wgsl.
struct GatherElementsUniforms {
  uint32_t threads, words_per_row, run_length, out_offset;
  uint32_t in_offset, indices_offset;
  int32_t axis_dim;
  uint32_t rank, axis, pad0, pad1, pad2;
  uint32_t out_shape[kMaxRank];
  uint32_t data_strides[kMaxRank];
};

}  // namespace

void record_gather_elements(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& data,
                            const Tensor& indices, int64_t axis, const Tensor& output,
                            std::optional<std::span<const int64_t>> host_indices) {
  const Shape& ds = data.shape();
  const Shape& is = indices.shape();
  if (ds.size() != is.size() || ds.empty()) {
    throw std::invalid_argument(fmt::format("GatherElements: data {} and indices {} must have one rank >= 1",
                                            shape_string(ds), shape_string(is)));
  }
  if (ds.size() > kMaxRank) throw std::invalid_argument("GatherElements: rank above 8");
  if (axis < 0 || axis >= static_cast<int64_t>(ds.size())) {
    throw std::invalid_argument(fmt::format("GatherElements: axis {} out of range", axis));
  }
  for (size_t d = 0; d < ds.size(); ++d) {
    if (static_cast<int64_t>(d) != axis && is[d] > ds[d]) {
      throw std::invalid_argument(fmt::format("GatherElements: indices {} exceed data {} on dim {}",
                                              shape_string(is), shape_string(ds), d));
    }
  }
  if (output.shape() != is) {
    throw std::invalid_argument(fmt::format("GatherElements: output must be {}, got {}", shape_string(is),
                                            shape_string(output.shape())));
  }
  if (indices.dtype() != DType::i32 && indices.dtype() != DType::i64) {
    throw std::invalid_argument(
        fmt::format("GatherElements: indices must be int32 or int64, got {}", dtype_name(indices.dtype())));
  }
  require_same_dtype("GatherElements", data, output);
  const int64_t axis_dim = ds[axis];
  if (host_indices) check_gather_indices(*host_indices, axis_dim, "GatherElements");
  const int64_t count = output.numel();
  if (count == 0) return;
  if (axis_dim == 0) throw std::out_of_range("GatherElements: indices into an empty axis");
  require_bindable(kc, data, "GatherElements");
  require_bindable(kc, output, "GatherElements");
  if (count > INT32_MAX || data.numel() > INT32_MAX)
    throw std::invalid_argument("GatherElements: more than 2^31 elements");

  const bool half = data.dtype() == DType::f16;
  GatherElementsUniforms u{};
  u.out_offset = output.element_offset(kc.gpu);
  u.in_offset = data.element_offset(kc.gpu);
  u.indices_offset = indices.element_offset(kc.gpu);
  u.axis_dim = static_cast<int32_t>(axis_dim);
  u.rank = static_cast<uint32_t>(ds.size());
  u.axis = static_cast<uint32_t>(axis);
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(ds.size()) - 1; d >= 0; --d) {
    u.out_shape[d] = static_cast<uint32_t>(is[d]);
    u.data_strides[d] = static_cast<uint32_t>(stride);
    stride *= ds[d];
  }
  u.run_length = static_cast<uint32_t>(count);
  u.words_per_row = half ? static_cast<uint32_t>(count / 2 + 1) : 1;
  u.threads = half ? u.words_per_row : static_cast<uint32_t>(count);
  const auto& pipeline = shader_pipeline(kc.pipelines, "layout/gather_elements.wgsl",
                                         {{"HALF", half ? "1" : "0"}}, "layout GatherElements");
  const auto workgroups =
      gpu::split_workgroups((u.threads + kWorkgroupSize - 1) / kWorkgroupSize, kc.gpu.limits());
  recorder.dispatch(pipeline, {data.binding(kc.gpu), indices.binding(kc.gpu), output.binding(kc.gpu)}, &u,
                    sizeof(u), workgroups, "GatherElements");
}

}  // namespace onda::kernels
