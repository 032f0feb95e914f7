#include "kernels/layout/slice.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/layout/index_map.h"

namespace onda::kernels {

std::vector<SliceDim> plan_slice(const Shape& input, std::span<const int64_t> starts,
                                 std::span<const int64_t> ends, std::span<const int64_t> axes,
                                 std::span<const int64_t> steps) {
  const int64_t rank = static_cast<int64_t>(input.size());
  if (starts.size() != ends.size() || (!axes.empty() && axes.size() != starts.size()) ||
      (!steps.empty() && steps.size() != starts.size())) {
    throw std::invalid_argument("Slice: starts, ends, axes and steps must have the same length");
  }
  std::vector<SliceDim> dims(input.size());
  for (size_t d = 0; d < input.size(); ++d) dims[d] = {0, 1, input[d]};
  std::vector<bool> seen(input.size(), false);
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t axis = axes.empty() ? static_cast<int64_t>(k) : axes[k];
    if (axis < -rank || axis >= rank)
      throw std::invalid_argument(fmt::format("Slice: axis {} out of range for rank {}", axis, rank));
    if (axis < 0) axis += rank;
    if (seen[axis]) throw std::invalid_argument(fmt::format("Slice: axis {} repeated", axis));
    seen[axis] = true;
    const int64_t step = steps.empty() ? 1 : steps[k];
    if (step == 0) throw std::invalid_argument("Slice: step 0");
    const int64_t dim = input[axis];
    int64_t start = starts[k], end = ends[k];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (dim == 0) {
      dims[axis] = {0, step, 0};
      continue;
    }
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    const int64_t span = end - start;
    int64_t size = 0;
    if (step > 0 && span > 0) size = (span + step - 1) / step;
    if (step < 0 && span < 0) size = (-span + (-step) - 1) / (-step);
    dims[axis] = {start, step, size};
  }
  return dims;
}

Shape slice_output_shape(std::span<const SliceDim> dims) {
  Shape s;
  for (const auto& d : dims) s.push_back(d.size);
  return s;
}

void record_slice(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                  std::span<const SliceDim> dims, const Tensor& output) {
  if (dims.size() != input.shape().size()) {
    throw std::invalid_argument(
        fmt::format("Slice: {} dims given for input {}", dims.size(), shape_string(input.shape())));
  }
  const Shape expected = slice_output_shape(dims);
  if (output.shape() != expected) {
    throw std::invalid_argument(fmt::format("Slice: output must be {}, got {}", shape_string(expected),
                                            shape_string(output.shape())));
  }
  const auto in_strides = contiguous_strides(input.shape());
  const auto out_strides = contiguous_strides(expected);
  IndexMap map;
  for (size_t d = 0; d < dims.size(); ++d) {
    const SliceDim& s = dims[d];
    const int64_t last = s.start + (s.size - 1) * s.step;
    if (s.size > 0 && (s.start < 0 || s.start >= input.shape()[d] || last < 0 || last >= input.shape()[d])) {
      throw std::invalid_argument(fmt::format("Slice: dim {} reads outside [0, {})", d, input.shape()[d]));
    }
    map.dims.push_back({s.size, out_strides[d], s.start, s.step, input.shape()[d], in_strides[d]});
  }
  record_index_map(kc, recorder, input, output, std::move(map), "Slice");
}

void record_concat(const KernelContext& kc, gpu::CommandRecorder& recorder, std::span<const Tensor> inputs,
                   int64_t axis, const Tensor& output) {
  const Shape& out = output.shape();
  if (axis < 0 || axis >= static_cast<int64_t>(out.size())) {
    throw std::invalid_argument(
        fmt::format("Concat: axis {} out of range for output {}", axis, shape_string(out)));
  }
  int64_t total = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Shape expect = out;
    expect[axis] = inputs[k].shape().size() == out.size() ? inputs[k].shape()[axis] : -1;
    if (inputs[k].shape() != expect) {
      throw std::invalid_argument(
          fmt::format("Concat: input {} is {}, incompatible with output {} along axis {}", k,
                      shape_string(inputs[k].shape()), shape_string(out), axis));
    }
    require_same_dtype("Concat", inputs[k], output);
    total += expect[axis];
  }
  if (total != out[axis]) {
    throw std::invalid_argument(
        fmt::format("Concat: inputs sum to {} along axis {}, output has {}", total, axis, out[axis]));
  }
  const auto out_strides = contiguous_strides(out);
  int64_t offset = 0;
  for (const Tensor& in : inputs) {
    const auto in_strides = contiguous_strides(in.shape());
    IndexMap map;
    map.out_base = offset * out_strides[axis];
    for (size_t d = 0; d < out.size(); ++d)
      map.dims.push_back({in.shape()[d], out_strides[d], 0, 1, in.shape()[d], in_strides[d]});
    record_index_map(kc, recorder, in, output, std::move(map), "Concat");
    offset += in.shape()[axis];
  }
}

void record_split(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input, int64_t axis,
                  std::span<const Tensor> outputs) {
  const Shape& in = input.shape();
  if (axis < 0 || axis >= static_cast<int64_t>(in.size())) {
    throw std::invalid_argument(
        fmt::format("Split: axis {} out of range for input {}", axis, shape_string(in)));
  }
  int64_t total = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    Shape expect = in;
    expect[axis] = outputs[k].shape().size() == in.size() ? outputs[k].shape()[axis] : -1;
    if (outputs[k].shape() != expect) {
      throw std::invalid_argument(
          fmt::format("Split: output {} is {}, incompatible with input {} along axis {}", k,
                      shape_string(outputs[k].shape()), shape_string(in), axis));
    }
    require_same_dtype("Split", input, outputs[k]);
    total += expect[axis];
  }
  if (total != in[axis]) {
    throw std::invalid_argument(
        fmt::format("Split: outputs sum to {} along axis {}, input has {}", total, axis, in[axis]));
  }
  const auto in_strides = contiguous_strides(in);
  int64_t offset = 0;
  for (const Tensor& out : outputs) {
    const auto out_strides = contiguous_strides(out.shape());
    IndexMap map;
    map.in_base = offset * in_strides[axis];
    for (size_t d = 0; d < in.size(); ++d)
      map.dims.push_back({out.shape()[d], out_strides[d], 0, 1, out.shape()[d], in_strides[d]});
    record_index_map(kc, recorder, input, out, std::move(map), "Split");
    offset += out.shape()[axis];
  }
}

}  // namespace onda::kernels
