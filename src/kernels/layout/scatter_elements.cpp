#include "kernels/layout/scatter_elements.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/common/tensor_access.h"
#include "kernels/layout/gather.h"
#include "kernels/layout/layout_common.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr size_t kMaxRank = 8;

// Mirrors `Params` in scatter_elements.wgsl.
struct ScatterElementsUniforms {
  uint32_t count, rank, axis;
  int32_t axis_dim;
  uint32_t index_axis, data_offset, updates_offset, out_offset, indices_offset, pad0, pad1, pad2;
  uint32_t out_shape[kMaxRank];
  uint32_t index_shape[kMaxRank];
  uint32_t index_strides[kMaxRank];
};

const char* combine_expression(ScatterReduction r) {
  switch (r) {
    case ScatterReduction::None:
      return "b";
    case ScatterReduction::Add:
      return "a + b";
    case ScatterReduction::Mul:
      return "a * b";
    case ScatterReduction::Max:
      return "max(a, b)";
    case ScatterReduction::Min:
      return "min(a, b)";
  }
  return "b";
}

}  // namespace

void record_scatter_elements(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& data,
                             const Tensor& indices, const Tensor& updates, int64_t axis,
                             ScatterReduction reduction, const Tensor& output,
                             std::optional<std::span<const int64_t>> host_indices) {
  const Shape& ds = data.shape();
  const Shape& is = indices.shape();
  if (ds.empty() || ds.size() > kMaxRank || is.size() != ds.size() || updates.shape() != is) {
    throw std::invalid_argument(
        fmt::format("ScatterElements: data {}, indices {} and updates {} must share a rank "
                    "in 1..8, updates the indices' shape",
                    shape_string(ds), shape_string(is), shape_string(updates.shape())));
  }
  if (axis < 0 || axis >= static_cast<int64_t>(ds.size())) {
    throw std::invalid_argument(fmt::format("ScatterElements: axis {} out of range", axis));
  }
  for (size_t d = 0; d < ds.size(); ++d) {
    if (static_cast<int64_t>(d) != axis && is[d] > ds[d]) {
      throw std::invalid_argument(fmt::format("ScatterElements: indices {} exceed data {} on dim {}",
                                              shape_string(is), shape_string(ds), d));
    }
  }
  if (!is_float(data.dtype()) || updates.dtype() != data.dtype()) {
    throw std::invalid_argument("ScatterElements: data and updates must both be float32 or both float16");
  }
  if (indices.dtype() != DType::i32 && indices.dtype() != DType::i64) {
    throw std::invalid_argument("ScatterElements: indices must be int32 or int64");
  }
  require_same_dtype("ScatterElements", data, output);
  if (output.shape() != ds) throw std::invalid_argument("ScatterElements: output must have data's shape");
  if (host_indices) check_gather_indices(*host_indices, ds[axis], "ScatterElements");
  if (output.numel() == 0) return;
  for (const Tensor* t : {&data, &updates, &output}) require_bindable(kc, *t, "ScatterElements");
  if (output.numel() > INT32_MAX) throw std::invalid_argument("ScatterElements: more than 2^31 elements");

  ScatterElementsUniforms u{};
  u.count = static_cast<uint32_t>(output.numel());
  u.rank = static_cast<uint32_t>(ds.size());
  u.axis = static_cast<uint32_t>(axis);
  u.axis_dim = static_cast<int32_t>(ds[axis]);
  u.index_axis = static_cast<uint32_t>(is[axis]);
  u.data_offset = data.element_offset(kc.gpu);
  u.updates_offset = updates.element_offset(kc.gpu);
  u.out_offset = output.element_offset(kc.gpu);
  u.indices_offset = indices.element_offset(kc.gpu);
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(ds.size()) - 1; d >= 0; --d) {
    u.out_shape[d] = static_cast<uint32_t>(ds[d]);
    u.index_shape[d] = static_cast<uint32_t>(is[d]);
    u.index_strides[d] = static_cast<uint32_t>(stride);
    stride *= is[d];
  }
  const TemplateValues v = {
      {"DATA_ACCESS", tensor_access("data", 0, data.dtype(), false)},
      {"UPDATES_ACCESS", tensor_access("updates", 1, updates.dtype(), false)},
      {"OUT_ACCESS", tensor_access("out", 2, output.dtype(), true)},
      {"COMBINE", combine_expression(reduction)},
  };
  const auto& pipeline = shader_pipeline(kc.pipelines, "layout/scatter_elements.wgsl", v, "ScatterElements");
  recorder.dispatch(
      pipeline,
      {data.binding(kc.gpu), updates.binding(kc.gpu), output.binding(kc.gpu), indices.binding(kc.gpu)}, &u,
      sizeof(u), gpu::split_workgroups((u.count + 255) / 256, kc.gpu.limits()), "ScatterElements");
}

}  // namespace onda::kernels
