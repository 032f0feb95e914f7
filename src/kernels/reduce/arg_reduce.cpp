#include "kernels/reduce/arg_reduce.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/common/tensor_access.h"
#include "kernels/shader_template.h"

namespace onda::kernels {

void record_arg_reduce(const KernelContext& kc, gpu::CommandRecorder& recorder, ArgReduceOp op,
                       const Tensor& x, int64_t axis, bool last_index, const Tensor& y) {
  const Shape& shape = x.shape();
  if (axis < 0 || axis >= x.rank())
    throw std::invalid_argument(fmt::format("arg reduce: axis {} out of range", axis));
  if (y.dtype() != DType::i32 && y.dtype() != DType::i64)
    throw std::invalid_argument("arg reduce: output must be int");
  if (shape[axis] == 0) throw std::invalid_argument("arg reduce: the reduced axis is empty");
  struct {
    uint32_t outer, reduce, inner, x_offset, y_offset, pad[3];
  } u{};
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= shape[d];
  if (y.numel() != outer * inner) {
    throw std::invalid_argument(fmt::format("arg reduce: output {} does not match {} reduced over axis {}",
                                            shape_string(y.shape()), shape_string(shape), axis));
  }
  if (y.numel() == 0) return;
  u.outer = static_cast<uint32_t>(outer);
  u.reduce = static_cast<uint32_t>(shape[axis]);
  u.inner = static_cast<uint32_t>(inner);
  u.x_offset = x.element_offset(kc.gpu);
  u.y_offset = y.element_offset(kc.gpu);
  const TemplateValues v = {
      {"X_ACCESS", tensor_access("x", 0, x.dtype(), false)},
      {"COMPARE", op == ArgReduceOp::Max ? ">" : "<"},
      {"LAST_INDEX", last_index ? "1" : "0"},
  };
  const auto& pipeline = shader_pipeline(kc.pipelines, "reduce/arg_reduce.wgsl", v, "arg_reduce");
  recorder.dispatch(pipeline, {x.binding(kc.gpu), y.binding(kc.gpu)}, &u, sizeof(u),
                    gpu::split_workgroups((outer * inner + 255) / 256, kc.gpu.limits()), "arg_reduce");
}

}  // namespace onda::kernels
