#include "kernels/layout/expand_tile.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/layout/index_map.h"
#include "kernels/layout/layout_plan.h"

namespace onda::kernels {

Shape expand_output_shape(const Shape& input, std::span<const int64_t> shape) {
  const size_t rank = std::max(input.size(), shape.size());
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t a = d + input.size() >= rank ? input[d + input.size() - rank] : 1;
    const int64_t b = d + shape.size() >= rank ? shape[d + shape.size() - rank] : 1;
    if (a != b && a != 1 && b != 1) {
      throw std::invalid_argument(fmt::format("Expand: input {} does not broadcast to shape [{}]",
                                              shape_string(input), fmt::join(shape, ", ")));
    }
    out[d] = a == 1 ? b : a;
  }
  return out;
}

IndexMap expand_map(const Shape& in, const Shape& out) {
  if (in.size() > out.size()) {
    throw std::invalid_argument(
        fmt::format("Expand: output {} has lower rank than input {}", shape_string(out), shape_string(in)));
  }
  const size_t lead = out.size() - in.size();
  const auto in_strides = contiguous_strides(in);
  const auto out_strides = contiguous_strides(out);
  IndexMap map;
  for (size_t d = 0; d < out.size(); ++d) {
    IndexMapDim m{out[d], out_strides[d], 0, 0, 1, 0};
    if (d >= lead) {
      const int64_t n = in[d - lead];
      if (n != out[d] && n != 1) {
        throw std::invalid_argument(
            fmt::format("Expand: input {} does not broadcast to {}", shape_string(in), shape_string(out)));
      }
      m.step = n == 1 ? 0 : 1;
      m.in_dim = n;
      m.in_stride = in_strides[d - lead];
    }
    map.dims.push_back(m);
  }
  return map;
}

IndexMap tile_map(const Shape& in, std::span<const int64_t> repeats, const Shape& output) {
  if (repeats.size() != in.size()) {
    throw std::invalid_argument(
        fmt::format("Tile: {} repeats for input {}", repeats.size(), shape_string(in)));
  }
  Shape expected(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    if (repeats[d] < 0)
      throw std::invalid_argument(fmt::format("Tile: negative repeat {} on dim {}", repeats[d], d));
    expected[d] = in[d] * repeats[d];
  }
  if (output != expected) {
    throw std::invalid_argument(
        fmt::format("Tile: output must be {}, got {}", shape_string(expected), shape_string(output)));
  }
  const auto in_strides = contiguous_strides(in);
  const auto out_strides = contiguous_strides(expected);
  // Tile is the Wrap boundary rule: output coordinate c reads input c mod dim.
  IndexMap map;
  map.boundary = Boundary::Wrap;
  for (size_t d = 0; d < in.size(); ++d)
    map.dims.push_back({expected[d], out_strides[d], 0, 1, in[d], in_strides[d]});
  return map;
}

void record_expand(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                   const Tensor& output) {
  const LayoutPlan plan(kc, LayoutProblem::expand(input.shape(), input.dtype(), output.shape()));
  require_same_dtype("Expand", input, output);
  plan.record(recorder, std::span(&input, 1), std::span(&output, 1));
}

void record_tile(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                 std::span<const int64_t> repeats, const Tensor& output) {
  const LayoutPlan plan(kc, LayoutProblem::tile(input.shape(), input.dtype(), repeats, output.shape()));
  require_same_dtype("Tile", input, output);
  plan.record(recorder, std::span(&input, 1), std::span(&output, 1));
}

}  // namespace onda::kernels
