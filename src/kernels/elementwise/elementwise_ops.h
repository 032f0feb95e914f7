// The catalog of elementwise ops: ONNX name -> arity, accepted dtypes, result dtype and the WGSL
// expression of one element (inputs a, b, c in their compute types; attributes in params.scalars).
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/dtype.h"

namespace onda::kernels {

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

struct ElementwiseOp {
  std::string name;
  int arity;
  ElementwiseKind kind;
  std::string float_expr;    // compute type f32
  std::string integer_expr;   // compute type i32 (int32/int64), empty if not allowed
  std::string unsigned_expr;  // compute type u32 holding uint8 (results wrap modulo 256), empty if not allowed
};

// Attributes an op reads: alpha (scalars.x), beta (y), gamma (z); Cast's target type.
struct ElementwiseAttributes {
  float alpha = 0, beta = 0, gamma = 0;
  DType to = DType::f32;
};

// nullptr when `name` is not an elementwise op onda has.
const ElementwiseOp* find_elementwise_op(std::string_view name);
std::vector<std::string> elementwise_op_names();

// Throws std::invalid_argument naming the op when the input dtypes are not accepted.
DType elementwise_result_dtype(const ElementwiseOp& op, std::span<const DType> inputs, const ElementwiseAttributes& attributes);

}  // namespace onda::kernels
