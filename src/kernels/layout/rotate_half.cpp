#include "kernels/layout/rotate_half.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/common/binding_window.h"
#include "kernels/common/tensor_access.h"
#include "kernels/shader_template.h"

namespace onda::kernels {

void record_rotate_half(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x,
                        const Tensor& y) {
  if (x.shape() != y.shape() || x.dtype() != y.dtype() || x.rank() < 1) {
    throw std::invalid_argument(fmt::format("rotate_half: x {} {} and y {} {} must match (rank >= 1)",
                                            shape_string(x.shape()), dtype_name(x.dtype()),
                                            shape_string(y.shape()), dtype_name(y.dtype())));
  }
  const int64_t last = x.shape().back();
  if (last % 2 != 0)
    throw std::invalid_argument(fmt::format("rotate_half: the last axis ({}) must be even", last));
  if (x.numel() == 0) return;
  const auto& pipeline = shader_pipeline(kc.pipelines, "layout/rotate_half.wgsl",
                                         {{"X_ACCESS", tensor_access("x", 0, x.dtype(), false)},
                                          {"Y_ACCESS", tensor_access("y", 1, y.dtype(), true)}},
                                         "rotate_half");
  // Whole rows per dispatch, few enough that each tensor fits one storage binding.
  const wgpu::Limits& limits = kc.gpu.limits();
  const int64_t rows = x.numel() / last;
  const int64_t per_slice = rows_per_window(kc.gpu, x.dtype(), rows, last);
  if (per_slice < 1) {
    throw std::invalid_argument(
        fmt::format("rotate_half: one row ({} bytes) exceeds the storage binding limit",
                    static_cast<uint64_t>(last) * device_element_size(x.dtype())));
  }
  const Tensor xr = x.reshape({rows, last}), yr = y.reshape({rows, last});
  for (int64_t begin = 0; begin < rows; begin += per_slice) {
    const int64_t end = std::min(rows, begin + per_slice);
    const Tensor xs = xr.slice_outer(begin, end), ys = yr.slice_outer(begin, end);
    struct {
      uint32_t count, last, half, x_offset, y_offset, pad[3];
    } u{static_cast<uint32_t>((end - begin) * last),
        static_cast<uint32_t>(last),
        static_cast<uint32_t>(last / 2),
        xs.element_offset(kc.gpu),
        ys.element_offset(kc.gpu),
        {0, 0, 0}};
    recorder.dispatch(pipeline, {xs.binding(kc.gpu), ys.binding(kc.gpu)}, &u, sizeof(u),
                      gpu::split_workgroups((static_cast<uint64_t>(u.count) + 255) / 256, limits),
                      "RotateHalf");
  }
}

}  // namespace onda::kernels
