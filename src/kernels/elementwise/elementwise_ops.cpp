#include "kernels/elementwise/elementwise_ops.h"

#include <fmt/format.h>

#include <stdexcept>

namespace onda::kernels {
namespace {

using K = ElementwiseKind;

const std::vector<ElementwiseOp>& catalog() {
  static const std::vector<ElementwiseOp> ops = {
      // Activations and float math (f32 inside, also for f16 tensors).
      {"Relu", 1, K::FloatUnary, "max(a, 0.0)", "", ""},
      {"LeakyRelu", 1, K::FloatUnary, "select(a * params.scalars.x, a, a >= 0.0)", "", ""},
      {"Sigmoid", 1, K::FloatUnary, "sigmoid_f32(a)", "", ""},
      {"HardSigmoid", 1, K::FloatUnary, "clamp(params.scalars.x * a + params.scalars.y, 0.0, 1.0)", "", ""},
      {"HardSwish", 1, K::FloatUnary, "a * clamp(a / 6.0 + 0.5, 0.0, 1.0)", "", ""},
      {"Tanh", 1, K::FloatUnary, "tanh_f32(a)", "", ""},
      {"Erf", 1, K::FloatUnary, "erf_f32(a)", "", ""},
      {"Gelu", 1, K::FloatUnary, "0.5 * a * erfc_f32(-a * 0.70710678118654752)", "", ""},  // 1 + erf(x) = erfc(-x)
      {"GeluTanh", 1, K::FloatUnary, "a * sigmoid_f32(1.5957691216057307 * (a + 0.044715 * a * a * a))", "", ""},  // (1 + tanh u) / 2 = sigmoid(2u)
      {"Sqrt", 1, K::FloatUnary, "sqrt(a)", "", ""},
      {"Exp", 1, K::FloatUnary, "exp(a)", "", ""},
      {"Log", 1, K::FloatUnary, "log(a)", "", ""},
      {"Reciprocal", 1, K::FloatUnary, "1.0 / a", "", ""},
      {"Sin", 1, K::FloatUnary, "sin_f32(a)", "", ""},
      {"Cos", 1, K::FloatUnary, "cos_f32(a)", "", ""},
      {"Atan", 1, K::FloatUnary, "atan_f32(a)", "", ""},
      // Inverse and hyperbolic trigonometry in forms without cancellation (math.wgsl).
      {"Tan", 1, K::FloatUnary, "sin_f32(a) / cos_f32(a)", "", ""},
      {"Asin", 1, K::FloatUnary, "asin_f32(a)", "", ""},
      {"Acos", 1, K::FloatUnary, "acos_f32(a)", "", ""},
      {"Sinh", 1, K::FloatUnary, "sinh_f32(a)", "", ""},
      {"Cosh", 1, K::FloatUnary, "cosh_f32(a)", "", ""},
      {"Asinh", 1, K::FloatUnary, "asinh_f32(a)", "", ""},
      {"Acosh", 1, K::FloatUnary, "acosh_f32(a)", "", ""},
      {"Atanh", 1, K::FloatUnary, "atanh_f32(a)", "", ""},
      {"Floor", 1, K::FloatUnary, "floor(a)", "", ""},
      {"Ceil", 1, K::FloatUnary, "ceil(a)", "", ""},
      {"Round", 1, K::FloatUnary, "round(a)", "", ""},  // WGSL rounds halves to even, as ONNX
      {"Softplus", 1, K::FloatUnary, "max(a, 0.0) + log(1.0 + exp(-abs(a)))", "", ""},
      {"Softsign", 1, K::FloatUnary, "a / (1.0 + abs(a))", "", ""},
      {"Elu", 1, K::FloatUnary, "select(params.scalars.x * expm1_f32(a), a, a > 0.0)", "", ""},
      {"Selu", 1, K::FloatUnary, "params.scalars.y * select(params.scalars.x * expm1_f32(a), a, a > 0.0)", "", ""},
      {"ThresholdedRelu", 1, K::FloatUnary, "select(0.0, a, a > params.scalars.x)", "", ""},
      {"Celu", 1, K::FloatUnary, "max(a, 0.0) + min(0.0, params.scalars.x * expm1_f32(a / params.scalars.x))", "", ""},
      {"Mish", 1, K::FloatUnary, "a * tanh_f32(max(a, 0.0) + log1p_f32(exp(-abs(a))))", "", ""},
      // scalars.x = lambd, .y = bias
      {"Shrink", 1, K::FloatUnary,
       "select(select(0.0, a - params.scalars.y, a > params.scalars.x), a + params.scalars.y, a < -params.scalars.x)",
       "", ""},
      {"Clip", 1, K::FloatUnary, "min(max(a, params.scalars.x), params.scalars.y)", "", ""},
      {"Pow", 2, K::Numeric, "pow_f32(a, b)", "pow_i32(a, b)", ""},
      {"PRelu", 2, K::FloatBinary, "select(a * b, a, a >= 0.0)", "", ""},
      // Arithmetic on floats and integers.
      {"Identity", 1, K::Numeric, "a", "a", "a"},
      {"Abs", 1, K::Numeric, "abs(a)", "abs(a)", ""},
      {"Neg", 1, K::Numeric, "-a", "-a", ""},
      {"Sign", 1, K::Numeric, "sign(a)", "sign(a)", ""},
      {"Add", 2, K::Numeric, "a + b", "a + b", "(a + b) & 255u"},
      {"Sub", 2, K::Numeric, "a - b", "a - b", "(a - b) & 255u"},
      {"Mul", 2, K::Numeric, "a * b", "a * b", "(a * b) & 255u"},
      {"Div", 2, K::Numeric, "a / b", "div_i32(a, b)", "select(a / b, 0u, b == 0u)"},
      {"Min", 2, K::Numeric, "min(a, b)", "min(a, b)", "min(a, b)"},
      {"Max", 2, K::Numeric, "max(a, b)", "max(a, b)", "max(a, b)"},
      {"Mod", 2, K::Numeric, "fmod_f32(a, b)", "mod_i32(a, b)", "select(a % b, 0u, b == 0u)"},  // fmod = 0 on integers
      {"ModTruncated", 2, K::Numeric, "fmod_f32(a, b)", "select(a % b, 0, b == 0)", "select(a % b, 0u, b == 0u)"},  // fmod = 1
      // Bitwise ops on integers (int32/int64 as i32, uint8 as u32 kept within 8 bits).
      {"BitwiseAnd", 2, K::Numeric, "", "a & b", "a & b"},
      {"BitwiseOr", 2, K::Numeric, "", "a | b", "a | b"},
      {"BitwiseXor", 2, K::Numeric, "", "a ^ b", "a ^ b"},
      {"BitwiseNot", 1, K::Numeric, "", "~a", "(~a) & 255u"},
      // BitShift is defined on unsigned types only; shifts of 8 or more give 0 (numpy's uint8).
      // On i32 storage (a uint32/uint64 carried in int64, kept within i32 like every int64):
      // shifts of 32 or more give 0, a left shift past bit 30 wraps as other int64 arithmetic does.
      {"BitShiftLeft", 2, K::Numeric, "", "select(a << u32(clamp(b, 0, 31)), 0, b >= 32)",
       "select((a << min(b, 31u)) & 255u, 0u, b >= 8u)"},
      {"BitShiftRight", 2, K::Numeric, "", "select(a >> u32(clamp(b, 0, 31)), 0, b >= 32)",
       "select(a >> min(b, 31u), 0u, b >= 8u)"},
      // The same for a uint16 carried in int32 (values 0..65535): wraps to 16 bits.
      {"BitShiftLeft16", 2, K::Numeric, "", "select((a << u32(clamp(b, 0, 31))) & 65535, 0, b >= 16)", ""},
      {"BitShiftRight16", 2, K::Numeric, "", "select(a >> u32(clamp(b, 0, 31)), 0, b >= 16)", ""},
      // Comparisons and logic (bool is u32 0/1 on the GPU).
      {"Equal", 2, K::Compare, "select(0u, 1u, a == b)", "select(0u, 1u, a == b)", "select(0u, 1u, a == b)"},
      {"Less", 2, K::Compare, "select(0u, 1u, a < b)", "select(0u, 1u, a < b)", "select(0u, 1u, a < b)"},
      {"LessOrEqual", 2, K::Compare, "select(0u, 1u, a <= b)", "select(0u, 1u, a <= b)", "select(0u, 1u, a <= b)"},
      {"Greater", 2, K::Compare, "select(0u, 1u, a > b)", "select(0u, 1u, a > b)", "select(0u, 1u, a > b)"},
      {"GreaterOrEqual", 2, K::Compare, "select(0u, 1u, a >= b)", "select(0u, 1u, a >= b)", "select(0u, 1u, a >= b)"},
      {"And", 2, K::Logical, "a & b", "", ""},
      {"Or", 2, K::Logical, "a | b", "", ""},
      {"Xor", 2, K::Logical, "a ^ b", "", ""},
      {"Not", 1, K::Logical, "1u - a", "", ""},
      {"IsNaN", 1, K::FloatTest, "select(0u, 1u, is_nan_f32(a))", "", ""},
      // scalars.x / .y: detect_negative / detect_positive (0 or 1)
      {"IsInf", 1, K::FloatTest,
       "select(0u, 1u, is_inf_f32(a) && select(params.scalars.y, params.scalars.x, a < 0.0) != 0.0)", "", ""},
      {"Where", 3, K::Where, "select(c, b, a != 0u)", "", ""},
      {"Cast", 1, K::Cast, "", "", ""},  // expression chosen from the dtypes, see elementwise_kernel.cpp
  };
  return ops;
}

bool is_integer(DType t) { return t == DType::i32 || t == DType::i64; }

}  // namespace

const ElementwiseOp* find_elementwise_op(std::string_view name) {
  for (const auto& op : catalog()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

std::vector<std::string> elementwise_op_names() {
  std::vector<std::string> names;
  for (const auto& op : catalog()) names.push_back(op.name);
  return names;
}

DType elementwise_result_dtype(const ElementwiseOp& op, std::span<const DType> inputs,
                               const ElementwiseAttributes& attributes) {
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
      const bool supported = is_float(inputs[0]) ? !op.float_expr.empty()
                             : is_integer(inputs[0]) ? !op.integer_expr.empty()
                             : inputs[0] == DType::u8 ? !op.unsigned_expr.empty()
                                                      : op.name == "Equal" || op.name == "Identity";  // bool
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
