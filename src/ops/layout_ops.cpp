// ONNX layout ops (Transpose, Slice, Concat, Split, Gather, Pad, Expand, Tile, Resize, ScatterND,
// ConstantOfShape) and pools (AveragePool, MaxPool) onto the layout kernel family. Opset
// differences (attributes that became inputs) are resolved here; the kernels take plain values.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <span>

#include "graph/model_error.h"
#include "kernels/layout/expand_tile.h"
#include "kernels/layout/gather.h"
#include "kernels/layout/layout_plan.h"
#include "kernels/layout/pad.h"
#include "kernels/layout/pool.h"
#include "kernels/layout/resize.h"
#include "kernels/layout/scatter_elements.h"
#include "kernels/layout/scatter_nd.h"
#include "kernels/layout/slice.h"
#include "kernels/layout/transpose.h"
#include "ops/enum_attribute.h"
#include "ops/kernel_plans.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"
#include "ops/outer_slices.h"
#include "ops/value_view.h"

namespace onda::ops {
namespace {

Value device_output(OpContext& context, DType dtype, const Shape& shape) {
  Value v;
  v.device = context.allocate(dtype, shape);
  return v;
}

// Whether `perm` moves only axes of extent 1 (the others keep their order): the transposed tensor
// has the input's memory order, so it is a view (a streaming model's [1, C, 1] -> [1, 1, C]).
bool transpose_keeps_memory_order(const Shape& shape, const std::vector<int64_t>& perm) {
  int64_t last = -1;
  for (const int64_t d : perm) {
    if (shape[d] == 1) continue;
    if (d < last) return false;
    last = d;
  }
  return true;
}

std::vector<Value> transpose(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  std::vector<int64_t> perm = node.attribute_ints("perm", {});
  Value y;
  rethrow_naming_node(node, [&] {
    const Shape out_shape = kernels::transpose_output_shape(x.shape(), perm);  // validates perm
    if (!perm.empty() && transpose_keeps_memory_order(x.shape(), perm)) {
      y = reshaped_view(x, out_shape);
      return;
    }
    y = device_output(context, x.dtype(), out_shape);
    const Tensor input = context.to_device(x);
    record_layout(context, kernels::LayoutProblem::transpose(x.shape(), x.dtype(), perm, y.device.shape()),
                  std::span(&input, 1), std::span(&y.device, 1));
  });
  return {y};
}

std::vector<Value> slice(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (context.opset < 10) {
    starts = node.attribute_ints("starts");
    ends = node.attribute_ints("ends");
    axes = node.attribute_ints("axes", {});
  } else {
    starts = constant_ints(node, input_or_empty(inputs, 1), "starts");
    ends = constant_ints(node, input_or_empty(inputs, 2), "ends");
    axes = optional_constant_ints(node, input_or_empty(inputs, 3), "axes").value_or(std::vector<int64_t>{});
    steps = optional_constant_ints(node, input_or_empty(inputs, 4), "steps").value_or(std::vector<int64_t>{});
  }
  Value y;
  rethrow_naming_node(node, [&] {
    const auto dims = kernels::plan_slice(x.shape(), starts, ends, axes, steps);
    y = device_output(context, x.dtype(), kernels::slice_output_shape(dims));
    const Tensor input = context.to_device(x);
    record_layout(context, kernels::LayoutProblem::slice(x.shape(), x.dtype(), dims, y.device.shape()),
                  std::span(&input, 1), std::span(&y.device, 1));
  });
  return {y};
}

// Concat and Split whose whole tensor (Concat's output, Split's input) exceeds one storage binding
// (a 190 MB Concat of the UVR model on lavapipe's 128 MiB bindings). The dims before `axis`
// collapse into one outer dim (a free view). With more than one outer row, each run of outer rows
// is an independent Concat/Split of the parts' rows along axis 1; with one, each part is a run of
// consecutive rows of the whole, copied in row slices. `record(whole, parts, axis)` records one
// piece. Returns false when the whole fits one binding (or cannot be sliced: f16 pieces that would
// start inside a packed word), leaving the op to the one-binding path.
using RecordSlabs = std::function<void(const Tensor& whole, std::span<const Tensor> parts, int64_t axis)>;

bool record_slabs_in_slices(OpContext& context, const Tensor& whole, const std::vector<Tensor>& parts,
                            int64_t axis, const RecordSlabs& record) {
  const uint64_t limit = context.kernels.gpu.limits().maxStorageBufferBindingSize;
  if (whole.device_bytes() <= limit || whole.numel() == 0) return false;
  const Shape& shape = whole.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const uint64_t element_bytes = device_element_size(whole.dtype());
  auto collapsed = [&](const Tensor& t) {
    return outer > 1 ? t.reshape({outer, t.shape()[axis], inner}) : t.reshape({t.shape()[axis], inner});
  };
  if (outer > 1) {
    const uint64_t row_bytes = static_cast<uint64_t>(whole.numel() / outer) * element_bytes;
    const int64_t rows = outer_slice_rows(context, outer, row_bytes);
    if (rows == 0) return false;
    const Tensor all = collapsed(whole);
    for (int64_t begin = 0; begin < outer; begin += rows) {
      const int64_t end = std::min(outer, begin + rows);
      std::vector<Tensor> slices;
      for (const Tensor& part : parts) slices.push_back(collapsed(part).slice_outer(begin, end));
      record(all.slice_outer(begin, end), slices, 1);
    }
    return true;
  }
  const int64_t rows = std::max<int64_t>(1, outer_slice_rows(context, shape[axis], inner * element_bytes));
  if (whole.dtype() == DType::f16 && (inner % 2 != 0 || rows % 2 != 0)) return false;
  const Tensor all = collapsed(whole);
  int64_t offset = 0;
  for (const Tensor& part : parts) {
    const int64_t length = part.shape()[axis];
    const Tensor rows_of_part = collapsed(part);
    for (int64_t begin = 0; begin < length; begin += rows) {
      const int64_t end = std::min(length, begin + rows);
      const Tensor slice = rows_of_part.slice_outer(begin, end);
      record(all.slice_outer(offset + begin, offset + end), std::span<const Tensor>(&slice, 1), 0);
    }
    offset += length;
  }
  return true;
}

std::vector<Value> concat(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  if (inputs.empty()) throw ModelError(node.describe() + ": needs inputs");
  const int64_t rank = static_cast<int64_t>(inputs[0].shape().size());
  const int64_t axis = normalize_axis(node, node.attribute_int("axis"), rank);
  Shape out = inputs[0].shape();
  out[axis] = 0;
  std::vector<Tensor> tensors;
  for (const auto& v : inputs) {
    if (v.shape().size() != out.size()) throw ModelError(node.describe() + ": inputs have different ranks");
    out[axis] += v.shape()[axis];
    tensors.push_back(context.to_device(v));
  }
  Value y = device_output(context, inputs[0].dtype(), out);
  rethrow_naming_node(node, [&] {
    auto record = [&](const Tensor& whole, std::span<const Tensor> parts, int64_t along) {
      std::vector<Shape> shapes;
      for (const Tensor& part : parts) shapes.push_back(part.shape());
      record_layout(context, kernels::LayoutProblem::concat(shapes, whole.dtype(), along, whole.shape()),
                    parts, std::span(&whole, 1));
    };
    if (!record_slabs_in_slices(context, y.device, tensors, axis, record)) record(y.device, tensors, axis);
  });
  return {y};
}

// A split along an axis with only unit dims before it (the leading axis of attention's stacked Q,
// K and V) cuts the input into contiguous pieces: each output is a view of the input, no copy.
// Pieces start on multiples of 4 elements, as kernels that load vec4s (or float16 pairs) expect.
std::optional<std::vector<Value>> split_into_views(OpContext& context, const Value& x, int64_t axis,
                                                   const std::vector<int64_t>& sizes) {
  if (x.on_host()) return std::nullopt;
  const Shape& shape = x.shape();
  for (int64_t d = 0; d < axis; ++d)
    if (shape[d] != 1) return std::nullopt;
  const int64_t length = shape[axis];
  const int64_t inner = shape_numel(shape) / std::max<int64_t>(length, 1);
  for (int64_t begin = 0, k = 0; k < static_cast<int64_t>(sizes.size()); begin += sizes[k++])
    if ((begin * inner) % 4 != 0) return std::nullopt;
  const Tensor rows = context.to_device(x).reshape({length, inner});
  std::vector<Value> views;
  for (int64_t begin = 0; int64_t s : sizes) {
    Shape part = shape;
    part[axis] = s;
    Value v;
    v.device = rows.slice_outer(begin, begin + s).reshape(part);
    views.push_back(std::move(v));
    begin += s;
  }
  return views;
}

std::vector<Value> split(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  const int64_t axis = normalize_axis(node, node.attribute_int("axis", 0), rank);
  const int64_t length = x.shape()[axis];
  std::vector<int64_t> sizes;
  if (context.opset >= 13) {
    sizes = optional_constant_ints(node, input_or_empty(inputs, 1), "split").value_or(std::vector<int64_t>{});
  } else {
    sizes = node.attribute_ints("split", {});
  }
  const int64_t outputs = static_cast<int64_t>(node.outputs.size());
  if (sizes.empty()) {
    const int64_t parts = node.attribute_int("num_outputs", outputs);
    const int64_t each = (length + parts - 1) / parts;  // opset 18: the last part may be smaller
    for (int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(each, length - i * each)));
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (total != length || static_cast<int64_t>(sizes.size()) != outputs) {
    throw ModelError(fmt::format("{}: split sizes do not add up to {} or do not match {} outputs",
                                 node.describe(), length, outputs));
  }
  if (auto views = split_into_views(context, x, axis, sizes)) return *views;
  std::vector<Value> results;
  std::vector<Tensor> tensors;
  for (int64_t s : sizes) {
    Shape shape = x.shape();
    shape[axis] = s;
    results.push_back(device_output(context, x.dtype(), shape));
    tensors.push_back(results.back().device);
  }
  rethrow_naming_node(node, [&] {
    auto record = [&](const Tensor& whole, std::span<const Tensor> parts, int64_t along) {
      std::vector<Shape> shapes;
      for (const Tensor& part : parts) shapes.push_back(part.shape());
      record_layout(context, kernels::LayoutProblem::split(whole.shape(), whole.dtype(), along, shapes),
                    std::span(&whole, 1), parts);
    };
    const Tensor input = context.to_device(x);
    if (!record_slabs_in_slices(context, input, tensors, axis, record)) record(input, tensors, axis);
  });
  return results;
}

std::vector<Value> gather(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& data = inputs.at(0);
  const Value& indices = inputs.at(1);
  const int64_t axis =
      normalize_axis(node, node.attribute_int("axis", 0), static_cast<int64_t>(data.shape().size()));
  Value y;
  rethrow_naming_node(node, [&] {
    y = device_output(context, data.dtype(),
                      kernels::gather_output_shape(data.shape(), indices.shape(), axis));
    std::optional<std::vector<int64_t>> host;
    if (indices.on_host()) host = indices.host.to_int64();
    std::optional<std::span<const int64_t>> host_span;
    if (host) host_span = std::span<const int64_t>(*host);
    record_gather(context, context.to_device(data), context.to_device(indices), axis, y.device, host_span);
  });
  return {y};
}

std::vector<Value> pad(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  const kernels::PadMode mode = enum_attribute<kernels::PadMode>(node, "mode", "constant",
                                                                 {{"constant", kernels::PadMode::Constant},
                                                                  {"reflect", kernels::PadMode::Reflect},
                                                                  {"edge", kernels::PadMode::Edge},
                                                                  {"wrap", kernels::PadMode::Wrap}});
  std::vector<int64_t> pads;
  double value = 0;
  if (context.opset < 11) {
    pads = node.attribute_ints("pads");
    value = node.attribute_float("value", 0.0f);
  } else {
    pads = constant_ints(node, input_or_empty(inputs, 1), "pads");
    const Value& constant = input_or_empty(inputs, 2);
    if (constant.defined()) {
      const auto v = constant_doubles(node, constant, "constant_value");
      if (!v.empty()) value = v[0];
    }
    const auto axes = optional_constant_ints(node, input_or_empty(inputs, 3), "axes");
    if (axes) {  // opset 18: pads only for `axes`; expand to every dim
      std::vector<int64_t> full(2 * rank, 0);
      if (pads.size() != 2 * axes->size())
        throw ModelError(node.describe() + ": pads must have 2 entries per axis");
      for (size_t i = 0; i < axes->size(); ++i) {
        const int64_t a = normalize_axis(node, (*axes)[i], rank);
        full[a] = pads[i];
        full[rank + a] = pads[axes->size() + i];
      }
      pads = full;
    }
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank) {
    throw ModelError(fmt::format("{}: {} pads for rank {}", node.describe(), pads.size(), rank));
  }
  Value y;
  rethrow_naming_node(node, [&] {
    y = device_output(context, x.dtype(), kernels::pad_output_shape(x.shape(), pads));
    const Tensor input = context.to_device(x);
    record_layout(context,
                  kernels::LayoutProblem::pad(x.shape(), x.dtype(), pads, mode, value, y.device.shape()),
                  std::span(&input, 1), std::span(&y.device, 1));
  });
  return {y};
}

std::vector<Value> expand(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const auto shape = constant_ints(node, input_or_empty(inputs, 1), "shape");
  Value y;
  rethrow_naming_node(node, [&] {
    y = device_output(context, x.dtype(), kernels::expand_output_shape(x.shape(), shape));
    const Tensor input = context.to_device(x);
    record_layout(context, kernels::LayoutProblem::expand(x.shape(), x.dtype(), y.device.shape()),
                  std::span(&input, 1), std::span(&y.device, 1));
  });
  return {y};
}

std::vector<Value> tile(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const auto repeats = constant_ints(node, input_or_empty(inputs, 1), "repeats");
  if (repeats.size() != x.shape().size())
    throw ModelError(node.describe() + ": repeats must have one entry per dim");
  Shape out = x.shape();
  for (size_t d = 0; d < out.size(); ++d) {
    if (repeats[d] < 0) throw ModelError(node.describe() + ": negative repeats");
    out[d] *= repeats[d];
  }
  Value y = device_output(context, x.dtype(), out);
  rethrow_naming_node(node, [&] {
    const Tensor input = context.to_device(x);
    record_layout(context, kernels::LayoutProblem::tile(x.shape(), x.dtype(), repeats, y.device.shape()),
                  std::span(&input, 1), std::span(&y.device, 1));
  });
  return {y};
}

// Upsample (opset 7: scales attribute; 9: scales input) and Resize before opset 11 (X, scales): the
// old semantics, as ONNX Runtime runs them: mode nearest or linear over `scales` only, asymmetric
// coordinates (x_in = x_out / scale) and, for nearest, the floor of that coordinate when upsampling
// and its ceiling when downsampling (ONNX Runtime's pre-11 rule; ONNX's resize_downsample_nearest
// data of opset 10 agrees). Scales that upsample one dim and downsample another are refused.
std::vector<Value> resize_before_opset_11(const Node& node, OpContext& context,
                                          const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  kernels::ResizeAttributes a;
  const std::string mode = node.attribute_string("mode", "nearest");
  if (mode == "nearest") {
    a.mode = kernels::ResizeMode::Nearest;
  } else if (mode == "linear" || mode == "bilinear") {  // "bilinear": Upsample-7's older spelling
    a.mode = kernels::ResizeMode::Linear;
  } else {
    throw ModelError(fmt::format("{}: unsupported mode '{}'", node.describe(), mode));
  }
  a.coordinates = kernels::ResizeCoordinates::Asymmetric;
  a.nearest = kernels::ResizeNearestMode::Floor;
  std::vector<double> scales;
  if (node.op_type == "Upsample" && context.opset < 9) {
    for (float v : node.attribute_floats("scales")) scales.push_back(v);
  } else {
    scales = constant_doubles(node, input_or_empty(inputs, 1), "scales");
  }
  if (scales.size() != x.shape().size()) {
    throw ModelError(fmt::format("{}: {} scales for an input of rank {}", node.describe(), scales.size(),
                                 x.shape().size()));
  }
  for (double v : scales) a.scales.push_back(static_cast<float>(v));
  const bool up = std::any_of(scales.begin(), scales.end(), [](double v) { return v > 1; });
  const bool down = std::any_of(scales.begin(), scales.end(), [](double v) { return v < 1; });
  if (up && down && a.mode == kernels::ResizeMode::Nearest) {
    throw ModelError(node.describe() + ": nearest with scales that upsample one dim and downsample another");
  }
  if (down) a.nearest = kernels::ResizeNearestMode::Ceil;
  Shape out;
  rethrow_naming_node(node, [&] { out = kernels::resize_output_shape(x.shape(), a.scales); });
  Value y;
  rethrow_naming_node(node, [&] {
    y = device_output(context, x.dtype(), out);
    kernels::record_resize(context.kernels, context.recorder, context.to_device(x), a, y.device);
  });
  return {y};
}

std::vector<Value> resize(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  if (context.opset < 11) return resize_before_opset_11(node, context, inputs);
  kernels::ResizeAttributes a;
  using kernels::ResizeCoordinates;
  using kernels::ResizeNearestMode;
  a.mode = enum_attribute<kernels::ResizeMode>(node, "mode", "nearest",
                                               {{"nearest", kernels::ResizeMode::Nearest},
                                                {"linear", kernels::ResizeMode::Linear},
                                                {"cubic", kernels::ResizeMode::Cubic}});
  if (a.mode == kernels::ResizeMode::Cubic) {
    a.cubic_a = node.attribute_float("cubic_coeff_a", -0.75f);
    a.exclude_outside = node.attribute_int("exclude_outside", 0) != 0;
  }
  a.coordinates =
      enum_attribute<ResizeCoordinates>(node, "coordinate_transformation_mode", "half_pixel",
                                        {{"half_pixel", ResizeCoordinates::HalfPixel},
                                         {"asymmetric", ResizeCoordinates::Asymmetric},
                                         {"align_corners", ResizeCoordinates::AlignCorners},
                                         {"pytorch_half_pixel", ResizeCoordinates::PytorchHalfPixel},
                                         {"tf_half_pixel_for_nn", ResizeCoordinates::TfHalfPixelForNn}});
  a.nearest = enum_attribute<ResizeNearestMode>(node, "nearest_mode", "round_prefer_floor",
                                                {{"round_prefer_floor", ResizeNearestMode::RoundPreferFloor},
                                                 {"round_prefer_ceil", ResizeNearestMode::RoundPreferCeil},
                                                 {"floor", ResizeNearestMode::Floor},
                                                 {"ceil", ResizeNearestMode::Ceil}});
  if (node.attribute_int("antialias", 0) != 0 || node.has_attribute("axes") ||
      node.attribute_string("keep_aspect_ratio_policy", "stretch") != "stretch") {
    throw ModelError(node.describe() + ": antialias, axes and keep_aspect_ratio_policy are not supported");
  }
  const Value& scales = input_or_empty(inputs, 2);
  const Value& sizes = input_or_empty(inputs, 3);
  Shape out;
  if (sizes.defined() && sizes.shape().size() == 1 && sizes.shape()[0] > 0) {
    out = constant_ints(node, sizes, "sizes");
  } else {
    const auto s = constant_doubles(node, scales, "scales");
    for (double v : s) a.scales.push_back(static_cast<float>(v));
    rethrow_naming_node(node, [&] { out = kernels::resize_output_shape(x.shape(), a.scales); });
  }
  Value y;
  rethrow_naming_node(node, [&] {
    y = device_output(context, x.dtype(), out);
    kernels::record_resize(context.kernels, context.recorder, context.to_device(x), a, y.device);
  });
  return {y};
}

// ScatterND with a reduction (add, mul, max, min), its indices known on the host: the index tuples
// become flat element positions, and ScatterElements folds the updates into the data viewed as 1-D
// (every duplicate folded in, as ONNX defines the reductions).
std::vector<Value> scatter_nd_reduce(const Node& node, OpContext& context, const std::vector<Value>& inputs,
                                     kernels::ScatterReduction reduction) {
  const Value& data = inputs.at(0);
  const Value& indices = inputs.at(1);
  const Value& updates = inputs.at(2);
  if (!indices.on_host())
    throw ModelError(node.describe() + ": a reduction needs the indices known before the run");
  const Shape& shape = data.shape();
  const Shape& index_shape = indices.shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (index_shape.empty()) throw ModelError(node.describe() + ": indices must have rank >= 1");
  const int64_t depth = index_shape.back();
  if (depth < 1 || depth > rank)
    throw ModelError(
        fmt::format("{}: index tuples of length {} for data of rank {}", node.describe(), depth, rank));
  Shape update_shape(index_shape.begin(), index_shape.end() - 1);
  update_shape.insert(update_shape.end(), shape.begin() + depth, shape.end());
  if (updates.shape() != update_shape) {
    throw ModelError(fmt::format("{}: updates {} do not match indices {} and data {}", node.describe(),
                                 shape_to_string(updates.shape()), shape_to_string(index_shape),
                                 shape_to_string(shape)));
  }
  int64_t slice = 1;
  for (int64_t d = depth; d < rank; ++d) slice *= shape[d];
  const std::vector<int64_t> tuples = indices.host.to_int64();
  const int64_t rows = depth > 0 ? static_cast<int64_t>(tuples.size()) / depth : 0;
  std::vector<int64_t> flat(static_cast<size_t>(rows * slice));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = 0;
    for (int64_t d = 0; d < depth; ++d) {
      int64_t i = tuples[r * depth + d];
      if (i < 0) i += shape[d];
      if (i < 0 || i >= shape[d])
        throw ModelError(fmt::format("{}: index {} out of range for dim {} of size {}", node.describe(),
                                     tuples[r * depth + d], d, shape[d]));
      base = base * shape[d] + i;
    }
    for (int64_t s = 0; s < slice; ++s) flat[r * slice + s] = base * slice + s;
  }
  if (flat.empty()) return {data};  // nothing to fold in
  const int64_t numel = shape_numel(shape);
  Value y = device_output(context, data.dtype(), shape);
  Value flat_indices;
  flat_indices.host = HostTensor::from_int64(DType::i64, {static_cast<int64_t>(flat.size())}, flat);
  rethrow_naming_node(node, [&] {
    kernels::record_scatter_elements(context.kernels, context.recorder,
                                     context.to_device(data).reshape({numel}),
                                     context.to_device(flat_indices),
                                     context.to_device(updates).reshape({static_cast<int64_t>(flat.size())}),
                                     0, reduction, y.device.reshape({numel}), std::span<const int64_t>(flat));
  });
  return {y};
}

std::vector<Value> scatter_nd(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const std::string reduction = node.attribute_string("reduction", "none");
  if (reduction == "add") return scatter_nd_reduce(node, context, inputs, kernels::ScatterReduction::Add);
  if (reduction == "mul") return scatter_nd_reduce(node, context, inputs, kernels::ScatterReduction::Mul);
  if (reduction == "max") return scatter_nd_reduce(node, context, inputs, kernels::ScatterReduction::Max);
  if (reduction == "min") return scatter_nd_reduce(node, context, inputs, kernels::ScatterReduction::Min);
  if (reduction != "none")
    throw ModelError(fmt::format("{}: reduction must be none, add, mul, max or min, got '{}'",
                                 node.describe(), reduction));
  const Value& data = inputs.at(0);
  const Value& indices = inputs.at(1);
  Value y = device_output(context, data.dtype(), data.shape());
  rethrow_naming_node(node, [&] {
    std::optional<std::vector<int64_t>> host;
    if (indices.on_host()) host = indices.host.to_int64();
    std::optional<std::span<const int64_t>> host_span;
    if (host) host_span = std::span<const int64_t>(*host);
    kernels::record_scatter_nd(context.kernels, context.recorder, context.to_device(data),
                               context.to_device(indices), context.to_device(inputs.at(2)), y.device,
                               host_span);
  });
  return {y};
}

std::vector<Value> pool(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const size_t spatial = x.shape().size() >= 2 ? x.shape().size() - 2 : 0;
  if (spatial < 1 || spatial > 2)
    throw ModelError(node.describe() + ": only 1-D and 2-D pools are supported");
  if (node.outputs.size() > 1 && !node.outputs[1].empty())
    throw ModelError(node.describe() + ": the Indices output is not supported");
  const auto kernel = node.attribute_ints("kernel_shape");
  if (kernel.size() != spatial)
    throw ModelError(node.describe() + ": kernel_shape does not match the input rank");
  auto strides = node.attribute_ints("strides", std::vector<int64_t>(spatial, 1));
  auto dilations = node.attribute_ints("dilations", std::vector<int64_t>(spatial, 1));
  auto pads = node.attribute_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  const std::string auto_pad = node.attribute_string("auto_pad", "NOTSET");
  const bool ceil_mode = node.attribute_int("ceil_mode", 0) != 0;
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    // SAME_UPPER / SAME_LOWER: output = ceil(in / stride); the odd pad goes last (upper) or first.
    for (size_t d = 0; d < spatial; ++d) {
      const int64_t in = x.shape()[2 + d];
      const int64_t out = (in + strides[d] - 1) / strides[d];
      const int64_t total =
          std::max<int64_t>(0, (out - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - in);
      pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[spatial + d] = total - pads[d];
    }
  } else if (auto_pad == "VALID") {
    std::fill(pads.begin(), pads.end(), 0);
  }
  kernels::Pool2dAttributes a{};
  a.kind = node.op_type == "MaxPool" ? kernels::PoolKind::Max : kernels::PoolKind::Average;
  const bool two_d = spatial == 2;
  a.kernel_h = two_d ? kernel[0] : 1;
  a.kernel_w = kernel[spatial - 1];
  a.stride_h = two_d ? strides[0] : 1;
  a.stride_w = strides[spatial - 1];
  a.dilation_h = two_d ? dilations[0] : 1;
  a.dilation_w = dilations[spatial - 1];
  a.pad_top = two_d ? pads[0] : 0;
  a.pad_left = pads[spatial - 1];
  a.pad_bottom = two_d ? pads[2] : 0;
  a.pad_right = pads[2 * spatial - 1];
  a.count_include_pad = node.attribute_int("count_include_pad", 0) != 0;
  a.ceil_mode = ceil_mode;
  // 1-D pools run as 2-D with a unit height.
  const Tensor input = two_d ? context.to_device(x)
                             : context.to_device(x).reshape({x.shape()[0], x.shape()[1], 1, x.shape()[2]});
  Value y;
  rethrow_naming_node(node, [&] {
    Shape out = kernels::pool2d_output_shape(input.shape(), a);
    Tensor target = context.allocate(x.dtype(), out);
    kernels::record_pool2d(context.kernels, context.recorder, input, a, target);
    y.device = two_d ? target : target.reshape({out[0], out[1], out[3]});
  });
  return {y};
}

// ConstantOfShape whose output is too large to fold on the host: fill on the host once, upload.
std::vector<Value> constant_of_shape(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const auto shape = constant_ints(node, inputs.at(0), "input");
  HostTensor value = node.has_attribute("value") ? node.attribute_tensor("value")
                                                 : HostTensor::from_double(DType::f32, {1}, {0.0});
  if (value.numel() != 1) throw ModelError(node.describe() + ": value must have one element");
  const int64_t n = shape_numel(shape);
  HostTensor filled(value.dtype(), shape);
  std::byte* out = filled.mutable_data();
  const size_t size = host_element_size(value.dtype());
  for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * size, value.data(), size);
  Value y;
  y.device = context.to_device(Value{filled, Tensor()});
  return {y};
}

}  // namespace

void register_layout_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "Transpose", 1, transpose, "tiled 32x32 path when the innermost dim moves"});
  ops.push_back({"", "Slice", 1, slice, "any steps; starts/ends/axes/steps constant"});
  ops.push_back({"", "Concat", 4, concat, "one dispatch per input"});
  ops.push_back({"", "Split", 2, split, "split sizes constant; opset 18 num_outputs"});
  ops.push_back({"", "Gather", 1, gather, "host-known indices checked; GPU indices clamped"});
  ops.push_back({"", "Pad", 2, pad, "constant, reflect, edge, wrap; negative pads crop"});
  ops.push_back({"", "Expand", 8, expand, "numpy broadcast"});
  ops.push_back({"", "Tile", 6, tile, "repeats constant"});
  ops.push_back({"", "Resize", 10, resize,
                 "nearest/linear/cubic over the last two dims; opset 10 as ONNX Runtime runs it"});
  ops.push_back({"", "Upsample", 7, resize_before_opset_11,
                 "nearest/linear (asymmetric, nearest floor), scales attribute (7) or input (9)"});
  ops.push_back({"", "ScatterND", 11, scatter_nd,
                 "reduction none; add/mul/max/min with indices known before the run (ScatterElements on the "
                 "flattened data)"});
  ops.push_back({"", "AveragePool", 7, pool, "1-D/2-D"});
  ops.push_back({"", "MaxPool", 8, pool, "1-D/2-D, no Indices output"});
  ops.push_back(
      {"", "ConstantOfShape", 9, constant_of_shape, "large outputs only (small ones fold on the host)"});
}

}  // namespace onda::ops
