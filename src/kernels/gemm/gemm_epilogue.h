// What a GEMM does to its accumulator before the store: C = act(alpha * op(A) op(B) + beta * D),
// where D (the "addend") is any tensor that broadcasts to the output: ONNX Gemm's C (scalar, [N],
// [1, N], [M, 1], [M, N]), a Conv/MatMul bias ([N] per column, [M, 1] per row), or a batched
// residual. The activation is compiled into the shader (a template value), never branched on, and
// so is `program`: elementwise steps applied after the activation (a fused exported GELU, say:
// graph/fuse_epilogue.h).
#pragma once
#include <string_view>

#include "kernels/elementwise/fused_elementwise.h"

namespace onda::kernels::gemm {

enum class Activation { none, relu, leaky_relu, sigmoid, tanh, gelu_erf };

std::string_view activation_name(Activation activation);

struct GemmEpilogue {
  float alpha = 1.0f;  // scales op(A) op(B)
  float beta = 1.0f;   // scales the addend (ignored without one)
  Activation activation = Activation::none;
  float activation_alpha = 0.01f;  // leaky_relu's negative slope
  FusedEpilogue program;           // after the activation; no steps: none

  bool operator==(const GemmEpilogue&) const = default;
};

}  // namespace onda::kernels::gemm
