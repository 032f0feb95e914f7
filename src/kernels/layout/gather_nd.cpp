#include "kernels/layout/gather_nd.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/layout/layout_common.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr size_t kMaxTuple = 8;

// Mirrors `Params` in gather_nd.wgsl.
struct GatherNdUniforms {
  uint32_t threads, words_per_row, run_length, out_offset;
  uint32_t in_offset, indices_offset, q, inner;
  uint32_t tuples_per_batch, batch_stride, pad0, pad1;
  uint32_t dims[kMaxTuple];
  uint32_t strides[kMaxTuple];
};

}  // namespace

Shape gather_nd_output_shape(const Shape& data, const Shape& indices, int64_t batch_dims) {
  const int64_t r = static_cast<int64_t>(data.size()), m = static_cast<int64_t>(indices.size());
  if (m < 1 || batch_dims < 0 || batch_dims >= std::min(r, m)) {
    throw std::invalid_argument(fmt::format("GatherND: batch_dims {} does not fit data {} and indices {}",
                                            batch_dims, shape_string(data), shape_string(indices)));
  }
  const int64_t q = indices.back();
  if (q < 1 || q > r - batch_dims || q > static_cast<int64_t>(kMaxTuple)) {
    throw std::invalid_argument(
        fmt::format("GatherND: index tuples of length {} for data {} with batch_dims {}", q,
                    shape_string(data), batch_dims));
  }
  for (int64_t d = 0; d < batch_dims; ++d) {
    if (data[d] != indices[d]) {
      throw std::invalid_argument(fmt::format("GatherND: batch dim {} differs: data {} vs indices {}", d,
                                              shape_string(data), shape_string(indices)));
    }
  }
  Shape out(indices.begin(), indices.end() - 1);
  out.insert(out.end(), data.begin() + batch_dims + q, data.end());
  return out;
}

void record_gather_nd(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& data,
                      const Tensor& indices, int64_t batch_dims, const Tensor& output) {
  const Shape& ds = data.shape();
  const Shape& is = indices.shape();
  const Shape expected = gather_nd_output_shape(ds, is, batch_dims);
  if (output.shape() != expected) {
    throw std::invalid_argument(fmt::format("GatherND: output must be {}, got {}", shape_string(expected),
                                            shape_string(output.shape())));
  }
  if (indices.dtype() != DType::i32 && indices.dtype() != DType::i64) {
    throw std::invalid_argument("GatherND: indices must be int32 or int64");
  }
  require_same_dtype("GatherND", data, output);
  const int64_t count = output.numel();
  if (count == 0) return;
  require_bindable(kc, data, "GatherND");
  require_bindable(kc, output, "GatherND");
  if (count > INT32_MAX || data.numel() > INT32_MAX)
    throw std::invalid_argument("GatherND: more than 2^31 elements");
  const int64_t q = is.back();
  for (int64_t d = batch_dims; d < batch_dims + q; ++d) {
    if (ds[d] == 0) throw std::out_of_range("GatherND: indices into an empty dim");
  }
  GatherNdUniforms u{};
  int64_t inner = 1, batch_stride = 1, batches = 1;
  for (size_t d = batch_dims + q; d < ds.size(); ++d) inner *= ds[d];
  for (size_t d = batch_dims; d < ds.size(); ++d) batch_stride *= ds[d];
  for (int64_t d = 0; d < batch_dims; ++d) batches *= ds[d];
  int64_t stride = inner;
  for (int64_t j = q - 1; j >= 0; --j) {
    u.dims[j] = static_cast<uint32_t>(ds[batch_dims + j]);
    u.strides[j] = static_cast<uint32_t>(stride);
    stride *= ds[batch_dims + j];
  }
  const bool half = data.dtype() == DType::f16;
  u.out_offset = output.element_offset(kc.gpu);
  u.in_offset = data.element_offset(kc.gpu);
  u.indices_offset = indices.element_offset(kc.gpu);
  u.q = static_cast<uint32_t>(q);
  u.inner = static_cast<uint32_t>(inner);
  u.tuples_per_batch = static_cast<uint32_t>(indices.numel() / q / batches);
  u.batch_stride = static_cast<uint32_t>(batch_stride);
  u.run_length = static_cast<uint32_t>(count);
  u.words_per_row = half ? static_cast<uint32_t>(count / 2 + 1) : 1;
  u.threads = half ? u.words_per_row : static_cast<uint32_t>(count);
  const auto& pipeline =
      shader_pipeline(kc.pipelines, "layout/gather_nd.wgsl", {{"HALF", half ? "1" : "0"}}, "layout GatherND");
  recorder.dispatch(pipeline, {data.binding(kc.gpu), indices.binding(kc.gpu), output.binding(kc.gpu)}, &u,
                    sizeof(u), gpu::split_workgroups((u.threads + 255) / 256, kc.gpu.limits()), "GatherND");
}

}  // namespace onda::kernels
