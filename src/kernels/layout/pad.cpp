#include "kernels/layout/pad.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/layout/index_map.h"
#include "kernels/layout/layout_plan.h"

namespace onda::kernels {

Shape pad_output_shape(const Shape& input, std::span<const int64_t> pads) {
  const size_t rank = input.size();
  if (pads.size() != 2 * rank) {
    throw std::invalid_argument(
        fmt::format("Pad: {} pads for input {} (need {})", pads.size(), shape_string(input), 2 * rank));
  }
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) {
    out[d] = input[d] + pads[d] + pads[d + rank];
    if (out[d] < 0)
      throw std::invalid_argument(
          fmt::format("Pad: dim {} of {} cropped below zero", d, shape_string(input)));
  }
  return out;
}

IndexMap pad_map(const Shape& in, DType dtype, std::span<const int64_t> pads, PadMode mode, double value,
                 const Shape& output) {
  const Shape expected = pad_output_shape(in, pads);
  if (output != expected) {
    throw std::invalid_argument(
        fmt::format("Pad: output must be {}, got {}", shape_string(expected), shape_string(output)));
  }
  const size_t rank = in.size();
  const auto in_strides = contiguous_strides(in);
  const auto out_strides = contiguous_strides(expected);
  IndexMap map;
  map.boundary = mode == PadMode::Constant  ? Boundary::Constant
                 : mode == PadMode::Reflect ? Boundary::Reflect
                 : mode == PadMode::Edge    ? Boundary::Edge
                                            : Boundary::Wrap;
  map.pad_bits = value_bits(dtype, value);
  const char* mode_name = mode == PadMode::Constant  ? "constant"
                          : mode == PadMode::Reflect ? "reflect"
                          : mode == PadMode::Edge    ? "edge"
                                                     : "wrap";
  for (size_t d = 0; d < rank; ++d) {
    // ONNX: negative pads crop first; the positive ones then pad the cropped input, so reflect,
    // edge and wrap are relative to what is left. A dim cropped past nothing stays empty (only a
    // constant can fill it).
    const int64_t begin = pads[d], end = pads[d + rank];
    const int64_t crop_begin = std::max<int64_t>(-begin, 0), crop_end = std::max<int64_t>(-end, 0);
    const int64_t pad_begin = std::max<int64_t>(begin, 0), pad_end = std::max<int64_t>(end, 0);
    const int64_t left = std::max<int64_t>(in[d] - crop_begin - crop_end, 0);
    const bool padded = pad_begin > 0 || pad_end > 0;
    if (mode != PadMode::Constant && padded && left == 0 && expected[d] > 0) {
      throw std::invalid_argument(
          fmt::format("Pad: mode {} cannot pad dim {} of {}: nothing is left after cropping", mode_name, d,
                      shape_string(in)));
    }
    if (mode == PadMode::Reflect && padded && (pad_begin > left - 1 || pad_end > left - 1)) {
      throw std::invalid_argument(
          fmt::format("Pad: reflect pads ({}, {}) on dim {} of {} exceed the (cropped) length {} minus 1",
                      pad_begin, pad_end, d, shape_string(in), left));
    }
    map.in_base += crop_begin * in_strides[d];
    map.dims.push_back({expected[d], out_strides[d], -pad_begin, 1, left, in_strides[d]});
  }
  return map;
}

void record_pad(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                std::span<const int64_t> pads, PadMode mode, double value, const Tensor& output) {
  const LayoutPlan plan(kc,
                        LayoutProblem::pad(input.shape(), input.dtype(), pads, mode, value, output.shape()));
  require_same_dtype("Pad", input, output);
  plan.record(recorder, std::span(&input, 1), std::span(&output, 1));
}

}  // namespace onda::kernels
