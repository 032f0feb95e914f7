#include "kernels/layout/scatter_nd.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/layout/index_map.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr int kMaxRank = 8;
constexpr uint32_t kWorkgroupSize = 256;

// Mirrors `Params` in scatter_nd.wgsl.
struct ScatterNdUniforms {
  uint32_t threads, slice, depth, in_offset;
  uint32_t indices_offset, out_offset, pad0, pad1;
  int32_t shape[kMaxRank];
  uint32_t strides[kMaxRank];
};

bool same_storage(const Tensor& a, const Tensor& b) {
  return a.buffer().Get() == b.buffer().Get() && a.byte_offset() == b.byte_offset();
}

}  // namespace

void record_scatter_nd(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& data,
                       const Tensor& indices, const Tensor& updates, const Tensor& output,
                       std::optional<std::span<const int64_t>> host_indices) {
  const Shape& ds = data.shape();
  const Shape& is = indices.shape();
  if (output.shape() != ds) {
    throw std::invalid_argument(
        fmt::format("ScatterND: output must be {}, got {}", shape_string(ds), shape_string(output.shape())));
  }
  if (indices.dtype() != DType::i32 && indices.dtype() != DType::i64) {
    throw std::invalid_argument(
        fmt::format("ScatterND: indices must be int32 or int64, got {}", dtype_name(indices.dtype())));
  }
  require_same_dtype("ScatterND", data, output);
  require_same_dtype("ScatterND", updates, output);
  if (is.empty()) throw std::invalid_argument("ScatterND: indices must have rank >= 1");
  const int64_t q = is.back();
  if (q < 1 || q > static_cast<int64_t>(ds.size()) || q > kMaxRank) {
    throw std::invalid_argument(
        fmt::format("ScatterND: index tuples of length {} for data {}", q, shape_string(ds)));
  }
  Shape expected_updates(is.begin(), is.end() - 1);
  expected_updates.insert(expected_updates.end(), ds.begin() + q, ds.end());
  if (updates.shape() != expected_updates) {
    throw std::invalid_argument(fmt::format("ScatterND: updates must be {}, got {}",
                                            shape_string(expected_updates), shape_string(updates.shape())));
  }
  const int64_t rows = indices.numel() / q;
  if (host_indices) {
    if (static_cast<int64_t>(host_indices->size()) != indices.numel()) {
      throw std::invalid_argument("ScatterND: host indices do not match the indices tensor");
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < q; ++j) {
        const int64_t v = (*host_indices)[r * q + j], n = ds[j];
        if (v < -n || v >= n) {
          throw std::out_of_range(
              fmt::format("ScatterND: index {} in tuple {} is outside [{}, {}) of dim {}", v, r, -n, n, j));
        }
      }
    }
  }

  if (!same_storage(data, output)) record_copy(kc, recorder, data, output);
  const int64_t count = updates.numel();
  if (count == 0) return;
  require_bindable(kc, updates, "ScatterND");
  require_bindable(kc, output, "ScatterND");
  if (count > INT32_MAX || output.numel() > INT32_MAX)
    throw std::invalid_argument("ScatterND: more than 2^31 elements");

  const auto strides = contiguous_strides(ds);
  ScatterNdUniforms u{};
  u.threads = static_cast<uint32_t>(count);
  u.slice = static_cast<uint32_t>(std::max<int64_t>(count / std::max<int64_t>(rows, 1), 1));
  u.depth = static_cast<uint32_t>(q);
  u.in_offset = updates.element_offset(kc.gpu);
  u.indices_offset = indices.element_offset(kc.gpu);
  u.out_offset = output.element_offset(kc.gpu);
  for (int64_t j = 0; j < q; ++j) {
    u.shape[j] = static_cast<int32_t>(ds[j]);
    u.strides[j] = static_cast<uint32_t>(strides[j]);
  }
  const bool half = data.dtype() == DType::f16;
  const auto& pipeline = shader_pipeline(kc.pipelines, "layout/scatter_nd.wgsl", {{"HALF", half ? "1" : "0"}},
                                         "layout ScatterND");
  const auto workgroups =
      gpu::split_workgroups((u.threads + kWorkgroupSize - 1) / kWorkgroupSize, kc.gpu.limits());
  recorder.dispatch(pipeline, {updates.binding(kc.gpu), indices.binding(kc.gpu), output.binding(kc.gpu)}, &u,
                    sizeof(u), workgroups, "ScatterND");
}

}  // namespace onda::kernels
