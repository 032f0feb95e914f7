#include "kernels/reduce/determinant.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/common/tensor_access.h"
#include "kernels/shader_template.h"

namespace onda::kernels {

void record_determinant(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x,
                        const Tensor& y) {
  const Shape& shape = x.shape();
  if (x.rank() < 2 || shape[x.rank() - 1] != shape[x.rank() - 2])
    throw std::invalid_argument(fmt::format("determinant: input {} is not [..., n, n]", shape_string(shape)));
  const int64_t n = shape.back();
  if (n > kMaxDeterminantSize)
    throw std::invalid_argument(fmt::format("determinant: {}x{} matrices, at most {}x{} supported", n, n,
                                            kMaxDeterminantSize, kMaxDeterminantSize));
  if (!is_float(x.dtype()))
    throw std::invalid_argument(
        fmt::format("determinant: float16/float32 input required, got {}", dtype_name(x.dtype())));
  const Shape batch_shape(shape.begin(), shape.end() - 2);
  if (y.shape() != batch_shape || y.dtype() != x.dtype())
    throw std::invalid_argument(
        fmt::format("determinant: output must be {} of the input's dtype", shape_string(batch_shape)));
  const int64_t batch = y.numel();
  if (batch == 0) return;
  struct {
    uint32_t batch, n, x_offset, y_offset;
  } u{};
  u.batch = static_cast<uint32_t>(batch);
  u.n = static_cast<uint32_t>(n);
  u.x_offset = x.element_offset(kc.gpu);
  u.y_offset = y.element_offset(kc.gpu);
  const TemplateValues v = {
      {"X_ACCESS", tensor_access("x", 0, x.dtype(), false)},
      {"Y_ACCESS", tensor_access("y", 1, y.dtype(), true)},
      {"MAX_N", std::to_string(kMaxDeterminantSize)},
  };
  const auto& pipeline = shader_pipeline(kc.pipelines, "reduce/determinant.wgsl", v, "determinant");
  recorder.dispatch(pipeline, {x.binding(kc.gpu), y.binding(kc.gpu)}, &u, sizeof(u),
                    gpu::split_workgroups((batch + 63) / 64, kc.gpu.limits()), "determinant");
}

}  // namespace onda::kernels
