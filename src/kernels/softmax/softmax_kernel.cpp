#include "kernels/softmax/softmax_kernel.h"

#include <fmt/format.h>

#include <stdexcept>

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
  if (y.shape() != x.shape() || y.dtype() != x.dtype()) throw std::invalid_argument("Softmax: output must match input");
  if (x.numel() == 0) return;
  const Shape& s = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= s[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= s[d];
  const int64_t size = rank == 0 ? 1 : s[axis];
  struct {
    uint32_t outer, size, inner, x_offset, y_offset, pad[3];
  } u{static_cast<uint32_t>(outer), static_cast<uint32_t>(size), static_cast<uint32_t>(inner),
      x.element_offset(kc.gpu), y.element_offset(kc.gpu), {0, 0, 0}};
  const bool inner_one = inner == 1;
  TemplateValues v = {{"X_ACCESS", tensor_access_wgsl("x", 0, x.dtype(), false)},
                      {"Y_ACCESS", tensor_access_wgsl("y", 1, y.dtype(), true)},
                      {"LOG_SOFTMAX", log_softmax ? "1" : "0"},
                      {"INNER_ONE", inner_one ? "1" : "0"}};
  const auto& pipeline = kc.pipelines.get(render_shader("softmax/softmax.wgsl", v), {}, "softmax");
  const int64_t groups = inner_one ? outer : (outer * inner + 255) / 256;
  recorder.dispatch(pipeline, {x.binding(kc.gpu), y.binding(kc.gpu)}, &u, sizeof(u),
                    gpu::split_workgroups(groups, kc.gpu.limits()), log_softmax ? "LogSoftmax" : "Softmax");
}

}  // namespace onda::kernels
