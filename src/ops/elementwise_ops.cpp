// ONNX elementwise ops (activations, arithmetic, comparisons, logic, Where, Cast, Clip, variadic
// Sum/Mean/Max/Min) onto the elementwise kernel family.
#include <fmt/format.h>

#include <limits>

#include "graph/model_error.h"
#include "graph/onnx_data_type.h"
#include "kernels/elementwise/broadcast.h"
#include "kernels/elementwise/elementwise_kernel.h"
#include "ops/elementwise_call.h"
#include "ops/kernel_plans.h"
#include "ops/op_registry.h"
#include "ops/outer_slices.h"

namespace onda::ops {
namespace {

using kernels::ElementwiseAttributes;
using Op = kernels::ElementwiseOp;

// The ONNX ops that are one kernel op of the same name (before their attributes pick a variant).
const std::vector<std::pair<const char*, Op>>& onnx_elementwise_ops() {
  static const std::vector<std::pair<const char*, Op>> ops = {
      {"Relu", Op::Relu},
      {"LeakyRelu", Op::LeakyRelu},
      {"Sigmoid", Op::Sigmoid},
      {"HardSigmoid", Op::HardSigmoid},
      {"HardSwish", Op::HardSwish},
      {"Tanh", Op::Tanh},
      {"Erf", Op::Erf},
      {"Gelu", Op::Gelu},
      {"Sqrt", Op::Sqrt},
      {"Exp", Op::Exp},
      {"Log", Op::Log},
      {"Reciprocal", Op::Reciprocal},
      {"Sin", Op::Sin},
      {"Cos", Op::Cos},
      {"Atan", Op::Atan},
      {"Floor", Op::Floor},
      {"Ceil", Op::Ceil},
      {"Round", Op::Round},
      {"Softplus", Op::Softplus},
      {"Softsign", Op::Softsign},
      {"Elu", Op::Elu},
      {"Selu", Op::Selu},
      {"ThresholdedRelu", Op::ThresholdedRelu},
      {"Clip", Op::Clip},
      {"Abs", Op::Abs},
      {"Neg", Op::Neg},
      {"Sign", Op::Sign},
      {"Pow", Op::Pow},
      {"PRelu", Op::PRelu},
      {"Add", Op::Add},
      {"Sub", Op::Sub},
      {"Mul", Op::Mul},
      {"Div", Op::Div},
      {"Mod", Op::Mod},
      {"Equal", Op::Equal},
      {"Less", Op::Less},
      {"LessOrEqual", Op::LessOrEqual},
      {"Greater", Op::Greater},
      {"GreaterOrEqual", Op::GreaterOrEqual},
      {"And", Op::And},
      {"Or", Op::Or},
      {"Xor", Op::Xor},
      {"Not", Op::Not},
      {"IsNaN", Op::IsNaN},
      {"IsInf", Op::IsInf},
      {"Where", Op::Where},
      {"Tan", Op::Tan},
      {"Asin", Op::Asin},
      {"Acos", Op::Acos},
      {"Sinh", Op::Sinh},
      {"Cosh", Op::Cosh},
      {"Asinh", Op::Asinh},
      {"Acosh", Op::Acosh},
      {"Atanh", Op::Atanh},
      {"Celu", Op::Celu},
      {"Mish", Op::Mish},
      {"Shrink", Op::Shrink},
      {"BitwiseAnd", Op::BitwiseAnd},
      {"BitwiseOr", Op::BitwiseOr},
      {"BitwiseXor", Op::BitwiseXor},
      {"BitwiseNot", Op::BitwiseNot},
      {"BitShift", Op::BitShiftLeft},  // direction picks left or right
  };
  return ops;
}

Op elementwise_op_of(const Node& node) {
  for (const auto& [name, op] : onnx_elementwise_ops()) {
    if (node.op_type == name) return op;
  }
  throw ModelError(node.describe() + ": not an elementwise op");
}

}  // namespace

void record_in_binding_slices(OpContext& context, std::vector<Tensor> tensors, const Tensor& output,
                              const ElementwiseRecord& record) {
  // Leading dims of 1 ([1, C, H, W] activations) are dropped first, from the output and from the
  // inputs of full rank (lower-rank inputs broadcast from the right, unaffected), so the slices
  // run along the first dim that has more than one row.
  Tensor out_view = output;
  const uint64_t binding_limit = context.kernels.gpu.limits().maxStorageBufferBindingSize;
  while (out_view.device_bytes() > binding_limit && out_view.rank() > 1 && out_view.shape()[0] == 1) {
    const Shape inner(out_view.shape().begin() + 1, out_view.shape().end());
    for (auto& t : tensors)
      if (t.rank() == out_view.rank()) t = t.reshape(Shape(t.shape().begin() + 1, t.shape().end()));
    out_view = out_view.reshape(inner);
  }
  const Shape& sliced_shape = out_view.shape();
  uint64_t row_bytes = out_view.device_bytes() / std::max<int64_t>(sliced_shape.empty() ? 1 : sliced_shape[0], 1);
  for (const auto& t : tensors) {
    if (t.rank() == static_cast<int64_t>(sliced_shape.size()) && !sliced_shape.empty() && t.shape()[0] == sliced_shape[0]) {
      row_bytes = std::max<uint64_t>(row_bytes, t.device_bytes() / std::max<int64_t>(sliced_shape[0], 1));
    }
  }
  const int64_t rows = sliced_shape.empty() ? 0 : outer_slice_rows(context, sliced_shape[0], row_bytes);
  if (rows == 0) {
    record(tensors, out_view);
    return;
  }
  for (int64_t begin = 0; begin < sliced_shape[0]; begin += rows) {
    const int64_t end = std::min(sliced_shape[0], begin + rows);
    std::vector<Tensor> slices;
    for (const auto& t : tensors) {
      const bool sliced = t.rank() == static_cast<int64_t>(sliced_shape.size()) && t.shape()[0] == sliced_shape[0];
      slices.push_back(sliced ? t.slice_outer(begin, end) : t);
    }
    record(slices, out_view.slice_outer(begin, end));
  }
}

namespace {

Value run_kernel(const Node& node, OpContext& context, Op op, std::vector<Value> inputs,
                 const ElementwiseAttributes& attributes) {
  std::vector<Tensor> tensors;
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const auto& v : inputs) {
    if (!v.defined()) throw ModelError(node.describe() + ": a required input is missing");
    tensors.push_back(context.to_device(v));
    shapes.push_back(v.shape());
    dtypes.push_back(v.dtype());
  }
  try {
    const DType out_dtype = kernels::elementwise_result_dtype(op, dtypes, attributes);
    Value out;
    out.device = context.allocate(out_dtype, kernels::broadcast_shape(shapes));
    // Larger than one binding: slices of the leading dim (inputs without it are broadcast whole).
    record_in_binding_slices(context, std::move(tensors), out.device,
                             [&](std::span<const Tensor> slices, const Tensor& out_slice) {
                               record_elementwise(context, op, slices, out_slice, attributes);
                             });
    return out;
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
}

// A host scalar input as a float (Clip's min/max).
std::optional<float> host_scalar(const Node& node, const Value& v, const char* what) {
  if (!v.defined()) return std::nullopt;
  if (!v.on_host()) throw ModelError(fmt::format("{}: {} must be a constant", node.describe(), what));
  if (v.host.numel() != 1) throw ModelError(fmt::format("{}: {} must be a scalar", node.describe(), what));
  return static_cast<float>(v.host.to_double()[0]);
}

ElementwiseCall call_of(const Node& node, DType first_input) {
  ElementwiseAttributes a;
  Op op = elementwise_op_of(node);
  if (op == Op::LeakyRelu) a.alpha = node.attribute_float("alpha", 0.01f);
  if (op == Op::Elu) a.alpha = node.attribute_float("alpha", 1.0f);
  if (op == Op::Selu) {
    a.alpha = node.attribute_float("alpha", 1.67326319217681884765625f);
    a.beta = node.attribute_float("gamma", 1.05070102214813232421875f);
  }
  if (op == Op::HardSigmoid)
    a.alpha = node.attribute_float("alpha", 0.2f), a.beta = node.attribute_float("beta", 0.5f);
  if (op == Op::ThresholdedRelu) a.alpha = node.attribute_float("alpha", 1.0f);
  if (op == Op::Celu) a.alpha = node.attribute_float("alpha", 1.0f);
  if (op == Op::Shrink)
    a.alpha = node.attribute_float("lambd", 0.5f), a.beta = node.attribute_float("bias", 0.0f);
  if (node.op_type == "BitShift") {
    const std::string direction = node.attribute_string("direction", "");
    if (direction != "LEFT" && direction != "RIGHT") {
      throw ModelError(
          fmt::format("{}: direction must be \"LEFT\" or \"RIGHT\", got \"{}\"", node.describe(), direction));
    }
    // BitShift's types are uint8/16/32/64 only: an int32 input is a UINT16 carried in int32
    // (graph/onnx_data_type.h), shifted and wrapped to 16 bits.
    const bool uint16 = first_input == DType::i32;
    if (direction == "LEFT") {
      op = uint16 ? Op::BitShiftLeft16 : Op::BitShiftLeft;
    } else {
      op = uint16 ? Op::BitShiftRight16 : Op::BitShiftRight;
    }
  }
  if (op == Op::IsInf) {
    a.alpha = node.attribute_int("detect_negative", 1) != 0 ? 1.0f : 0.0f;
    a.beta = node.attribute_int("detect_positive", 1) != 0 ? 1.0f : 0.0f;
  }
  if (op == Op::Gelu) {
    const std::string approximate = node.attribute_string("approximate", "none");
    if (approximate == "tanh") {
      op = Op::GeluTanh;
    } else if (approximate != "none") {
      throw ModelError(fmt::format("{}: unsupported approximate='{}'", node.describe(), approximate));
    }
  }
  if (op == Op::Mod) {
    const int64_t fmod = node.attribute_int("fmod", 0);
    if (is_float(first_input) && fmod != 1) throw ModelError(node.describe() + ": Mod on floats requires fmod=1");
    if (fmod == 1) op = Op::ModTruncated;
  }
  return {op, a};
}

std::vector<Value> unary_or_binary(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  auto [op, a] = call_of(node, inputs.at(0).dtype());
  std::vector<Value> args = inputs;
  if (op == Op::Pow && args.size() == 2 && args[1].dtype() != args[0].dtype()) {
    // Pow's exponent may have another type (opset 12+); the result has the base's type.
    if (args[1].on_host()) {
      const HostTensor& e = args[1].host;
      args[1] = Value{is_float(args[0].dtype()) ? HostTensor::from_double(args[0].dtype(), e.shape(), e.to_double())
                                                : HostTensor::from_int64(args[0].dtype(), e.shape(), e.to_int64()),
                      Tensor()};
    } else {
      ElementwiseAttributes to;
      to.to = args[0].dtype();
      args[1] = run_kernel(node, context, Op::Cast, {args[1]}, to);
    }
  }
  if (op == Op::Clip && context.opset >= 11) {
    const Value none;
    const Value& low = inputs.size() > 1 ? inputs[1] : none;
    const Value& high = inputs.size() > 2 ? inputs[2] : none;
    // Bounds computed on the GPU, or an integer input (the Clip kernel is float-only, and a float
    // bound would round int32 values above 2^24): Clip = Min(Max(x, min), max) in x's type.
    if ((low.defined() && !low.on_host()) || (high.defined() && !high.on_host()) || !is_float(inputs[0].dtype())) {
      Value v = inputs[0];
      if (low.defined()) v = run_kernel(node, context, Op::Max, {v, low}, {});
      if (high.defined()) v = run_kernel(node, context, Op::Min, {v, high}, {});
      if (!low.defined() && !high.defined()) v = run_kernel(node, context, Op::Identity, {v}, {});
      return {v};
    }
  }
  if (op == Op::Clip) {
    if (context.opset < 11) {
      a.alpha = node.attribute_float("min", std::numeric_limits<float>::lowest());
      a.beta = node.attribute_float("max", std::numeric_limits<float>::max());
    } else {
      a.alpha = host_scalar(node, inputs.size() > 1 ? inputs[1] : Value(), "min").value_or(std::numeric_limits<float>::lowest());
      a.beta = host_scalar(node, inputs.size() > 2 ? inputs[2] : Value(), "max").value_or(std::numeric_limits<float>::max());
    }
    args.resize(1);
  }
  return {run_kernel(node, context, op, args, a)};
}

std::vector<Value> cast(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const int64_t onnx_to = node.attribute_int("to");
  const auto to = dtype_from_onnx(onnx_to);
  if (!to) throw ModelError(fmt::format("{}: cast to ONNX type {} is not supported", node.describe(), onnx_to));
  Value y = inputs.at(0);
  if (y.dtype() != *to) {
    ElementwiseAttributes a;
    a.to = *to;
    y = run_kernel(node, context, Op::Cast, {y}, a);
  }
  // INT8 / INT16 / UINT16 are carried in int32: wrap to the narrow type as numpy's astype does.
  // Signed: (x * 2^(32-bits)) / 2^(32-bits), the product wrapping in i32 and the quotient exact.
  const std::optional<IntegerWidth> width = carried_integer_width(onnx_to);
  if (!width || width->bits >= 32) return {y};
  auto scalar = [](int64_t value) {
    Value v;
    v.host = HostTensor::from_int64(DType::i32, {}, {value});
    return v;
  };
  if (!width->is_signed)
    return {run_kernel(node, context, Op::BitwiseAnd, {y, scalar((int64_t{1} << width->bits) - 1)}, {})};
  const Value shift = scalar(int64_t{1} << (32 - width->bits));
  return {
      run_kernel(node, context, Op::Div, {run_kernel(node, context, Op::Mul, {y, shift}, {}), shift}, {})};
}

// CastLike: Cast to the type of the second input.
std::vector<Value> cast_like(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const DType to = inputs.at(1).dtype();
  if (inputs.at(0).dtype() == to) return {inputs[0]};
  ElementwiseAttributes a;
  a.to = to;
  return {run_kernel(node, context, Op::Cast, {inputs[0]}, a)};
}

// Sum, Mean, Max, Min over any number of inputs: folded pairwise with broadcasting.
std::vector<Value> variadic(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  if (inputs.empty()) throw ModelError(node.describe() + ": needs at least one input");
  const Op kernel = node.op_type == "Sum" || node.op_type == "Mean" ? Op::Add
                    : node.op_type == "Max"                         ? Op::Max
                                                                    : Op::Min;
  Value acc = inputs[0];
  for (size_t i = 1; i < inputs.size(); ++i) acc = run_kernel(node, context, kernel, {acc, inputs[i]}, {});
  if (inputs.size() == 1) acc = run_kernel(node, context, Op::Identity, {acc}, {});
  if (node.op_type == "Mean" && inputs.size() > 1) {
    Value n;
    n.host = HostTensor::from_double(acc.dtype(), {}, {static_cast<double>(inputs.size())});
    acc = run_kernel(node, context, Op::Div, {acc, n}, {});
  }
  return {acc};
}

std::vector<Value> identity(const Node&, OpContext&, const std::vector<Value>& inputs) { return {inputs.at(0)}; }

}  // namespace

ElementwiseCall elementwise_call_of(const Node& node, DType first_input) {
  return call_of(node, first_input);
}

void register_elementwise_ops(std::vector<OpEntry>& ops) {
  for (const auto& entry : onnx_elementwise_ops()) {
    ops.push_back(
        {"", entry.first, 1, unary_or_binary, "elementwise kernel, f32/f16 (f32 math), numpy broadcasting"});
  }
  ops.push_back({"", "Cast", 1, cast, "elementwise kernel; every pair of f32, f16, i32, i64, u8, bool"});
  ops.push_back({"", "CastLike", 15, cast_like, "as Cast, to the second input's type"});
  for (const char* name : {"Sum", "Mean", "Max", "Min"}) {
    ops.push_back({"", name, 1, variadic, "pairwise elementwise kernels"});
  }
  ops.push_back({"", "Identity", 1, identity, "no copy"});
}

}  // namespace onda::ops
