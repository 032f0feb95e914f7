#include "kernels/elementwise/elementwise_ops.h"

#include <fmt/format.h>

#include <stdexcept>

namespace onda::kernels {
namespace {

using K = ElementwiseKind;

using Op = ElementwiseOp;

// In the order of the enum: elementwise_definition() indexes it (checked on first use).
const std::vector<ElementwiseDefinition>& catalog() {
  static const std::vector<ElementwiseDefinition> ops = {
      // Activations and float math (f32 inside, also for f16 tensors).
      {Op::Relu, "Relu", 1, K::FloatUnary, "max(a, 0.0)", "", ""},
      {Op::LeakyRelu, "LeakyRelu", 1, K::FloatUnary, "select(a * params.scalars.x, a, a >= 0.0)", "", ""},
      {Op::Sigmoid, "Sigmoid", 1, K::FloatUnary, "sigmoid_f32(a)", "", ""},
      {Op::HardSigmoid, "HardSigmoid", 1, K::FloatUnary,
       "clamp(params.scalars.x * a + params.scalars.y, 0.0, 1.0)", "", ""},
      {Op::HardSwish, "HardSwish", 1, K::FloatUnary, "a * clamp(a / 6.0 + 0.5, 0.0, 1.0)", "", ""},
      {Op::Tanh, "Tanh", 1, K::FloatUnary, "tanh_f32(a)", "", ""},
      {Op::Erf, "Erf", 1, K::FloatUnary, "erf_f32(a)", "", ""},
      // 1 + erf(x) = erfc(-x)
      {Op::Gelu, "Gelu", 1, K::FloatUnary, "0.5 * a * erfc_f32(-a * 0.70710678118654752)", "", ""},
      // (1 + tanh u) / 2 = sigmoid(2u)
      {Op::GeluTanh, "GeluTanh", 1, K::FloatUnary,
       "a * sigmoid_f32(1.5957691216057307 * (a + 0.044715 * a * a * a))", "", ""},
      {Op::Sqrt, "Sqrt", 1, K::FloatUnary, "sqrt(a)", "", ""},
      {Op::Exp, "Exp", 1, K::FloatUnary, "exp(a)", "", ""},
      {Op::Log, "Log", 1, K::FloatUnary, "log(a)", "", ""},
      {Op::Reciprocal, "Reciprocal", 1, K::FloatUnary, "1.0 / a", "", ""},
      {Op::Sin, "Sin", 1, K::FloatUnary, "sin_f32(a)", "", ""},
      {Op::Cos, "Cos", 1, K::FloatUnary, "cos_f32(a)", "", ""},
      {Op::Atan, "Atan", 1, K::FloatUnary, "atan_f32(a)", "", ""},
      // Inverse and hyperbolic trigonometry in forms without cancellation (math.wgsl).
      {Op::Tan, "Tan", 1, K::FloatUnary, "sin_f32(a) / cos_f32(a)", "", ""},
      {Op::Asin, "Asin", 1, K::FloatUnary, "asin_f32(a)", "", ""},
      {Op::Acos, "Acos", 1, K::FloatUnary, "acos_f32(a)", "", ""},
      {Op::Sinh, "Sinh", 1, K::FloatUnary, "sinh_f32(a)", "", ""},
      {Op::Cosh, "Cosh", 1, K::FloatUnary, "cosh_f32(a)", "", ""},
      {Op::Asinh, "Asinh", 1, K::FloatUnary, "asinh_f32(a)", "", ""},
      {Op::Acosh, "Acosh", 1, K::FloatUnary, "acosh_f32(a)", "", ""},
      {Op::Atanh, "Atanh", 1, K::FloatUnary, "atanh_f32(a)", "", ""},
      {Op::Floor, "Floor", 1, K::FloatUnary, "floor(a)", "", ""},
      {Op::Ceil, "Ceil", 1, K::FloatUnary, "ceil(a)", "", ""},
      {Op::Round, "Round", 1, K::FloatUnary, "round(a)", "", ""},  // WGSL rounds halves to even, as ONNX
      {Op::Softplus, "Softplus", 1, K::FloatUnary, "max(a, 0.0) + log(1.0 + exp(-abs(a)))", "", ""},
      {Op::Softsign, "Softsign", 1, K::FloatUnary, "a / (1.0 + abs(a))", "", ""},
      {Op::Elu, "Elu", 1, K::FloatUnary, "select(params.scalars.x * expm1_f32(a), a, a > 0.0)", "", ""},
      {Op::Selu, "Selu", 1, K::FloatUnary,
       "params.scalars.y * select(params.scalars.x * expm1_f32(a), a, a > 0.0)", "", ""},
      {Op::ThresholdedRelu, "ThresholdedRelu", 1, K::FloatUnary, "select(0.0, a, a > params.scalars.x)", "",
       ""},
      {Op::Celu, "Celu", 1, K::FloatUnary,
       "max(a, 0.0) + min(0.0, params.scalars.x * expm1_f32(a / params.scalars.x))", "", ""},
      {Op::Mish, "Mish", 1, K::FloatUnary, "a * tanh_f32(max(a, 0.0) + log1p_f32(exp(-abs(a))))", "", ""},
      // scalars.x = lambd, .y = bias
      {Op::Shrink, "Shrink", 1, K::FloatUnary,
       "select(select(0.0, a - params.scalars.y, a > params.scalars.x), a + params.scalars.y, a < "
       "-params.scalars.x)",
       "", ""},
      {Op::Clip, "Clip", 1, K::FloatUnary, "min(max(a, params.scalars.x), params.scalars.y)", "", ""},
      {Op::Pow, "Pow", 2, K::Numeric, "pow_f32(a, b)", "pow_i32(a, b)", ""},
      {Op::PRelu, "PRelu", 2, K::FloatBinary, "select(a * b, a, a >= 0.0)", "", ""},
      // Arithmetic on floats and integers.
      {Op::Identity, "Identity", 1, K::Numeric, "a", "a", "a"},
      {Op::Abs, "Abs", 1, K::Numeric, "abs(a)", "abs(a)", ""},
      {Op::Neg, "Neg", 1, K::Numeric, "-a", "-a", ""},
      {Op::Sign, "Sign", 1, K::Numeric, "sign(a)", "sign(a)", ""},
      {Op::Add, "Add", 2, K::Numeric, "a + b", "a + b", "(a + b) & 255u"},
      {Op::Sub, "Sub", 2, K::Numeric, "a - b", "a - b", "(a - b) & 255u"},
      {Op::Mul, "Mul", 2, K::Numeric, "a * b", "a * b", "(a * b) & 255u"},
      {Op::Div, "Div", 2, K::Numeric, "a / b", "div_i32(a, b)", "select(a / b, 0u, b == 0u)"},
      {Op::Min, "Min", 2, K::Numeric, "min(a, b)", "min(a, b)", "min(a, b)"},
      {Op::Max, "Max", 2, K::Numeric, "max(a, b)", "max(a, b)", "max(a, b)"},
      // The floored remainder (sign of the divisor) on integers; on floats the truncated one
      {Op::Mod, "Mod", 2, K::Numeric, "fmod_f32(a, b)", "mod_i32(a, b)", "select(a % b, 0u, b == 0u)"},
      // The truncated remainder (sign of the dividend, C's %)
      {Op::ModTruncated, "ModTruncated", 2, K::Numeric, "fmod_f32(a, b)", "select(a % b, 0, b == 0)",
       "select(a % b, 0u, b == 0u)"},
      // Bitwise ops on integers (int32/int64 as i32, uint8 as u32 kept within 8 bits).
      {Op::BitwiseAnd, "BitwiseAnd", 2, K::Numeric, "", "a & b", "a & b"},
      {Op::BitwiseOr, "BitwiseOr", 2, K::Numeric, "", "a | b", "a | b"},
      {Op::BitwiseXor, "BitwiseXor", 2, K::Numeric, "", "a ^ b", "a ^ b"},
      {Op::BitwiseNot, "BitwiseNot", 1, K::Numeric, "", "~a", "(~a) & 255u"},
      // BitShift is defined on unsigned types only; shifts of 8 or more give 0 (numpy's uint8).
      // On i32 storage (a uint32/uint64 carried in int64, kept within i32 like every int64):
      // shifts of 32 or more give 0, a left shift past bit 30 wraps as other int64 arithmetic does.
      {Op::BitShiftLeft, "BitShiftLeft", 2, K::Numeric, "", "select(a << u32(clamp(b, 0, 31)), 0, b >= 32)",
       "select((a << min(b, 31u)) & 255u, 0u, b >= 8u)"},
      {Op::BitShiftRight, "BitShiftRight", 2, K::Numeric, "", "select(a >> u32(clamp(b, 0, 31)), 0, b >= 32)",
       "select(a >> min(b, 31u), 0u, b >= 8u)"},
      // The same for a uint16 carried in int32 (values 0..65535): wraps to 16 bits.
      {Op::BitShiftLeft16, "BitShiftLeft16", 2, K::Numeric, "",
       "select((a << u32(clamp(b, 0, 31))) & 65535, 0, b >= 16)", ""},
      {Op::BitShiftRight16, "BitShiftRight16", 2, K::Numeric, "",
       "select(a >> u32(clamp(b, 0, 31)), 0, b >= 16)", ""},
      // Comparisons and logic (bool is u32 0/1 on the GPU).
      {Op::Equal, "Equal", 2, K::Compare, "select(0u, 1u, a == b)", "select(0u, 1u, a == b)",
       "select(0u, 1u, a == b)"},
      {Op::Less, "Less", 2, K::Compare, "select(0u, 1u, a < b)", "select(0u, 1u, a < b)",
       "select(0u, 1u, a < b)"},
      {Op::LessOrEqual, "LessOrEqual", 2, K::Compare, "select(0u, 1u, a <= b)", "select(0u, 1u, a <= b)",
       "select(0u, 1u, a <= b)"},
      {Op::Greater, "Greater", 2, K::Compare, "select(0u, 1u, a > b)", "select(0u, 1u, a > b)",
       "select(0u, 1u, a > b)"},
      {Op::GreaterOrEqual, "GreaterOrEqual", 2, K::Compare, "select(0u, 1u, a >= b)",
       "select(0u, 1u, a >= b)", "select(0u, 1u, a >= b)"},
      {Op::And, "And", 2, K::Logical, "a & b", "", ""},
      {Op::Or, "Or", 2, K::Logical, "a | b", "", ""},
      {Op::Xor, "Xor", 2, K::Logical, "a ^ b", "", ""},
      {Op::Not, "Not", 1, K::Logical, "1u - a", "", ""},
      {Op::IsNaN, "IsNaN", 1, K::FloatTest, "select(0u, 1u, is_nan_f32(a))", "", ""},
      // scalars.x / .y: detect_negative / detect_positive (0 or 1)
      {Op::IsInf, "IsInf", 1, K::FloatTest,
       "select(0u, 1u, is_inf_f32(a) && select(params.scalars.y, params.scalars.x, a < 0.0) != 0.0)", "", ""},
      {Op::Where, "Where", 3, K::Where, "select(c, b, a != 0u)", "", ""},
      // expression chosen from the dtypes, see elementwise_kernel.cpp
      {Op::Cast, "Cast", 1, K::Cast, "", "", ""},
  };
  static const bool in_enum_order = [] {
    for (size_t i = 0; i < ops.size(); ++i) {
      if (static_cast<size_t>(ops[i].op) != i)
        throw std::logic_error("elementwise catalog out of enum order");
    }
    return ops.size() == kElementwiseOpCount;
  }();
  if (!in_enum_order) throw std::logic_error("elementwise catalog does not cover the enum");
  return ops;
}

bool is_integer(DType t) {
  return t == DType::i32 || t == DType::i64;
}

}  // namespace

const ElementwiseDefinition& elementwise_definition(ElementwiseOp op) {
  return catalog().at(static_cast<size_t>(op));
}

std::string_view elementwise_op_name(ElementwiseOp op) {
  return elementwise_definition(op).name;
}

std::vector<ElementwiseOp> all_elementwise_ops() {
  std::vector<ElementwiseOp> ops;
  for (const auto& d : catalog()) ops.push_back(d.op);
  return ops;
}

DType elementwise_result_dtype(ElementwiseOp id, std::span<const DType> inputs,
                               const ElementwiseAttributes& attributes) {
  const ElementwiseDefinition& op = elementwise_definition(id);
  if (static_cast<int>(inputs.size()) != op.arity) {
    throw std::invalid_argument(fmt::format("{} takes {} inputs, got {}", op.name, op.arity, inputs.size()));
  }
  auto reject = [&](const char* why) {
    std::string types;
    for (DType t : inputs) types += std::string(types.empty() ? "" : ", ") + std::string(dtype_name(t));
    return std::invalid_argument(fmt::format("{}: {} (input types: {})", op.name, why, types));
  };
  auto all_same = [&](size_t from) {
    for (size_t i = from + 1; i < inputs.size(); ++i) {
      if (inputs[i] != inputs[from]) return false;
    }
    return true;
  };
  switch (op.kind) {
    case K::FloatUnary:
    case K::FloatBinary:
      if (!is_float(inputs[0]) || !all_same(0)) throw reject("needs float16 or float32 inputs of one type");
      return inputs[0];
    case K::FloatTest:
      if (!is_float(inputs[0])) throw reject("needs a float input");
      return DType::boolean;
    case K::Numeric:
    case K::Compare: {
      if (!all_same(0)) throw reject("inputs must have one type");
      const bool supported = is_float(inputs[0])      ? !op.float_expr.empty()
                             : is_integer(inputs[0])  ? !op.integer_expr.empty()
                             : inputs[0] == DType::u8 ? !op.unsigned_expr.empty()
                                                      : id == Op::Equal || id == Op::Identity;  // bool
      if (!supported) throw reject("type not supported");
      return op.kind == K::Compare ? DType::boolean : inputs[0];
    }
    case K::Logical:
      if (!all_same(0) || inputs[0] != DType::boolean) throw reject("needs bool inputs");
      return DType::boolean;
    case K::Where:
      if (inputs[0] != DType::boolean) throw reject("condition must be bool");
      if (inputs[1] != inputs[2]) throw reject("X and Y must have one type");
      return inputs[1];
    case K::Cast:
      return attributes.to;
  }
  throw reject("unknown op kind");
}

}  // namespace onda::kernels
