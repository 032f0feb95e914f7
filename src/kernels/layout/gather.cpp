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

void record_gather(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& data,
                   const Tensor& indices, int64_t axis, const Tensor& output,
                   std::optional<std::span<const int64_t>> host_indices) {
  const Shape expected = gather_output_shape(data.shape(), indices.shape(), axis);
  if (output.shape() != expected) {
    throw std::invalid_argument(fmt::format("Gather: output must be {}, got {}", shape_string(expected),
                                            shape_string(output.shape())));
  }
  if (indices.dtype() != DType::i32 && indices.dtype() != DType::i64) {
    throw std::invalid_argument(
        fmt::format("Gather: indices must be int32 or int64, got {}", dtype_name(indices.dtype())));
  }
  require_same_dtype("Gather", data, output);
  const int64_t axis_dim = data.shape()[axis];
  if (host_indices) {
    if (static_cast<int64_t>(host_indices->size()) != indices.numel()) {
      throw std::invalid_argument(fmt::format("Gather: {} host indices for an indices tensor of {}",
                                              host_indices->size(), shape_string(indices.shape())));
    }
    check_gather_indices(*host_indices, axis_dim);
  }
  const int64_t count = output.numel();
  if (count == 0) return;
  if (axis_dim == 0) throw std::out_of_range("Gather: indices into an empty axis");
  if (!fits_one_binding(kc.gpu, data) || !fits_one_binding(kc.gpu, output)) {
    // Larger than one storage binding: the rows before `axis` gather independently, so slices of
    // them run as views of data and output (whole words for float16).
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= data.shape()[d];
    for (size_t d = axis + 1; d < data.shape().size(); ++d) inner *= data.shape()[d];
    const int64_t k = indices.numel();
    const int64_t row = std::max(axis_dim, k) * inner;
    int64_t per_slice = window_capacity(kc.gpu, data.dtype()) / std::max<int64_t>(row, 1);
    if (data.dtype() == DType::f16 && (inner * axis_dim % 2 != 0 || inner * k % 2 != 0))
      per_slice &= ~int64_t{1};
    if (outer == 1 || per_slice < 1) {
      require_bindable(kc, data, "Gather");
      require_bindable(kc, output, "Gather");
    }
    const Tensor flat_indices = indices.reshape({k});
    const Tensor d3 = data.reshape({outer, axis_dim, inner}), o3 = output.reshape({outer, k, inner});
    for (int64_t r0 = 0; r0 < outer; r0 += per_slice) {
      const int64_t r1 = std::min(outer, r0 + per_slice);
      record_gather(kc, recorder, d3.slice_outer(r0, r1), flat_indices, 1, o3.slice_outer(r0, r1),
                    host_indices);
    }
    return;
  }
  if (count > INT32_MAX || data.numel() > INT32_MAX)
    throw std::invalid_argument("Gather: more than 2^31 elements");

  int64_t inner = 1;
  for (size_t d = axis + 1; d < data.shape().size(); ++d) inner *= data.shape()[d];
  const bool half = data.dtype() == DType::f16;
  GatherUniforms u{};
  u.out_offset = output.element_offset(kc.gpu);
  u.in_offset = data.element_offset(kc.gpu);
  u.indices_offset = indices.element_offset(kc.gpu);
  u.axis_dim = static_cast<int32_t>(axis_dim);
  u.count_k = static_cast<uint32_t>(indices.numel());
  u.inner = static_cast<uint32_t>(inner);
  // The output is one contiguous row; f16 invocations each own one output word.
  u.run_length = static_cast<uint32_t>(count);
  u.words_per_row = half ? static_cast<uint32_t>(count / 2 + 1) : 1;
  u.threads = half ? u.words_per_row : static_cast<uint32_t>(count);
  const auto& pipeline =
      shader_pipeline(kc.pipelines, "layout/gather.wgsl", {{"HALF", half ? "1" : "0"}}, "layout Gather");
  const auto workgroups =
      gpu::split_workgroups((u.threads + kWorkgroupSize - 1) / kWorkgroupSize, kc.gpu.limits());
  recorder.dispatch(pipeline, {data.binding(kc.gpu), indices.binding(kc.gpu), output.binding(kc.gpu)}, &u,
                    sizeof(u), workgroups, "Gather");
}

}  // namespace onda::kernels
