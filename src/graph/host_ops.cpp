#include "graph/host_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>

#include "graph/broadcast.h"
#include "graph/model_error.h"
#include "graph/onnx_data_type.h"
#include "graph/shape_functions.h"

namespace onda {

namespace {

using Inputs = std::vector<HostTensor>;
using Outputs = std::vector<HostTensor>;

[[noreturn]] void fail(const Node& node, const std::string& problem) {
  throw ModelError("constant folding of " + node.describe() + ": " + problem);
}

const HostTensor& input(const Node& node, const Inputs& inputs, size_t index) {
  if (index >= inputs.size() || !inputs[index].defined())
    fail(node, "input " + std::to_string(index) + " is missing");
  return inputs[index];
}

bool has_input(const Inputs& inputs, size_t index) {
  return index < inputs.size() && inputs[index].defined();
}

// Older opsets give axes, pads, splits as attributes, newer ones as inputs.
std::optional<std::vector<int64_t>> ints_from_attribute_or_input(const Node& node, const Inputs& inputs,
                                                                 std::string_view attribute, size_t index) {
  if (node.has_attribute(attribute)) return node.attribute_ints(attribute);
  if (has_input(inputs, index)) return inputs[index].to_int64();
  return std::nullopt;
}

bool is_integer(DType dtype) {
  return !is_float(dtype);
}

// Strides (in elements) of a C-order shape.
std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

// Calls copy(std::integral_constant<size_t, N>{}) for elements of N = 1, 2, 4 or 8 bytes and returns
// true; false for other sizes. A copy of constant size compiles to one move, where a size known only
// at run time is a memcpy call per element (HTDemucs' position-table Expands and Tiles copy ~10^6
// elements each on its first run).
template <class Copy>
bool with_fixed_element_size(size_t element, Copy&& copy) {
  switch (element) {
    case 1:
      copy(std::integral_constant<size_t, 1>{});
      return true;
    case 2:
      copy(std::integral_constant<size_t, 2>{});
      return true;
    case 4:
      copy(std::integral_constant<size_t, 4>{});
      return true;
    case 8:
      copy(std::integral_constant<size_t, 8>{});
      return true;
    default:
      return false;
  }
}

// Copies elements: out[i] = in[source[i]].
HostTensor gather_elements(const HostTensor& in, Shape out_shape, const std::vector<int64_t>& source) {
  HostTensor out(in.dtype(), std::move(out_shape));
  const size_t element = host_element_size(in.dtype());
  std::byte* destination = out.mutable_data();
  const bool fixed = with_fixed_element_size(element, [&](auto size) {
    constexpr size_t n = decltype(size)::value;
    for (size_t i = 0; i < source.size(); ++i) std::memcpy(destination + i * n, in.data() + source[i] * n, n);
  });
  if (!fixed)
    for (size_t i = 0; i < source.size(); ++i)
      std::memcpy(destination + i * element, in.data() + source[i] * element, element);
  return out;
}

// Every element of `out` set to the N bytes at `value`.
template <size_t N>
void fill_fixed(std::byte* out, int64_t count, const std::byte* value) {
  for (int64_t i = 0; i < count; ++i) std::memcpy(out + i * N, value, N);
}

// Visits every coordinate of `shape` in C order.
void for_each_coordinate(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& visit) {
  const int64_t count = shape_numel(shape);
  std::vector<int64_t> coordinate(shape.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    visit(coordinate);
    for (size_t axis = shape.size(); axis-- > 0;) {
      if (++coordinate[axis] < shape[axis]) break;
      coordinate[axis] = 0;
    }
  }
}

// ---- shape and layout ops

Outputs identity(const Node& node, const Inputs& inputs) {
  return {input(node, inputs, 0)};
}

Outputs shape_op(const Node& node, const Inputs& inputs) {
  return {shape_op_result(node, input(node, inputs, 0).shape())};
}

Outputs size_op(const Node& node, const Inputs& inputs) {
  return {HostTensor::from_values<int64_t>({}, {input(node, inputs, 0).numel()})};
}

Outputs reshape(const Node& node, const Inputs& inputs) {
  const HostTensor& data = input(node, inputs, 0);
  return {data.reshaped(reshape_output_shape(node, data.shape(), input(node, inputs, 1).to_int64()))};
}

Outputs flatten(const Node& node, const Inputs& inputs) {
  const HostTensor& data = input(node, inputs, 0);
  const int64_t rank = data.rank();
  int64_t axis = node.attribute_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) fail(node, "axis out of range");
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= data.shape()[i];
  return {data.reshaped({outer, outer == 0 ? 0 : data.numel() / std::max<int64_t>(outer, 1)})};
}

Outputs squeeze(const Node& node, const Inputs& inputs) {
  const HostTensor& data = input(node, inputs, 0);
  return {data.reshaped(
      squeeze_output_shape(node, data.shape(), ints_from_attribute_or_input(node, inputs, "axes", 1)))};
}

Outputs unsqueeze(const Node& node, const Inputs& inputs) {
  const HostTensor& data = input(node, inputs, 0);
  const std::optional<std::vector<int64_t>> axes = ints_from_attribute_or_input(node, inputs, "axes", 1);
  if (!axes) fail(node, "no axes");
  return {data.reshaped(unsqueeze_output_shape(node, data.shape(), *axes))};
}

Outputs concat(const Node& node, const Inputs& inputs) {
  std::vector<const HostTensor*> parts;
  for (const HostTensor& part : inputs)
    if (part.defined()) parts.push_back(&part);
  if (parts.empty()) fail(node, "no inputs");
  const Shape& first = parts[0]->shape();
  const int64_t axis =
      normalize_axis(node.attribute_int("axis"), static_cast<int64_t>(first.size()), "Concat");
  Shape shape = first;
  shape[axis] = 0;
  for (const HostTensor* part : parts) {
    if (part->rank() != static_cast<int64_t>(first.size()) || part->dtype() != parts[0]->dtype())
      fail(node, "inputs differ in rank or dtype");
    for (size_t i = 0; i < first.size(); ++i)
      if (static_cast<int64_t>(i) != axis && part->shape()[i] != first[i])
        fail(node,
             "input shapes " + shape_to_string(first) + " and " + shape_to_string(part->shape()) + " differ");
    shape[axis] += part->shape()[axis];
  }
  HostTensor out(parts[0]->dtype(), shape);
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= shape[i];
  std::byte* destination = out.mutable_data();
  for (int64_t o = 0; o < outer; ++o)
    for (const HostTensor* part : parts) {
      const size_t block = outer ? part->byte_size() / outer : 0;
      std::memcpy(destination, part->data() + o * block, block);
      destination += block;
    }
  return {out};
}

Outputs gather(const Node& node, const Inputs& inputs) {
  const HostTensor& data = input(node, inputs, 0);
  const HostTensor& indices = input(node, inputs, 1);
  const int64_t axis = normalize_axis(node.attribute_int("axis", 0), data.rank(), "Gather");
  const int64_t axis_dim = data.shape()[axis];
  Shape shape(data.shape().begin(), data.shape().begin() + axis);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), data.shape().begin() + axis + 1, data.shape().end());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= data.shape()[i];
  for (int64_t i = axis + 1; i < data.rank(); ++i) inner *= data.shape()[i];
  const std::vector<int64_t> index_values = indices.to_int64();
  std::vector<int64_t> source;
  source.reserve(static_cast<size_t>(shape_numel(shape)));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : index_values) {
      if (index < -axis_dim || index >= axis_dim)
        fail(node, "index " + std::to_string(index) + " out of range");
      if (index < 0) index += axis_dim;
      for (int64_t i = 0; i < inner; ++i) source.push_back((o * axis_dim + index) * inner + i);
    }
  return {gather_elements(data, shape, source)};
}

Outputs slice(const Node& node, const Inputs& inputs) {
  const HostTensor& data = input(node, inputs, 0);
  const int64_t rank = data.rank();
  SliceParameters parameters;
  if (node.has_attribute("starts")) {  // opset 1..9
    parameters.starts = node.attribute_ints("starts");
    parameters.ends = node.attribute_ints("ends");
    parameters.axes = node.attribute_ints("axes", {});
  } else {
    parameters.starts = input(node, inputs, 1).to_int64();
    parameters.ends = input(node, inputs, 2).to_int64();
    if (has_input(inputs, 3)) parameters.axes = inputs[3].to_int64();
    if (has_input(inputs, 4)) parameters.steps = inputs[4].to_int64();
  }
  const SliceRegion region = slice_region(node, data.shape(), parameters);
  const std::vector<int64_t> strides = strides_of(data.shape());
  std::vector<int64_t> source;
  source.reserve(static_cast<size_t>(shape_numel(region.shape)));
  for_each_coordinate(region.shape, [&](const std::vector<int64_t>& c) {
    int64_t offset = 0;
    for (int64_t a = 0; a < rank; ++a) offset += (region.first[a] + c[a] * region.step[a]) * strides[a];
    source.push_back(offset);
  });
  return {gather_elements(data, region.shape, source)};
}

Outputs transpose(const Node& node, const Inputs& inputs) {
  const HostTensor& data = input(node, inputs, 0);
  const int64_t rank = data.rank();
  std::vector<int64_t> perm = node.attribute_ints("perm", {});
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank) fail(node, "perm length differs from the rank");
  Shape shape(rank);
  for (int64_t i = 0; i < rank; ++i) shape[i] = data.shape()[normalize_axis(perm[i], rank, "Transpose")];
  const std::vector<int64_t> strides = strides_of(data.shape());
  std::vector<int64_t> source;
  for_each_coordinate(shape, [&](const std::vector<int64_t>& c) {
    int64_t offset = 0;
    for (int64_t a = 0; a < rank; ++a) offset += c[a] * strides[perm[a] < 0 ? perm[a] + rank : perm[a]];
    source.push_back(offset);
  });
  return {gather_elements(data, shape, source)};
}

// Writes `in` broadcast over axes axis.. of `to` at `out` (advanced past it): the last axis copies one
// run (stride 1) or repeats one element (stride 0), so no index is computed per element.
template <size_t N>
void broadcast_into(const std::byte* in, const std::vector<int64_t>& stride, const Shape& to, size_t axis,
                    int64_t source, std::byte*& out) {
  const int64_t n = to[axis];
  if (axis + 1 == to.size()) {
    if (stride[axis] == 0) {
      fill_fixed<N>(out, n, in + source * N);
    } else {
      std::memcpy(out, in + source * N, static_cast<size_t>(n) * N);
    }
    out += n * N;
    return;
  }
  for (int64_t i = 0; i < n; ++i) broadcast_into<N>(in, stride, to, axis + 1, source + i * stride[axis], out);
}

Outputs expand(const Node& node, const Inputs& inputs) {
  const HostTensor& data = input(node, inputs, 0);
  const Shape shape = broadcast_shapes(data.shape(), input(node, inputs, 1).to_int64());
  if (!shape.empty() && shape_numel(shape) > 0) {
    const std::vector<int64_t> stride = broadcast_source_strides(data.shape(), shape);
    HostTensor out(data.dtype(), shape);
    std::byte* destination = out.mutable_data();
    if (with_fixed_element_size(host_element_size(data.dtype()), [&](auto size) {
          broadcast_into<decltype(size)::value>(data.data(), stride, shape, 0, 0, destination);
        }))
      return {out};
  }
  return {gather_elements(data, shape, broadcast_source_indices(data.shape(), shape))};
}

Outputs tile(const Node& node, const Inputs& inputs) {
  const HostTensor& data = input(node, inputs, 0);
  const std::vector<int64_t> repeats = input(node, inputs, 1).to_int64();
  if (static_cast<int64_t>(repeats.size()) != data.rank()) fail(node, "repeats length differs from the rank");
  Shape shape = data.shape();
  for (size_t i = 0; i < shape.size(); ++i) shape[i] = checked_multiply(shape[i], repeats[i], "Tile");
  const std::vector<int64_t> strides = strides_of(data.shape());
  std::vector<int64_t> source;
  for_each_coordinate(shape, [&](const std::vector<int64_t>& c) {
    int64_t offset = 0;
    for (size_t a = 0; a < c.size(); ++a) offset += (c[a] % data.shape()[a]) * strides[a];
    source.push_back(offset);
  });
  return {gather_elements(data, shape, source)};
}

// ---- generators

Outputs constant_of_shape(const Node& node, const Inputs& inputs) {
  const Shape shape = input(node, inputs, 0).to_int64();
  if (const Attribute* value = node.find_attribute("value")) {
    const HostTensor& fill = node.attribute_tensor("value");
    if (fill.numel() != 1) fail(node, "value must have one element");
    (void)value;
    HostTensor out(fill.dtype(), shape);
    const size_t element = host_element_size(fill.dtype());
    std::byte* destination = out.mutable_data();
    const bool fixed = with_fixed_element_size(element, [&](auto size) {
      fill_fixed<decltype(size)::value>(destination, out.numel(), fill.data());
    });
    if (!fixed)
      for (int64_t i = 0; i < out.numel(); ++i) std::memcpy(destination + i * element, fill.data(), element);
    return {out};
  }
  return {HostTensor(DType::f32, shape)};
}

Outputs range(const Node& node, const Inputs& inputs) {
  const HostTensor& start = input(node, inputs, 0);
  const std::string what = node.describe();
  const double first = single_double(start, what + " start"),
               limit = single_double(input(node, inputs, 1), what + " limit"),
               delta = single_double(input(node, inputs, 2), what + " delta");
  if (delta == 0) fail(node, "delta 0");
  const double steps = std::ceil((limit - first) / delta);
  if (!(steps < 9e15)) fail(node, "the range is too long");
  const int64_t count = std::max<int64_t>(0, static_cast<int64_t>(steps));
  if (is_integer(start.dtype())) {
    const int64_t a = single_int64(start, what), d = single_int64(input(node, inputs, 2), what);
    if (d == 0) fail(node, "delta 0");
    std::vector<int64_t> values(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) values[i] = a + i * d;
    return {HostTensor::from_int64(start.dtype(), {count}, values)};
  }
  std::vector<double> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) values[i] = first + static_cast<double>(i) * delta;
  return {HostTensor::from_double(start.dtype(), {count}, values)};
}

// ---- elementwise

Outputs cast(const Node& node, const Inputs& inputs) {
  const HostTensor& data = input(node, inputs, 0);
  const std::optional<DType> to = dtype_from_onnx(node.attribute_int("to"));
  if (!to)
    fail(node, "cast to " + onnx_data_type_name(node.attribute_int("to")) + ", which onda does not support");
  const std::optional<IntegerWidth> width = carried_integer_width(node.attribute_int("to"));
  if (width) {  // a narrow integer carried in a wider one: wrap as numpy's astype does
    std::vector<int64_t> values;
    if (is_integer(data.dtype())) {
      values = data.to_int64();
    } else {
      for (double v : data.to_double()) values.push_back(static_cast<int64_t>(std::trunc(v)));
    }
    for (int64_t& v : values) {
      if (width->bits == 64) {
        if (v < 0) fail(node, "cast of " + std::to_string(v) + " to UINT64, which onda carries in int64");
        continue;
      }
      const uint64_t bits = static_cast<uint64_t>(v) & ((uint64_t{1} << width->bits) - 1);
      const bool negative = width->is_signed && (bits >> (width->bits - 1)) != 0;
      v = negative ? static_cast<int64_t>(bits) - (int64_t{1} << width->bits) : static_cast<int64_t>(bits);
    }
    return {HostTensor::from_int64(*to, data.shape(), values)};
  }
  if (is_integer(*to) && is_integer(data.dtype()))
    return {HostTensor::from_int64(*to, data.shape(), data.to_int64())};
  return {HostTensor::from_double(*to, data.shape(), data.to_double())};
}

// Integer ops compute in int64 (exact); anything with a float input in double, rounded to the dtype.
struct BinaryRule {
  bool boolean_result;
  std::function<int64_t(int64_t, int64_t)> on_integers;
  std::function<double(double, double)> on_floats;
};

Outputs binary(const Node& node, const Inputs& inputs, const BinaryRule& rule) {
  const HostTensor& a = input(node, inputs, 0);
  const HostTensor& b = input(node, inputs, 1);
  const Shape shape = broadcast_shapes(a.shape(), b.shape());
  const std::vector<int64_t> ia = broadcast_source_indices(a.shape(), shape);
  const std::vector<int64_t> ib = broadcast_source_indices(b.shape(), shape);
  const DType out_dtype = rule.boolean_result ? DType::boolean : a.dtype();
  if (is_integer(a.dtype()) && is_integer(b.dtype())) {
    const std::vector<int64_t> va = a.to_int64(), vb = b.to_int64();
    std::vector<int64_t> out(ia.size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = rule.on_integers(va[ia[i]], vb[ib[i]]);
    return {HostTensor::from_int64(out_dtype, shape, out)};
  }
  const std::vector<double> va = a.to_double(), vb = b.to_double();
  std::vector<double> out(ia.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = rule.on_floats(va[ia[i]], vb[ib[i]]);
  return {HostTensor::from_double(out_dtype, shape, out)};
}

int64_t integer_divide(int64_t a, int64_t b) {
  if (b == 0) throw ModelError("constant folding: integer division by zero");
  if (b == -1) return static_cast<int64_t>(0ull - static_cast<uint64_t>(a));  // INT64_MIN / -1 traps on x86
  return a / b;  // truncation toward zero, as ONNX Runtime's integer Div
}

// Integer overflow wraps (two's complement, as the GPU's i32 arithmetic), without signed-overflow UB.
int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrapping_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

Outputs add(const Node& n, const Inputs& in) {
  return binary(n, in, {false, wrapping_add, std::plus<double>()});
}
Outputs sub(const Node& n, const Inputs& in) {
  return binary(n, in, {false, wrapping_sub, std::minus<double>()});
}
Outputs mul(const Node& n, const Inputs& in) {
  return binary(n, in, {false, wrapping_mul, std::multiplies<double>()});
}
Outputs div(const Node& n, const Inputs& in) {
  return binary(n, in, {false, integer_divide, std::divides<double>()});
}
Outputs mod(const Node& n, const Inputs& in) {
  if (n.attribute_int("fmod", 0))
    return binary(n, in,
                  {false,
                   [](int64_t a, int64_t b) {
                     if (!b) throw ModelError("Mod by zero");
                     return b == -1 ? 0 : a % b;  // INT64_MIN % -1 traps on x86
                   },
                   [](double a, double b) { return std::fmod(a, b); }});
  // fmod=0: the result takes the divisor's sign (Python's %).
  return binary(n, in,
                {false,
                 [](int64_t a, int64_t b) {
                   if (!b) throw ModelError("Mod by zero");
                   const int64_t r = b == -1 ? 0 : a % b;
                   return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
                 },
                 [](double a, double b) {
                   const double r = std::fmod(a, b);
                   return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
                 }});
}
Outputs equal(const Node& n, const Inputs& in) {
  return binary(n, in, {true, std::equal_to<int64_t>(), std::equal_to<double>()});
}
Outputs less(const Node& n, const Inputs& in) {
  return binary(n, in, {true, std::less<int64_t>(), std::less<double>()});
}
Outputs greater(const Node& n, const Inputs& in) {
  return binary(n, in, {true, std::greater<int64_t>(), std::greater<double>()});
}
Outputs logical_and(const Node& n, const Inputs& in) {
  return binary(n, in, {true, std::logical_and<int64_t>(), std::logical_and<double>()});
}
Outputs logical_or(const Node& n, const Inputs& in) {
  return binary(n, in, {true, std::logical_or<int64_t>(), std::logical_or<double>()});
}
// Variadic Min / Max: folded pairwise (broadcasting is associative).
Outputs variadic(const Node& node, const Inputs& inputs, const BinaryRule& rule) {
  if (inputs.empty()) fail(node, "no inputs");
  HostTensor result = input(node, inputs, 0);
  for (size_t i = 1; i < inputs.size(); ++i) result = binary(node, {result, input(node, inputs, i)}, rule)[0];
  return {result};
}
Outputs min_op(const Node& n, const Inputs& in) {
  return variadic(n, in,
                  {false, [](int64_t a, int64_t b) { return std::min(a, b); },
                   [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }});
}
Outputs max_op(const Node& n, const Inputs& in) {
  return variadic(n, in,
                  {false, [](int64_t a, int64_t b) { return std::max(a, b); },
                   [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }});
}

Outputs where(const Node& node, const Inputs& inputs) {
  const HostTensor& condition = input(node, inputs, 0);
  const HostTensor& x = input(node, inputs, 1);
  const HostTensor& y = input(node, inputs, 2);
  const Shape shape = broadcast_shapes(broadcast_shapes(condition.shape(), x.shape()), y.shape());
  const std::vector<int64_t> ic = broadcast_source_indices(condition.shape(), shape);
  const std::vector<int64_t> ix = broadcast_source_indices(x.shape(), shape);
  const std::vector<int64_t> iy = broadcast_source_indices(y.shape(), shape);
  const std::vector<int64_t> c = condition.to_int64();
  HostTensor out(x.dtype(), shape);
  const size_t element = host_element_size(x.dtype());
  std::byte* destination = out.mutable_data();
  for (size_t i = 0; i < ic.size(); ++i) {
    const std::byte* source = c[ic[i]] ? x.data() + ix[i] * element : y.data() + iy[i] * element;
    std::memcpy(destination + i * element, source, element);
  }
  return {out};
}

Outputs unary(const Node& node, const Inputs& inputs, int64_t (*on_integer)(int64_t),
              double (*on_float)(double)) {
  const HostTensor& data = input(node, inputs, 0);
  if (is_integer(data.dtype()) && on_integer) {
    std::vector<int64_t> values = data.to_int64();
    for (int64_t& v : values) v = on_integer(v);
    return {HostTensor::from_int64(data.dtype(), data.shape(), values)};
  }
  if (!on_float) fail(node, "not defined for " + std::string(dtype_name(data.dtype())));
  std::vector<double> values = data.to_double();
  for (double& v : values) v = on_float(v);
  return {HostTensor::from_double(data.dtype(), data.shape(), values)};
}

Outputs neg(const Node& n, const Inputs& in) {
  return unary(
      n, in, [](int64_t v) { return -v; }, [](double v) { return -v; });
}
Outputs abs_op(const Node& n, const Inputs& in) {
  return unary(
      n, in, [](int64_t v) { return v < 0 ? -v : v; }, [](double v) { return std::fabs(v); });
}
Outputs not_op(const Node& n, const Inputs& in) {
  return unary(
      n, in, [](int64_t v) -> int64_t { return v == 0; }, nullptr);
}
Outputs sqrt_op(const Node& n, const Inputs& in) {
  return unary(n, in, nullptr, [](double v) { return std::sqrt(v); });
}
Outputs floor_op(const Node& n, const Inputs& in) {
  return unary(n, in, nullptr, [](double v) { return std::floor(v); });
}
Outputs ceil_op(const Node& n, const Inputs& in) {
  return unary(n, in, nullptr, [](double v) { return std::ceil(v); });
}

// ---- reductions (ReduceSum/Prod/Min/Max/Mean with axes as attribute or input)

Outputs reduce(const Node& node, const Inputs& inputs, char kind) {
  const HostTensor& data = input(node, inputs, 0);
  const int64_t rank = data.rank();
  std::vector<int64_t> axes =
      ints_from_attribute_or_input(node, inputs, "axes", 1).value_or(std::vector<int64_t>{});
  const bool keep = node.attribute_int("keepdims", 1) != 0;
  if (axes.empty()) {
    if (node.attribute_int("noop_with_empty_axes", 0)) return {data};
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : axes) reduced[normalize_axis(axis, rank, "Reduce")] = true;
  Shape kept_shape = data.shape(), out_shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (reduced[i]) kept_shape[i] = 1;
    if (!reduced[i] || keep) out_shape.push_back(kept_shape[i]);
  }
  const std::vector<int64_t> kept_strides = strides_of(kept_shape);
  const int64_t out_count = shape_numel(kept_shape);
  const std::vector<double> values = data.to_double();
  std::vector<double> accumulator(static_cast<size_t>(out_count), kind == 'p' ? 1.0 : 0.0);
  std::vector<bool> seen(static_cast<size_t>(out_count), false);
  int64_t flat = 0;
  for_each_coordinate(data.shape(), [&](const std::vector<int64_t>& c) {
    int64_t target = 0;
    for (int64_t a = 0; a < rank; ++a) target += (reduced[a] ? 0 : c[a]) * kept_strides[a];
    const double v = values[flat++];
    double& acc = accumulator[target];
    switch (kind) {
      case 's':
      case 'm':
        acc += v;
        break;
      case 'p':
        acc *= v;
        break;
      case '<':
        acc = seen[target] ? std::min(acc, v) : v;
        break;
      case '>':
        acc = seen[target] ? std::max(acc, v) : v;
        break;
    }
    seen[target] = true;
  });
  if (kind == 'm') {
    const double count = static_cast<double>(data.numel()) / std::max<int64_t>(out_count, 1);
    for (double& v : accumulator) v /= count;
  }
  return {HostTensor::from_double(data.dtype(), out_shape, accumulator)};
}

Outputs reduce_sum(const Node& n, const Inputs& in) {
  return reduce(n, in, 's');
}
Outputs reduce_prod(const Node& n, const Inputs& in) {
  return reduce(n, in, 'p');
}
Outputs reduce_mean(const Node& n, const Inputs& in) {
  return reduce(n, in, 'm');
}
Outputs reduce_min(const Node& n, const Inputs& in) {
  return reduce(n, in, '<');
}
Outputs reduce_max(const Node& n, const Inputs& in) {
  return reduce(n, in, '>');
}

const std::map<std::string_view, HostOp>& host_ops() {
  static const std::map<std::string_view, HostOp> ops = {
      {"Identity", identity},
      {"Shape", shape_op},
      {"Size", size_op},
      {"Reshape", reshape},
      {"Flatten", flatten},
      {"Squeeze", squeeze},
      {"Unsqueeze", unsqueeze},
      {"Concat", concat},
      {"Gather", gather},
      {"Slice", slice},
      {"Transpose", transpose},
      {"Expand", expand},
      {"Tile", tile},
      {"ConstantOfShape", constant_of_shape},
      {"Range", range},
      {"Cast", cast},
      {"Add", add},
      {"Sub", sub},
      {"Mul", mul},
      {"Div", div},
      {"Mod", mod},
      {"Equal", equal},
      {"Less", less},
      {"Greater", greater},
      {"And", logical_and},
      {"Or", logical_or},
      {"Min", min_op},
      {"Max", max_op},
      {"Where", where},
      {"Neg", neg},
      {"Abs", abs_op},
      {"Not", not_op},
      {"Sqrt", sqrt_op},
      {"Floor", floor_op},
      {"Ceil", ceil_op},
      {"ReduceSum", reduce_sum},
      {"ReduceProd", reduce_prod},
      {"ReduceMean", reduce_mean},
      {"ReduceMin", reduce_min},
      {"ReduceMax", reduce_max},
  };
  return ops;
}

}  // namespace

HostOp find_host_op(std::string_view op_type) {
  auto found = host_ops().find(op_type);
  return found == host_ops().end() ? nullptr : found->second;
}

bool is_view_op(std::string_view op_type) {
  return op_type == "Identity" || op_type == "Reshape" || op_type == "Squeeze" || op_type == "Unsqueeze" ||
         op_type == "Flatten";
}

}  // namespace onda
