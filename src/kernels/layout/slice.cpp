#include "kernels/layout/slice.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/layout/index_map.h"
#include "kernels/layout/layout_plan.h"

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

IndexMap slice_map(const Shape& input, std::span<const SliceDim> dims, const Shape& output) {
  if (dims.size() != input.size()) {
    throw std::invalid_argument(
        fmt::format("Slice: {} dims given for input {}", dims.size(), shape_string(input)));
  }
  const Shape expected = slice_output_shape(dims);
  if (output != expected) {
    throw std::invalid_argument(
        fmt::format("Slice: output must be {}, got {}", shape_string(expected), shape_string(output)));
  }
  const auto in_strides = contiguous_strides(input);
  const auto out_strides = contiguous_strides(expected);
  IndexMap map;
  for (size_t d = 0; d < dims.size(); ++d) {
    const SliceDim& s = dims[d];
    const int64_t last = s.start + (s.size - 1) * s.step;
    if (s.size > 0 && (s.start < 0 || s.start >= input[d] || last < 0 || last >= input[d])) {
      throw std::invalid_argument(fmt::format("Slice: dim {} reads outside [0, {})", d, input[d]));
    }
    map.dims.push_back({s.size, out_strides[d], s.start, s.step, input[d], in_strides[d]});
  }
  return map;
}

std::vector<IndexMap> concat_maps(std::span<const Shape> inputs, int64_t axis, const Shape& out) {
  if (axis < 0 || axis >= static_cast<int64_t>(out.size())) {
    throw std::invalid_argument(
        fmt::format("Concat: axis {} out of range for output {}", axis, shape_string(out)));
  }
  int64_t total = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Shape expect = out;
    expect[axis] = inputs[k].size() == out.size() ? inputs[k][axis] : -1;
    if (inputs[k] != expect) {
      throw std::invalid_argument(
          fmt::format("Concat: input {} is {}, incompatible with output {} along axis {}", k,
                      shape_string(inputs[k]), shape_string(out), axis));
    }
    total += expect[axis];
  }
  if (total != out[axis]) {
    throw std::invalid_argument(
        fmt::format("Concat: inputs sum to {} along axis {}, output has {}", total, axis, out[axis]));
  }
  const auto out_strides = contiguous_strides(out);
  std::vector<IndexMap> maps;
  int64_t offset = 0;
  for (const Shape& in : inputs) {
    const auto in_strides = contiguous_strides(in);
    IndexMap map;
    map.out_base = offset * out_strides[axis];
    for (size_t d = 0; d < out.size(); ++d)
      map.dims.push_back({in[d], out_strides[d], 0, 1, in[d], in_strides[d]});
    maps.push_back(std::move(map));
    offset += in[axis];
  }
  return maps;
}

std::vector<IndexMap> split_maps(const Shape& in, int64_t axis, std::span<const Shape> outputs) {
  if (axis < 0 || axis >= static_cast<int64_t>(in.size())) {
    throw std::invalid_argument(
        fmt::format("Split: axis {} out of range for input {}", axis, shape_string(in)));
  }
  int64_t total = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    Shape expect = in;
    expect[axis] = outputs[k].size() == in.size() ? outputs[k][axis] : -1;
    if (outputs[k] != expect) {
      throw std::invalid_argument(
          fmt::format("Split: output {} is {}, incompatible with input {} along axis {}", k,
                      shape_string(outputs[k]), shape_string(in), axis));
    }
    total += expect[axis];
  }
  if (total != in[axis]) {
    throw std::invalid_argument(
        fmt::format("Split: outputs sum to {} along axis {}, input has {}", total, axis, in[axis]));
  }
  const auto in_strides = contiguous_strides(in);
  std::vector<IndexMap> maps;
  int64_t offset = 0;
  for (const Shape& out : outputs) {
    const auto out_strides = contiguous_strides(out);
    IndexMap map;
    map.in_base = offset * in_strides[axis];
    for (size_t d = 0; d < in.size(); ++d)
      map.dims.push_back({out[d], out_strides[d], 0, 1, out[d], in_strides[d]});
    maps.push_back(std::move(map));
    offset += out[axis];
  }
  return maps;
}

namespace {

std::vector<Shape> shapes_of(std::span<const Tensor> tensors) {
  std::vector<Shape> shapes;
  for (const Tensor& t : tensors) shapes.push_back(t.shape());
  return shapes;
}

}  // namespace

void record_slice(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                  std::span<const SliceDim> dims, const Tensor& output) {
  const LayoutPlan plan(kc, LayoutProblem::slice(input.shape(), input.dtype(), dims, output.shape()));
  require_same_dtype("Slice", input, output);
  plan.record(recorder, std::span(&input, 1), std::span(&output, 1));
}

void record_concat(const KernelContext& kc, gpu::CommandRecorder& recorder, std::span<const Tensor> inputs,
                   int64_t axis, const Tensor& output) {
  const LayoutPlan plan(kc, LayoutProblem::concat(shapes_of(inputs), output.dtype(), axis, output.shape()));
  for (const Tensor& in : inputs) require_same_dtype("Concat", in, output);
  plan.record(recorder, inputs, std::span(&output, 1));
}

void record_split(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input, int64_t axis,
                  std::span<const Tensor> outputs) {
  const LayoutPlan plan(kc, LayoutProblem::split(input.shape(), input.dtype(), axis, shapes_of(outputs)));
  for (const Tensor& out : outputs) require_same_dtype("Split", input, out);
  plan.record(recorder, std::span(&input, 1), outputs);
}

}  // namespace onda::kernels
