#include "kernels/layout/grid_sample.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/common/tensor_access.h"
#include "kernels/layout/layout_common.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

// Mirrors `Params` in grid_sample.wgsl.
struct GridSampleUniforms {
  uint32_t count, channels, rank, align_corners;
  uint32_t x_offset, grid_offset, y_offset, pad;
  uint32_t in_size[4];
  uint32_t out_size[4];
};

}  // namespace

Shape grid_sample_output_shape(const Shape& input, const Shape& grid) {
  const size_t r = input.size() < 2 ? 0 : input.size() - 2;
  if (r < 1 || r > 3)
    throw std::invalid_argument(fmt::format(
        "GridSample: input {} must have rank 3, 4 or 5 ([N, C, spatial...])", shape_string(input)));
  if (grid.size() != r + 2 || grid.back() != static_cast<int64_t>(r) || grid[0] != input[0])
    throw std::invalid_argument(
        fmt::format("GridSample: grid {} must be [N={}, {} output dims, {}] for input {}", shape_string(grid),
                    input[0], r, r, shape_string(input)));
  Shape out = {input[0], input[1]};
  out.insert(out.end(), grid.begin() + 1, grid.end() - 1);
  return out;
}

void record_grid_sample(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                        const Tensor& grid, const GridSampleAttributes& attributes, const Tensor& output) {
  const Shape want = grid_sample_output_shape(input.shape(), grid.shape());
  if (output.shape() != want)
    throw std::invalid_argument(fmt::format("GridSample: output must be {}, got {}", shape_string(want),
                                            shape_string(output.shape())));
  require_same_dtype("GridSample", input, output);
  if (output.numel() == 0) return;
  const int64_t r = input.rank() - 2;
  for (int64_t d = 0; d < r; ++d)
    if (input.shape()[2 + d] == 0)
      throw std::invalid_argument(
          fmt::format("GridSample: input {} has an empty spatial dim", shape_string(input.shape())));
  if (output.numel() >= INT32_MAX || input.numel() >= INT32_MAX)
    throw std::invalid_argument("GridSample: 2^31 elements or more");
  require_bindable(kc, input, "GridSample input");
  require_bindable(kc, grid, "GridSample grid");
  require_bindable(kc, output, "GridSample output");
  GridSampleUniforms u{};
  u.count = static_cast<uint32_t>(output.numel());
  u.channels = static_cast<uint32_t>(input.shape()[1]);
  u.rank = static_cast<uint32_t>(r);
  u.align_corners = attributes.align_corners ? 1 : 0;
  u.x_offset = input.element_offset(kc.gpu);
  u.grid_offset = grid.element_offset(kc.gpu);
  u.y_offset = output.element_offset(kc.gpu);
  for (int64_t d = 0; d < r; ++d) {
    u.in_size[d] = static_cast<uint32_t>(input.shape()[2 + d]);
    u.out_size[d] = static_cast<uint32_t>(output.shape()[2 + d]);
  }
  const int taps = attributes.mode == GridSampleMode::Nearest  ? 1
                   : attributes.mode == GridSampleMode::Linear ? 2
                                                               : 4;
  const TemplateValues values = {
      {"X_ACCESS", tensor_access("x", 0, input.dtype(), false)},
      {"GRID_ACCESS", tensor_access("grid", 1, grid.dtype(), false)},
      {"Y_ACCESS", tensor_access("y", 2, output.dtype(), true)},
      {"MODE", std::to_string(static_cast<int>(attributes.mode))},
      {"PADDING", std::to_string(static_cast<int>(attributes.padding))},
      {"TAPS", std::to_string(taps)},
  };
  const auto& pipeline =
      shader_pipeline(kc.pipelines, "layout/grid_sample.wgsl", values, "layout GridSample");
  recorder.dispatch(pipeline, {input.binding(kc.gpu), grid.binding(kc.gpu), output.binding(kc.gpu)}, &u,
                    sizeof(u), gpu::split_workgroups((output.numel() + 255) / 256, kc.gpu.limits()),
                    "GridSample");
}

}  // namespace onda::kernels
