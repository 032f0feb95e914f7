#include "kernels/reduce/top_k.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/common/tensor_access.h"
#include "kernels/shader_template.h"

namespace onda::kernels {

void record_top_k(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x, int64_t axis,
                  int64_t k, bool largest, const Tensor& values, const Tensor& indices) {
  const Shape& shape = x.shape();
  if (axis < 0 || axis >= x.rank())
    throw std::invalid_argument(fmt::format("top k: axis {} out of range for rank {}", axis, x.rank()));
  if (!is_float(x.dtype()))
    throw std::invalid_argument(
        fmt::format("top k: float16/float32 input required, got {}", dtype_name(x.dtype())));
  if (k < 0 || k > shape[axis])
    throw std::invalid_argument(fmt::format("top k: k = {} outside 0..{} (the axis length)", k, shape[axis]));
  Shape out_shape = shape;
  out_shape[axis] = k;
  if (values.shape() != out_shape || values.dtype() != x.dtype() || indices.shape() != out_shape ||
      (indices.dtype() != DType::i32 && indices.dtype() != DType::i64)) {
    throw std::invalid_argument(fmt::format("top k: outputs must be {} of the input's dtype and int indices",
                                            shape_string(out_shape)));
  }
  if (x.numel() == 0 || k == 0) return;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= shape[d];
  struct {
    uint32_t outer, length, inner, k, x_offset, values_offset, indices_offset, pad;
  } u{};
  u.outer = static_cast<uint32_t>(outer);
  u.length = static_cast<uint32_t>(shape[axis]);
  u.inner = static_cast<uint32_t>(inner);
  u.k = static_cast<uint32_t>(k);
  u.x_offset = x.element_offset(kc.gpu);
  u.values_offset = values.element_offset(kc.gpu);
  u.indices_offset = indices.element_offset(kc.gpu);
  const TemplateValues v = {
      {"X_ACCESS", tensor_access("x", 0, x.dtype(), false)},
      {"Y_ACCESS", tensor_access("y", 1, values.dtype(), true)},
      {"LARGEST", largest ? "1" : "0"},
  };
  const auto& pipeline = shader_pipeline(kc.pipelines, "reduce/top_k.wgsl", v, "top_k");
  recorder.dispatch(pipeline, {x.binding(kc.gpu), values.binding(kc.gpu), indices.binding(kc.gpu)}, &u,
                    sizeof(u), gpu::split_workgroups((x.numel() + 255) / 256, kc.gpu.limits()), "top_k");
}

}  // namespace onda::kernels
