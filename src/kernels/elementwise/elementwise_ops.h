// The catalog of elementwise ops: for each ElementwiseOp its arity, accepted dtypes, result dtype and
// the WGSL expression of one element (inputs a, b, c in their compute types; attributes in
// params.scalars). The kernel knows ops by this enum only; which ONNX op (and attribute) becomes
// which ElementwiseOp is src/ops/'s business (elementwise_ops.cpp there).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/dtype.h"

namespace onda::kernels {

// Every op the elementwise kernel computes. Variants an ONNX op selects by attribute or type are ops
// of their own: GeluTanh (approximate="tanh"), ModTruncated (fmod=1, C's %), the bit shifts by
// direction and BitShift*16 (a uint16 carried in int32, wrapped to 16 bits).
// clang-format off
enum class ElementwiseOp : uint8_t {
  // Activations and float math (f32 inside, also for f16 tensors).
  Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Erf, Gelu, GeluTanh, Sqrt, Exp, Log, Reciprocal,
  Sin, Cos, Atan, Tan, Asin, Acos, Sinh, Cosh, Asinh, Acosh, Atanh, Floor, Ceil, Round, Softplus, Softsign,
  Elu, Selu, ThresholdedRelu, Celu, Mish, Shrink, Clip, Pow, PRelu,
  // Arithmetic on floats and integers; Mod is the floored (sign of the divisor) remainder on integers.
  Identity, Abs, Neg, Sign, Add, Sub, Mul, Div, Min, Max, Mod, ModTruncated,
  // Bitwise ops on integers.
  BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot, BitShiftLeft, BitShiftRight, BitShiftLeft16, BitShiftRight16,
  // Comparisons, logic, float tests, selection and conversion.
  Equal, Less, LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Not, IsNaN, IsInf, Where, Cast
};
// clang-format on
inline constexpr size_t kElementwiseOpCount = static_cast<size_t>(ElementwiseOp::Cast) + 1;

enum class ElementwiseKind {
  FloatUnary,   // f32/f16 in, same out
  FloatBinary,  // f32/f16 in, same out
  Numeric,      // float or integer in, same out (Add, Abs, ...)
  Compare,      // float or integer in, bool out
  Logical,      // bool in, bool out
  FloatTest,    // f32/f16 in, bool out (IsNaN, IsInf)
  Where,        // bool, T, T -> T
  Cast,         // any -> params.to
};

struct ElementwiseDefinition {
  ElementwiseOp op;
  std::string name;  // for labels and error messages
  int arity;
  ElementwiseKind kind;
  std::string float_expr;    // compute type f32
  std::string integer_expr;  // compute type i32 (int32/int64), empty if not allowed
  std::string
      unsigned_expr;  // compute type u32 holding uint8 (results wrap modulo 256), empty if not allowed
};

// Attributes an op reads: alpha (scalars.x), beta (y), gamma (z); Cast's target type.
struct ElementwiseAttributes {
  float alpha = 0, beta = 0, gamma = 0;
  DType to = DType::f32;
  bool operator==(const ElementwiseAttributes&) const = default;
};

const ElementwiseDefinition& elementwise_definition(ElementwiseOp op);
std::string_view elementwise_op_name(ElementwiseOp op);
std::vector<ElementwiseOp> all_elementwise_ops();

// Throws std::invalid_argument naming the op when the input dtypes are not accepted.
DType elementwise_result_dtype(ElementwiseOp op, std::span<const DType> inputs,
                               const ElementwiseAttributes& attributes);

}  // namespace onda::kernels
