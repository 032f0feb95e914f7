#include "kernels/layout/pad.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/layout/index_map.h"

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

void record_pad(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                std::span<const int64_t> pads, PadMode mode, double value, const Tensor& output) {
  const Shape& in = input.shape();
  const Shape expected = pad_output_shape(in, pads);
  if (output.shape() != expected) {
    throw std::invalid_argument(
        fmt::format("Pad: output must be {}, got {}", shape_string(expected), shape_string(output.shape())));
  }
  const size_t rank = in.size();
  const auto in_strides = contiguous_strides(in);
  const auto out_strides = contiguous_strides(expected);
  IndexMap map;
  map.boundary = mode == PadMode::Constant  ? Boundary::Constant
                 : mode == PadMode::Reflect ? Boundary::Reflect
                 : mode == PadMode::Edge    ? Boundary::Edge
                                            : Boundary::Wrap;
  map.pad_bits = value_bits(input.dtype(), value);
  for (size_t d = 0; d < rank; ++d) {
    if (mode != PadMode::Constant && in[d] == 0 && expected[d] > 0) {
      throw std::invalid_argument(fmt::format("Pad: cannot {} an empty dim {} of {}",
                                              mode == PadMode::Reflect ? "reflect"
                                              : mode == PadMode::Edge  ? "edge-pad"
                                                                       : "wrap",
                                              d, shape_string(in)));
    }
    // Output coordinate c reads input c - begin (a negative begin crops).
    map.dims.push_back({expected[d], out_strides[d], -pads[d], 1, in[d], in_strides[d]});
  }
  record_index_map(kc, recorder, input, output, std::move(map), "Pad");
}

}  // namespace onda::kernels
