#include "graph/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>

#include "graph/broadcast.h"
#include "graph/einsum_equation.h"
#include "graph/fold_rnn_output_transposes.h"
#include "graph/host_ops.h"
#include "graph/model_error.h"
#include "graph/onnx_data_type.h"
#include "graph/shape_functions.h"

namespace onda {

namespace {

using Types = std::vector<std::optional<TensorType>>;

// Thrown inside a rule when something it needs is unknown: the result is "not inferred".
struct Unknown {};

class Context {
 public:
  Context(const Node& node, const Types& types, const std::vector<const HostTensor*>& constants)
      : node(node), types_(types), constants_(constants) {}

  bool has(size_t i) const { return i < node.inputs.size() && !node.inputs[i].empty(); }
  const TensorType& type(size_t i) const {
    if (!has(i) || i >= types_.size() || !types_[i]) throw Unknown{};
    return *types_[i];
  }
  const Shape& shape(size_t i) const { return type(i).shape; }
  int64_t rank(size_t i) const { return static_cast<int64_t>(shape(i).size()); }
  DType dtype(size_t i) const { return type(i).dtype; }
  const HostTensor& constant(size_t i) const {
    if (!has(i) || i >= constants_.size() || !constants_[i]) throw Unknown{};
    return *constants_[i];
  }
  // Attribute (older opsets) or constant input (newer ones); nullopt when neither is given.
  std::optional<std::vector<int64_t>> ints(std::string_view attribute, size_t index) const {
    if (node.has_attribute(attribute)) return node.attribute_ints(attribute);
    if (has(index)) return constant(index).to_int64();
    return std::nullopt;
  }
  [[noreturn]] void fail(const std::string& problem) const {
    throw ModelError("shape inference of " + node.describe() + ": " + problem);
  }

  const Node& node;

 private:
  const Types& types_;
  const std::vector<const HostTensor*>& constants_;
};

using Rule = std::function<Types(const Context&)>;

Types same_as_input0(const Context& c) {
  Types out(c.node.outputs.size());
  out[0] = c.type(0);
  return out;
}

Types elementwise(const Context& c, std::optional<DType> result_dtype) {
  Shape shape;
  for (size_t i = 0; i < c.node.inputs.size(); ++i)
    if (c.has(i)) shape = broadcast_shapes(shape, c.shape(i));
  return {TensorType{result_dtype.value_or(c.dtype(0)), shape}};
}

// Spatial output size of a convolution or pooling window (ONNX Conv / pooling formulas).
int64_t window_output(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                      int64_t pad_end, const std::string& auto_pad, bool ceil_mode) {
  const char* what = "convolution window";
  const int64_t effective = checked_add(checked_multiply(kernel - 1, dilation, what), 1, what);
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
    return in == 0 ? 0 : (in - 1) / stride + 1;  // ceil
  if (auto_pad == "VALID") return (in - effective) / stride + 1;
  const int64_t span =
      checked_add(checked_add(in, checked_add(pad_begin, pad_end, what), what), -effective, what);
  if (!ceil_mode) return span / stride + 1;
  int64_t out = checked_add(span, stride - 1, what) / stride + 1;
  if ((out - 1) * stride >= in + pad_begin) --out;  // the last window must start inside the input or left pad
  return out;
}

Types convolution(const Context& c, bool pooling) {
  const Shape& x = c.shape(0);
  if (x.size() < 3) c.fail("input rank below 3");
  const size_t spatial = x.size() - 2;
  std::vector<int64_t> kernel;
  if (pooling) {
    kernel = c.node.attribute_ints("kernel_shape");
  } else {
    const Shape& w = c.shape(1);
    if (w.size() != x.size()) c.fail("weight rank differs from the input rank");
    kernel = c.node.attribute_ints("kernel_shape", Shape(w.begin() + 2, w.end()));
  }
  const std::vector<int64_t> strides = c.node.attribute_ints("strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> dilations = c.node.attribute_ints("dilations", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads = c.node.attribute_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  const std::string auto_pad = c.node.attribute_string("auto_pad", "NOTSET");
  const bool ceil_mode = pooling && c.node.attribute_int("ceil_mode", 0) != 0;
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial)
    c.fail("kernel_shape, strides, dilations or pads do not match the input rank");
  for (size_t i = 0; i < spatial; ++i)
    if (strides[i] < 1 || dilations[i] < 1 || kernel[i] < 1)
      c.fail("strides, dilations and kernel must be positive");
  Shape out = {x[0], pooling ? x[1] : c.shape(1)[0]};
  for (size_t i = 0; i < spatial; ++i)
    out.push_back(window_output(x[2 + i], kernel[i], strides[i], dilations[i], pads[i], pads[spatial + i],
                                auto_pad, ceil_mode));
  Types types(c.node.outputs.size());
  types[0] = TensorType{c.dtype(0), out};
  if (types.size() > 1) types[1] = TensorType{DType::i64, out};  // MaxPool indices
  return types;
}

Types conv_transpose(const Context& c) {
  const Shape& x = c.shape(0);
  const Shape& w = c.shape(1);
  if (x.size() < 3 || w.size() != x.size()) c.fail("input and weight ranks");
  const size_t spatial = x.size() - 2;
  const std::vector<int64_t> kernel = c.node.attribute_ints("kernel_shape", Shape(w.begin() + 2, w.end()));
  const std::vector<int64_t> strides = c.node.attribute_ints("strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> dilations = c.node.attribute_ints("dilations", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads = c.node.attribute_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  const std::vector<int64_t> output_padding =
      c.node.attribute_ints("output_padding", std::vector<int64_t>(spatial, 0));
  const std::vector<int64_t> output_shape = c.node.attribute_ints("output_shape", {});
  const std::string auto_pad = c.node.attribute_string("auto_pad", "NOTSET");
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial || output_padding.size() != spatial ||
      (!output_shape.empty() && output_shape.size() < spatial))
    c.fail("kernel_shape, strides, dilations, pads or output_padding do not match the input rank");
  Shape out = {x[0], w[1] * c.node.attribute_int("group", 1)};
  for (size_t i = 0; i < spatial; ++i) {
    if (!output_shape.empty()) {
      out.push_back(output_shape[output_shape.size() - spatial + i]);
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out.push_back(checked_multiply(x[2 + i], strides[i], "ConvTranspose"));
    } else {
      // stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - pad_begin - pad_end
      const char* what = "ConvTranspose";
      int64_t size = checked_multiply(strides[i], x[2 + i] - 1, what);
      size = checked_add(size, checked_multiply(kernel[i] - 1, dilations[i], what), what);
      size = checked_add(size, checked_add(output_padding[i], 1, what), what);
      size =
          checked_add(size, checked_multiply(-1, checked_add(pads[i], pads[spatial + i], what), what), what);
      out.push_back(size);
    }
  }
  return {TensorType{c.dtype(0), out}};
}

Types matmul(const Context& c) {
  Shape a = c.shape(0), b = c.shape(1);
  if (a.empty() || b.empty()) c.fail("scalar input");
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  if (a.back() != b[b.size() - 2])
    c.fail("inner dimensions of " + shape_to_string(c.shape(0)) + " and " + shape_to_string(c.shape(1)) +
           " differ");
  Shape out = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!a_vector) out.push_back(a[a.size() - 2]);
  if (!b_vector) out.push_back(b.back());
  return {TensorType{c.dtype(0), out}};
}

Types gemm(const Context& c) {
  const Shape& a = c.shape(0);
  const Shape& b = c.shape(1);
  if (a.size() != 2 || b.size() != 2) c.fail("Gemm needs 2-D inputs");
  const bool ta = c.node.attribute_int("transA", 0) != 0, tb = c.node.attribute_int("transB", 0) != 0;
  return {TensorType{c.dtype(0), {ta ? a[1] : a[0], tb ? b[0] : b[1]}}};
}

Types recurrent(const Context& c, size_t state_outputs) {
  const Shape& x = c.shape(0);
  if (x.size() != 3) c.fail("input must be 3-D");
  const int64_t hidden = c.node.attribute_int("hidden_size");
  const int64_t directions = c.node.attribute_string("direction", "forward") == "bidirectional" ? 2 : 1;
  const bool batch_first = c.node.attribute_int("layout", 0) != 0;
  const int64_t sequence = batch_first ? x[1] : x[0], batch = batch_first ? x[0] : x[1];
  Types out(c.node.outputs.size());
  out[0] = TensorType{c.dtype(0), batch_first ? Shape{batch, sequence, directions, hidden}
                                              : Shape{sequence, directions, batch, hidden}};
  if (c.node.has_attribute(kRnnOutputPerm) && !batch_first)  // folded Transpose(0, 2, 1, 3)
    out[0] = TensorType{c.dtype(0), Shape{sequence, batch, directions, hidden}};
  const Shape state = batch_first ? Shape{batch, directions, hidden} : Shape{directions, batch, hidden};
  for (size_t i = 1; i <= state_outputs && i < out.size(); ++i) out[i] = TensorType{c.dtype(0), state};
  return out;
}

Types reduce(const Context& c) {
  const Shape& x = c.shape(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> axes = c.ints("axes", 1).value_or(std::vector<int64_t>{});
  const bool keep = c.node.attribute_int("keepdims", 1) != 0;
  if (axes.empty()) {
    if (c.node.attribute_int("noop_with_empty_axes", 0)) return {c.type(0)};
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : axes) reduced[normalize_axis(axis, rank, "Reduce")] = true;
  Shape out;
  for (int64_t i = 0; i < rank; ++i)
    if (!reduced[i])
      out.push_back(x[i]);
    else if (keep)
      out.push_back(1);
  return {TensorType{c.dtype(0), out}};
}

Types arg_reduce(const Context& c) {
  Shape out = c.shape(0);
  const int64_t axis = normalize_axis(c.node.attribute_int("axis", 0), c.rank(0), "ArgMax");
  if (c.node.attribute_int("keepdims", 1))
    out[axis] = 1;
  else
    out.erase(out.begin() + axis);
  return {TensorType{DType::i64, out}};
}

Types concat(const Context& c) {
  std::optional<Shape> out;
  int64_t axis = 0;
  for (size_t i = 0; i < c.node.inputs.size(); ++i) {
    if (!c.has(i)) continue;
    const Shape& shape = c.shape(i);
    if (!out) {
      out = shape;
      axis = normalize_axis(c.node.attribute_int("axis"), static_cast<int64_t>(shape.size()), "Concat");
      continue;
    }
    if (shape.size() != out->size()) c.fail("inputs differ in rank");
    for (size_t d = 0; d < shape.size(); ++d)
      if (static_cast<int64_t>(d) != axis && shape[d] != (*out)[d]) c.fail("inputs differ outside the axis");
    (*out)[axis] = checked_add((*out)[axis], shape[axis], "Concat");
  }
  if (!out) throw Unknown{};
  return {TensorType{c.dtype(0), *out}};
}

Types split(const Context& c) {
  const Shape& x = c.shape(0);
  const int64_t axis =
      normalize_axis(c.node.attribute_int("axis", 0), static_cast<int64_t>(x.size()), "Split");
  const size_t count = c.node.outputs.size();
  std::vector<int64_t> sizes = c.ints("split", 1).value_or(std::vector<int64_t>{});
  if (sizes.empty()) {
    const int64_t parts = c.node.attribute_int("num_outputs", static_cast<int64_t>(count));
    if (parts < 1) c.fail("no outputs");
    const int64_t chunk = (x[axis] + parts - 1) / parts;  // opset 18: the last chunk may be smaller
    for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::min(chunk, x[axis] - i * chunk));
  }
  if (sizes.size() != count) c.fail("split sizes do not match the output count");
  Types out(count);
  for (size_t i = 0; i < count; ++i) {
    Shape shape = x;
    shape[axis] = sizes[i];
    out[i] = TensorType{c.dtype(0), shape};
  }
  return out;
}

Types pad(const Context& c) {
  Shape out = c.shape(0);
  const int64_t rank = static_cast<int64_t>(out.size());
  const std::vector<int64_t> pads = c.ints("pads", 1).value_or(std::vector<int64_t>{});
  std::vector<int64_t> axes;
  if (c.has(3))
    axes = c.constant(3).to_int64();
  else
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size()) c.fail("pads length does not match the axes");
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalize_axis(axes[i], rank, "Pad");
    out[a] = checked_add(out[a], checked_add(pads[i], pads[i + axes.size()], "Pad"), "Pad");
    if (out[a] < 0) c.fail("negative output dimension");
  }
  return {TensorType{c.dtype(0), out}};
}

Types resize(const Context& c) {
  const Shape& x = c.shape(0);
  Shape out = x;
  const bool opset10_form = c.node.inputs.size() == 2;  // Resize-10 and Upsample: (X, scales)
  const size_t scales_index = opset10_form ? 1 : 2;
  std::vector<int64_t> axes = c.node.attribute_ints("axes", {});
  if (axes.empty())
    for (size_t i = 0; i < x.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (!opset10_form && c.has(3) && c.constant(3).numel() > 0) {
    const std::vector<int64_t> sizes = c.constant(3).to_int64();
    if (sizes.size() != axes.size()) c.fail("sizes length");
    if (c.node.attribute_string("keep_aspect_ratio_policy", "stretch") != "stretch") throw Unknown{};
    for (size_t i = 0; i < axes.size(); ++i)
      out[normalize_axis(axes[i], static_cast<int64_t>(x.size()), "Resize")] = sizes[i];
  } else {
    std::vector<double> scales;
    if (c.node.inputs.size() == 1) {  // Upsample-7: the scales attribute
      for (float v : c.node.attribute_floats("scales")) scales.push_back(v);
    } else {
      scales = c.constant(scales_index).to_double();
    }
    if (scales.size() != axes.size()) c.fail("scales length");
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = normalize_axis(axes[i], static_cast<int64_t>(x.size()), "Resize");
      const double size = std::floor(static_cast<double>(x[a]) * static_cast<float>(scales[i]));
      if (!(size >= 0 && size < 9e15)) c.fail("scale " + std::to_string(scales[i]) + " gives no valid size");
      out[a] = static_cast<int64_t>(size);
    }
  }
  return {TensorType{c.dtype(0), out}};
}

Types stft(const Context& c) {
  const Shape& signal = c.shape(0);
  if (signal.size() != 3) c.fail("signal must be [batch, length, 1 or 2]");
  const int64_t step = single_int64(c.constant(1), c.node.describe() + " frame_step");
  if (step <= 0) c.fail("frame_step must be positive");
  int64_t frame_length;
  if (c.has(3))
    frame_length = single_int64(c.constant(3), c.node.describe() + " frame_length");
  else if (c.has(2) && c.shape(2).size() == 1)
    frame_length = c.shape(2)[0];
  else
    throw Unknown{};
  const bool onesided = c.node.attribute_int("onesided", 1) != 0;
  const int64_t frames = (signal[1] - frame_length) / step + 1;
  return {TensorType{c.dtype(0), {signal[0], frames, onesided ? frame_length / 2 + 1 : frame_length, 2}}};
}

Types dft(const Context& c) {
  Shape out = c.shape(0);
  const int64_t rank = static_cast<int64_t>(out.size());
  int64_t axis = c.node.attribute_int("axis", 1);
  if (c.has(2))
    axis = single_int64(c.constant(2), c.node.describe() + " axis");  // opset 20: axis is an input
  axis = normalize_axis(axis, rank, "DFT");
  if (rank < 2) c.fail("input rank below 2");
  const int64_t length =
      c.has(1) ? single_int64(c.constant(1), c.node.describe() + " dft_length") : out[axis];
  const bool inverse = c.node.attribute_int("inverse", 0) != 0,
             onesided = c.node.attribute_int("onesided", 0) != 0;
  if (inverse && onesided) {
    // Inverse real DFT as ONNX Runtime runs it (shared/models/README.md): one-sided complex
    // [.., n/2+1, .., 2] in, real [.., n, .., 1] out, n = dft_length (default 2 * (bins - 1)).
    out[axis] = c.has(1) ? length : 2 * (out[axis] - 1);
    out.back() = 1;
  } else {
    out[axis] = onesided ? length / 2 + 1 : length;
    out.back() = 2;
  }
  return {TensorType{c.dtype(0), out}};
}

Types transpose(const Context& c) {
  const Shape& x = c.shape(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> perm = c.node.attribute_ints("perm", {});
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank) c.fail("perm length differs from the rank");
  Shape out;
  for (int64_t p : perm) out.push_back(x[normalize_axis(p, rank, "Transpose")]);
  return {TensorType{c.dtype(0), out}};
}

Types gather(const Context& c) {
  const Shape& data = c.shape(0);
  const int64_t axis =
      normalize_axis(c.node.attribute_int("axis", 0), static_cast<int64_t>(data.size()), "Gather");
  Shape out(data.begin(), data.begin() + axis);
  out.insert(out.end(), c.shape(1).begin(), c.shape(1).end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  return {TensorType{c.dtype(0), out}};
}

Types layer_normalization(const Context& c) {
  Types out(c.node.outputs.size());
  out[0] = c.type(0);
  // Optional Mean / InvStdDev: the input shape with the normalized axes set to 1, in float32.
  const int64_t rank = c.rank(0);
  const int64_t axis = normalize_axis(c.node.attribute_int("axis", -1), rank, "LayerNormalization");
  Shape stats = c.shape(0);
  for (int64_t i = axis; i < rank; ++i) stats[i] = 1;
  for (size_t i = 1; i < out.size(); ++i) out[i] = TensorType{DType::f32, stats};
  return out;
}

Types constant_of_shape(const Context& c) {
  DType dtype = DType::f32;
  if (c.node.has_attribute("value")) dtype = c.node.attribute_tensor("value").dtype();
  return {TensorType{dtype, c.constant(0).to_int64()}};
}

Types dropout(const Context& c) {
  Types out(c.node.outputs.size());
  out[0] = c.type(0);
  if (out.size() > 1) out[1] = TensorType{DType::boolean, c.shape(0)};
  return out;
}

Types cast(const Context& c) {
  const std::optional<DType> to = dtype_from_onnx(c.node.attribute_int("to"));
  if (!to)
    c.fail("cast to " + onnx_data_type_name(c.node.attribute_int("to")) + ", which onda does not support");
  return Types{TensorType{*to, c.shape(0)}};
}

Types global_pool(const Context& c) {
  Shape out = c.shape(0);
  for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  return Types{TensorType{c.dtype(0), out}};
}

Types flatten(const Context& c) {
  const int64_t rank = c.rank(0);
  int64_t axis = c.node.attribute_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) c.fail("axis out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) = checked_multiply(i < axis ? outer : inner, c.shape(0)[i], "Flatten");
  return Types{TensorType{c.dtype(0), {outer, inner}}};
}

Types unsqueeze(const Context& c) {
  const std::optional<std::vector<int64_t>> axes = c.ints("axes", 1);
  if (!axes) c.fail("no axes");
  return Types{TensorType{c.dtype(0), unsqueeze_output_shape(c.node, c.shape(0), *axes)}};
}

Types slice(const Context& c) {
  SliceParameters p;
  if (c.node.has_attribute("starts")) {
    p.starts = c.node.attribute_ints("starts");
    p.ends = c.node.attribute_ints("ends");
    p.axes = c.node.attribute_ints("axes", {});
  } else {
    p.starts = c.constant(1).to_int64();
    p.ends = c.constant(2).to_int64();
    if (c.has(3)) p.axes = c.constant(3).to_int64();
    if (c.has(4)) p.steps = c.constant(4).to_int64();
  }
  return Types{TensorType{c.dtype(0), slice_region(c.node, c.shape(0), p).shape}};
}

Types tile(const Context& c) {
  Shape out = c.shape(0);
  const std::vector<int64_t> repeats = c.constant(1).to_int64();
  if (repeats.size() != out.size()) c.fail("repeats length differs from the rank");
  for (size_t i = 0; i < out.size(); ++i) out[i] = checked_multiply(out[i], repeats[i], "Tile");
  return Types{TensorType{c.dtype(0), out}};
}

Types range(const Context& c) {
  const std::string what = c.node.describe();
  const double start = single_double(c.constant(0), what + " start"),
               limit = single_double(c.constant(1), what + " limit"),
               delta = single_double(c.constant(2), what + " delta");
  if (delta == 0) c.fail("delta 0");
  const double steps = std::ceil((limit - start) / delta);
  if (!(steps < 9e15)) c.fail("the range is too long");
  const int64_t count = std::max<int64_t>(0, static_cast<int64_t>(steps));
  return Types{TensorType{c.dtype(0), {count}}};
}

Types einsum(const Context& c) {
  std::vector<int64_t> ranks;
  for (size_t i = 0; i < c.node.inputs.size(); ++i) ranks.push_back(c.rank(i));
  EinsumEquation eq;
  try {
    eq = parse_einsum(c.node.attribute_string("equation"), ranks);
  } catch (const std::invalid_argument& e) {
    c.fail(e.what());
  }
  std::map<char, int64_t> sizes;  // a label's size: its largest dim (1s broadcast)
  for (size_t i = 0; i < eq.inputs.size(); ++i)
    for (size_t d = 0; d < eq.inputs[i].size(); ++d)
      sizes[eq.inputs[i][d]] = std::max(sizes[eq.inputs[i][d]], c.shape(i)[d]);
  Shape out;
  for (char label : eq.output) out.push_back(sizes[label]);
  return Types{TensorType{c.dtype(0), out}};
}

Types eye_like(const Context& c) {
  const std::optional<DType> dtype = c.node.has_attribute("dtype")
                                         ? dtype_from_onnx(c.node.attribute_int("dtype"))
                                         : std::optional<DType>(c.dtype(0));
  if (!dtype) throw Unknown{};
  return Types{TensorType{*dtype, c.shape(0)}};
}

// RandomNormal / RandomUniform: the `shape` attribute, `dtype` (default FLOAT).
Types random_of_shape(const Context& c) {
  const std::optional<DType> dtype = dtype_from_onnx(c.node.attribute_int("dtype", 1));
  if (!dtype || !c.node.has_attribute("shape")) throw Unknown{};
  const Shape shape = c.node.attribute_ints("shape");
  for (int64_t d : shape)
    if (d < 0) c.fail("shape has a negative dimension");
  return Types{TensorType{*dtype, shape}};
}

// GridSample: [N, C] of the input, then the grid's output dims (all but its first and last).
Types grid_sample(const Context& c) {
  const Shape& x = c.shape(0);
  const Shape& grid = c.shape(1);
  if (x.size() < 3 || grid.size() != x.size() || grid[0] != x[0] ||
      grid.back() != static_cast<int64_t>(x.size()) - 2)
    c.fail("grid " + shape_to_string(grid) + " does not fit input " + shape_to_string(x) +
           " (it must be [N, output dims..., spatial rank])");
  Shape out = {x[0], x[1]};
  out.insert(out.end(), grid.begin() + 1, grid.end() - 1);
  return Types{TensorType{c.dtype(0), out}};
}

using RuleTable = std::map<std::string_view, Rule>;

void set_rule(RuleTable& t, std::initializer_list<std::string_view> ops, const Rule& rule) {
  for (std::string_view op : ops) t[op] = rule;
}

// Output 0 has input 0's type: unary elementwise ops, activations, normalizations, scatters.
void add_same_type_rules(RuleTable& t) {
  set_rule(t, {"Relu", "Sigmoid", "Tanh", "Erf",  "Sqrt", "Exp",  "Log",  "Abs",   "Neg",   "Cos",
               "Sin",  "Tan",     "Atan", "Asin", "Acos", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"},
           same_as_input0);
  set_rule(t, {"Floor", "Ceil", "Round", "Reciprocal", "Sign", "Not", "BitwiseNot", "Identity", "Clip"},
           same_as_input0);
  set_rule(t,
           {"LeakyRelu", "Elu", "Selu", "Gelu", "Softplus", "Softsign", "HardSigmoid", "HardSwish", "Mish",
            "Celu", "ThresholdedRelu", "Shrink"},
           same_as_input0);
  set_rule(t,
           {"Softmax", "LogSoftmax", "InstanceNormalization", "BatchNormalization", "LpNormalization",
            "MeanVarianceNormalization", "CumSum", "Trilu", "ScatterND", "ScatterElements"},
           same_as_input0);
}

// Broadcasting binary and variadic ops, comparisons, and the per-element ops with their own output type.
void add_elementwise_rules(RuleTable& t) {
  set_rule(t,
           {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "PRelu", "Min", "Max", "Sum", "Mean", "BitwiseAnd",
            "BitwiseOr", "BitwiseXor", "BitShift"},
           [](const Context& c) { return elementwise(c, std::nullopt); });
  set_rule(t, {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"},
           [](const Context& c) { return elementwise(c, DType::boolean); });
  t["IsNaN"] = t["IsInf"] = [](const Context& c) { return Types{TensorType{DType::boolean, c.shape(0)}}; };
  t["Dropout"] = dropout;
  t["Where"] = [](const Context& c) {
    const Shape shape = broadcast_shapes(broadcast_shapes(c.shape(0), c.shape(1)), c.shape(2));
    return Types{TensorType{c.dtype(1), shape}};
  };
  t["Cast"] = cast;
  t["CastLike"] = [](const Context& c) { return Types{TensorType{c.dtype(1), c.shape(0)}}; };
}

// Convolutions, pooling, matrix products, recurrent layers and reductions.
void add_compute_rules(RuleTable& t) {
  t["Conv"] = [](const Context& c) { return convolution(c, false); };
  set_rule(t, {"AveragePool", "MaxPool", "LpPool"}, [](const Context& c) { return convolution(c, true); });
  t["GlobalAveragePool"] = t["GlobalMaxPool"] = global_pool;
  t["ConvTranspose"] = conv_transpose;
  t["MatMul"] = matmul;
  t["Gemm"] = gemm;
  t["LSTM"] = [](const Context& c) { return recurrent(c, 2); };
  t["GRU"] = t["RNN"] = [](const Context& c) { return recurrent(c, 1); };
  set_rule(t,
           {"ReduceMean", "ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2",
            "ReduceLogSumExp", "ReduceSumSquare", "ReduceLogSum"},
           reduce);
  t["ArgMax"] = t["ArgMin"] = arg_reduce;
}

// Ops that move, select or repeat elements.
void add_layout_rules(RuleTable& t) {
  t["Transpose"] = transpose;
  t["Reshape"] = [](const Context& c) {
    return Types{TensorType{c.dtype(0), reshape_output_shape(c.node, c.shape(0), c.constant(1).to_int64())}};
  };
  t["Flatten"] = flatten;
  t["Squeeze"] = [](const Context& c) {
    return Types{TensorType{c.dtype(0), squeeze_output_shape(c.node, c.shape(0), c.ints("axes", 1))}};
  };
  t["Unsqueeze"] = unsqueeze;
  t["Concat"] = concat;
  t["Split"] = split;
  t["Slice"] = slice;
  t["Gather"] = gather;
  t["GatherElements"] = [](const Context& c) { return Types{TensorType{c.dtype(0), c.shape(1)}}; };
  t["Expand"] = [](const Context& c) {
    return Types{TensorType{c.dtype(0), broadcast_shapes(c.shape(0), c.constant(1).to_int64())}};
  };
  t["Tile"] = tile;
  t["Pad"] = pad;
  t["Resize"] = t["Upsample"] = resize;
}

// Ops whose output shape comes from constant inputs or attributes, and the spectral and einsum ops.
void add_generator_and_spectral_rules(RuleTable& t) {
  t["Shape"] = [](const Context& c) {
    return Types{TensorType{DType::i64, shape_op_result(c.node, c.shape(0)).shape()}};
  };
  t["Size"] = [](const Context& c) {
    (void)c.type(0);
    return Types{TensorType{DType::i64, {}}};
  };
  t["ConstantOfShape"] = constant_of_shape;
  t["Range"] = range;
  t["LayerNormalization"] = layer_normalization;
  t["STFT"] = stft;
  t["DFT"] = dft;
  t["Einsum"] = einsum;
  t["EyeLike"] = eye_like;
  // The random ops (ops/random_ops.cpp): the input's shape, `dtype` or the input's type.
  set_rule(t, {"RandomNormalLike", "RandomUniformLike", "Bernoulli"}, eye_like);
  set_rule(t, {"RandomNormal", "RandomUniform"}, random_of_shape);
  t["GridSample"] = grid_sample;
}

RuleTable make_rules() {
  RuleTable t;
  add_same_type_rules(t);
  add_elementwise_rules(t);
  add_compute_rules(t);
  add_layout_rules(t);
  add_generator_and_spectral_rules(t);
  return t;
}

// Ops whose output is computed exactly by the folding implementation from constant inputs, but
// whose shape needs only some inputs constant: use the shared shape helpers.
const RuleTable& rules() {
  static const RuleTable table = make_rules();
  return table;
}

}  // namespace

std::vector<std::optional<TensorType>> infer_output_types(
    const Node& node, const std::vector<std::optional<TensorType>>& input_types,
    const std::vector<const HostTensor*>& constant_inputs) {
  // Rules fill output 0 and up: a node without outputs has nothing to infer (found by fuzzing).
  if (!canonical_domain(node.domain).empty() || node.outputs.empty()) return {};
  auto found = rules().find(node.op_type);
  if (found == rules().end()) return {};
  try {
    Types out = found->second(Context(node, input_types, constant_inputs));
    out.resize(node.outputs.size());
    for (size_t i = 0; i < out.size(); ++i) {
      if (node.outputs[i].empty()) out[i].reset();
      if (!out[i]) continue;
      for (int64_t dim : out[i]->shape)
        if (dim < 0)
          throw ModelError("shape inference of " + node.describe() + ": output '" + node.outputs[i] +
                           "' would have shape " + shape_to_string(out[i]->shape) + " (inputs too small?)");
    }
    return out;
  } catch (const Unknown&) {
    return {};
  }
}

bool has_shape_rule(std::string_view op_type) {
  return rules().count(op_type) != 0;
}

}  // namespace onda
