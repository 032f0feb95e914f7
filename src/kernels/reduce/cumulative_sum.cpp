#include "kernels/reduce/cumulative_sum.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/common/tensor_access.h"
#include "kernels/shader_template.h"

namespace onda::kernels {

void record_cumulative_sum(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x,
                           int64_t axis, CumulativeSumOptions options, const Tensor& y) {
  const Shape& shape = x.shape();
  if (axis < 0 || axis >= x.rank())
    throw std::invalid_argument(
        fmt::format("cumulative sum: axis {} out of range for rank {}", axis, x.rank()));
  if (!is_float(x.dtype()))
    throw std::invalid_argument(
        fmt::format("cumulative sum: float16/float32 input required, got {}", dtype_name(x.dtype())));
  if (y.shape() != shape || y.dtype() != x.dtype())
    throw std::invalid_argument("cumulative sum: the output must have the input's shape and dtype");
  if (x.numel() == 0) return;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= shape[d];
  struct {
    uint32_t outer, length, inner, x_offset, y_offset, pad[3];
  } u{};
  u.outer = static_cast<uint32_t>(outer);
  u.length = static_cast<uint32_t>(shape[axis]);
  u.inner = static_cast<uint32_t>(inner);
  u.x_offset = x.element_offset(kc.gpu);
  u.y_offset = y.element_offset(kc.gpu);
  const TemplateValues v = {
      {"X_ACCESS", tensor_access("x", 0, x.dtype(), false)},
      {"Y_ACCESS", tensor_access("y", 1, y.dtype(), true)},
      {"EXCLUSIVE", options.exclusive ? "1" : "0"},
      {"REVERSE", options.reverse ? "1" : "0"},
  };
  const auto& pipeline = shader_pipeline(kc.pipelines, "reduce/cumulative_sum.wgsl", v, "cumulative_sum");
  recorder.dispatch(pipeline, {x.binding(kc.gpu), y.binding(kc.gpu)}, &u, sizeof(u),
                    gpu::split_workgroups((outer * inner + 255) / 256, kc.gpu.limits()), "cumulative_sum");
}

}  // namespace onda::kernels
