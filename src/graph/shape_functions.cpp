#include "graph/shape_functions.h"

#include <algorithm>

#include "graph/broadcast.h"
#include "graph/model_error.h"

namespace onda {

namespace {

[[noreturn]] void fail(const Node& node, const std::string& problem) {
  throw ModelError(node.describe() + ": " + problem);
}

}  // namespace

Shape reshape_output_shape(const Node& node, const Shape& input_shape,
                           const std::vector<int64_t>& requested) {
  const bool allow_zero = node.attribute_int("allowzero", 0) != 0;
  const int64_t input_count = shape_numel(input_shape);
  Shape shape(requested.size());
  int64_t known = 1, infer_axis = -1;
  for (size_t i = 0; i < requested.size(); ++i) {
    int64_t dim = requested[i];
    if (dim == 0 && !allow_zero) {
      if (i >= input_shape.size()) fail(node, "0 in the shape copies a dimension the input does not have");
      dim = input_shape[i];
    }
    if (dim == -1) {
      if (infer_axis >= 0) fail(node, "more than one -1 in the shape");
      infer_axis = static_cast<int64_t>(i);
    } else if (dim < 0) {
      fail(node, "negative dimension in the shape");
    } else {
      known = checked_multiply(known, dim, "Reshape");
    }
    shape[i] = dim;
  }
  if (infer_axis >= 0) {
    if (known == 0 || input_count % known != 0)
      fail(node, "cannot infer -1 reshaping " + shape_to_string(input_shape));
    shape[infer_axis] = input_count / known;
  }
  if (shape_numel(shape) != input_count)
    fail(node, "cannot reshape " + shape_to_string(input_shape) + " to " + shape_to_string(shape));
  return shape;
}

Shape squeeze_output_shape(const Node& node, const Shape& input_shape,
                           const std::optional<std::vector<int64_t>>& axes) {
  const int64_t rank = static_cast<int64_t>(input_shape.size());
  std::vector<bool> remove(input_shape.size(), false);
  if (axes && !axes->empty()) {
    for (int64_t axis : *axes) {
      const int64_t a = normalize_axis(axis, rank, "Squeeze");
      if (input_shape[a] != 1) fail(node, "squeezed axis " + std::to_string(axis) + " is not 1");
      remove[a] = true;
    }
  } else {
    for (size_t i = 0; i < remove.size(); ++i) remove[i] = input_shape[i] == 1;
  }
  Shape shape;
  for (size_t i = 0; i < remove.size(); ++i)
    if (!remove[i]) shape.push_back(input_shape[i]);
  return shape;
}

Shape unsqueeze_output_shape(const Node& node, const Shape& input_shape, const std::vector<int64_t>& axes) {
  const int64_t rank = static_cast<int64_t>(input_shape.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) {
    const int64_t a = normalize_axis(axis, rank, "Unsqueeze");
    if (inserted[a]) fail(node, "repeated axis");
    inserted[a] = true;
  }
  Shape shape;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) shape.push_back(inserted[i] ? 1 : input_shape.at(next++));
  return shape;
}

SliceRegion slice_region(const Node& node, const Shape& input_shape, SliceParameters parameters) {
  const int64_t rank = static_cast<int64_t>(input_shape.size());
  const size_t count = parameters.starts.size();
  if (parameters.axes.empty())
    for (size_t i = 0; i < count; ++i) parameters.axes.push_back(static_cast<int64_t>(i));
  if (parameters.steps.empty()) parameters.steps.assign(count, 1);
  if (parameters.ends.size() != count || parameters.axes.size() != count || parameters.steps.size() != count)
    fail(node, "starts, ends, axes and steps differ in length");
  SliceRegion region{input_shape, std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1)};
  for (size_t i = 0; i < count; ++i) {
    const int64_t axis = normalize_axis(parameters.axes[i], rank, "Slice");
    const int64_t dim = input_shape[axis];
    const int64_t step = parameters.steps[i];
    if (step == 0) fail(node, "step 0");
    // ONNX Slice: negative starts/ends count from the end, then clamp to the valid range.
    int64_t start = parameters.starts[i] < 0 ? parameters.starts[i] + dim : parameters.starts[i];
    int64_t end = parameters.ends[i] < 0 ? parameters.ends[i] + dim : parameters.ends[i];
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    const int64_t span = end - start;
    region.shape[axis] =
        step > 0 ? (span > 0 ? (span + step - 1) / step : 0) : (span < 0 ? (-span - step - 1) / -step : 0);
    region.first[axis] = start;
    region.step[axis] = step;
  }
  return region;
}

int64_t single_int64(const HostTensor& tensor, const std::string& what) {
  if (tensor.numel() != 1)
    throw ModelError(what + " must hold one element, it has shape " + shape_to_string(tensor.shape()));
  return tensor.to_int64()[0];
}

double single_double(const HostTensor& tensor, const std::string& what) {
  if (tensor.numel() != 1)
    throw ModelError(what + " must hold one element, it has shape " + shape_to_string(tensor.shape()));
  return tensor.to_double()[0];
}

HostTensor shape_op_result(const Node& node, const Shape& input_shape) {
  const int64_t rank = static_cast<int64_t>(input_shape.size());
  int64_t start = node.attribute_int("start", 0), end = node.attribute_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  const std::vector<int64_t> dims(input_shape.begin() + start, input_shape.begin() + std::max(start, end));
  return HostTensor::from_values<int64_t>({static_cast<int64_t>(dims.size())}, dims);
}

}  // namespace onda
