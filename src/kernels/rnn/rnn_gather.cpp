#include "kernels/rnn/rnn_gather.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/common/tensor_access.h"
#include "kernels/rnn/rnn_shaders.h"
#include "kernels/rnn/rnn_uniforms.h"

namespace onda::kernels::rnn {
namespace {

// Mirrors GatherParams in rnn_gather.wgsl.
struct GatherUniforms {
  uint32_t dims[4];
  uint32_t strides[4];
  uint32_t dst_offset[4];
};

}  // namespace

void record_gather(const KernelContext& k, gpu::CommandRecorder& recorder, const Tensor& src,
                   const Tensor& dst, uint32_t dst_offset, std::array<int64_t, 3> dims,
                   std::array<int64_t, 3> strides, const char* name) {
  const int64_t total = dims[0] * dims[1] * dims[2];
  if (total == 0) return;
  const auto& pipeline = rnn_pipeline(
      k.pipelines, {"rnn/rnn_gather.wgsl", {}, {tensor_access("src", 0, src.dtype(), false)}}, "rnn_gather");
  GatherUniforms u{};
  for (int i = 0; i < 3; ++i) {
    u.dims[i] = u32(dims[i], "gather extent");
    u.strides[i] = u32(strides[i], "gather stride");
  }
  u.dims[3] = u32(total, "gather size");
  u.strides[3] = src.element_offset(k.gpu);
  u.dst_offset[0] = dst.element_offset(k.gpu) + dst_offset;
  recorder.dispatch(pipeline, {src.binding(k.gpu), dst.binding(k.gpu)}, &u, sizeof u,
                    gpu::split_workgroups((total + 255) / 256, k.gpu.limits()), name);
}

void record_zero(gpu::CommandRecorder& recorder, const Tensor& t, uint64_t first, uint64_t count) {
  recorder.clear(t.buffer(), t.byte_offset() + first * 4, count * 4);
}

void require_shape(const Tensor& t, const Shape& want, const char* name) {
  if (t.shape() != want) {
    throw std::invalid_argument(
        fmt::format("{} has shape {}, expected {}", name, shape_string(t.shape()), shape_string(want)));
  }
}

void require_float(const Tensor& t, const char* name) {
  if (t.dtype() != DType::f32 && t.dtype() != DType::f16) {
    throw std::invalid_argument(fmt::format("{} must be float32 or float16", name));
  }
}

}  // namespace onda::kernels::rnn
