#include "kernels/softmax/softmax_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "gpu/gpu_error.h"
#include "kernels/common/binding_window.h"
#include "kernels/common/tensor_access.h"
#include "kernels/shader_template.h"

namespace onda::kernels {

void record_softmax(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x, int64_t axis,
                    bool log_softmax, const Tensor& y) {
  const int64_t rank = x.rank();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) {
    throw std::invalid_argument(fmt::format("Softmax: axis out of range for rank {}", rank));
  }
  if (y.shape() != x.shape() || y.dtype() != x.dtype())
    throw std::invalid_argument("Softmax: output must match input");
  if (x.numel() == 0) return;
  const Shape& s = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= s[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= s[d];
  const int64_t size = rank == 0 ? 1 : s[axis];
  if (!fits_one_binding(kc.gpu, x) || !fits_one_binding(kc.gpu, y)) {
    // Larger than one storage binding: the rows before `axis` are independent, so slices of them
    // run as views (a float16 slice must start on a whole word).
    const int64_t row = size * inner;
    int64_t per_slice = window_capacity(kc.gpu, x.dtype()) / std::max<int64_t>(row, 1);
    if (x.dtype() == DType::f16 && row % 2 != 0) per_slice &= ~int64_t{1};
    if (per_slice < 1 || outer == 1) {
      throw gpu::DeviceLimitError(
          fmt::format("Softmax: {} rows of {} elements do not fit the storage binding limit of {} bytes",
                      outer, row, kc.gpu.limits().maxStorageBufferBindingSize));
    }
    const Tensor xs = x.reshape({outer, size, inner}), ys = y.reshape({outer, size, inner});
    for (int64_t r0 = 0; r0 < outer; r0 += per_slice) {
      const int64_t r1 = std::min(outer, r0 + per_slice);
      record_softmax(kc, recorder, xs.slice_outer(r0, r1), 1, log_softmax, ys.slice_outer(r0, r1));
    }
    return;
  }
  struct {
    uint32_t outer, size, inner, x_offset, y_offset, pad[3];
  } u{static_cast<uint32_t>(outer), static_cast<uint32_t>(size), static_cast<uint32_t>(inner),
      x.element_offset(kc.gpu),     y.element_offset(kc.gpu),    {0, 0, 0}};
  const bool inner_one = inner == 1;
  if (inner_one && size <= kRegisterRowMax) {
    // Rows in registers (softmax_rows.wgsl): RT invocations per row, the fewest that keep V <= 16.
    uint32_t rt = 1;
    while ((size + rt - 1) / rt > 16) rt *= 2;
    const uint32_t values = static_cast<uint32_t>((size + rt - 1) / rt);
    const bool subgroup_reduce = kc.gpu.has(gpu::Feature::Subgroups) && kc.gpu.subgroup_min_size() >= rt;
    TemplateValues v = {{"X_ACCESS", tensor_access("x", 0, x.dtype(), false)},
                        {"Y_ACCESS", tensor_access("y", 1, y.dtype(), true)},
                        {"LOG_SOFTMAX", log_softmax ? "1" : "0"},
                        {"RT", std::to_string(rt)},
                        {"V", std::to_string(values)},
                        {"SUBGROUP_REDUCE", subgroup_reduce ? "1" : "0"}};
    const auto& pipeline = shader_pipeline(kc.pipelines, "softmax/softmax_rows.wgsl", v, "softmax_rows");
    const int64_t rows_per_group = 256 / rt;
    recorder.dispatch(pipeline, {x.binding(kc.gpu), y.binding(kc.gpu)}, &u, sizeof(u),
                      gpu::split_workgroups((outer + rows_per_group - 1) / rows_per_group, kc.gpu.limits()),
                      log_softmax ? "LogSoftmax" : "Softmax");
    return;
  }
  TemplateValues v = {{"X_ACCESS", tensor_access("x", 0, x.dtype(), false)},
                      {"Y_ACCESS", tensor_access("y", 1, y.dtype(), true)},
                      {"LOG_SOFTMAX", log_softmax ? "1" : "0"},
                      {"INNER_ONE", inner_one ? "1" : "0"}};
  const auto& pipeline = shader_pipeline(kc.pipelines, "softmax/softmax.wgsl", v, "softmax");
  const int64_t groups = inner_one ? outer : (outer * inner + 255) / 256;
  recorder.dispatch(pipeline, {x.binding(kc.gpu), y.binding(kc.gpu)}, &u, sizeof(u),
                    gpu::split_workgroups(groups, kc.gpu.limits()), log_softmax ? "LogSoftmax" : "Softmax");
}

}  // namespace onda::kernels
