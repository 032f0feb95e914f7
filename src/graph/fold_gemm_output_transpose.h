// Plan-time fusion of a layout change after a product into the product's store: y = MatMul(...)
// read only by a Reshape that splits its rows and columns into dims, read only by a Transpose that
// keeps the last axis last. A packed Q/K/V projection's head split is the case exporters emit
// (einops' 'b n (qkv h d) -> qkv b h n d': BS-RoFormer's 24 attentions, [62, 801, 1536] ->
// [3, 62, 8, 801, 64]). The MatMul then writes the Transpose's output directly
// (GemmProblem::output_permutation): no copy of the product.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "graph/graph.h"

namespace onda {

// The attributes (onda-internal) on the MatMul: the Reshape's dims and the Transpose's perm. Its
// output is then the Transpose's.
inline constexpr std::string_view kOutputDimsAttribute = "onda.output_dims";
inline constexpr std::string_view kOutputPermAttribute = "onda.output_perm";

// Where element (r, n) of a [rows, n] product goes when it is viewed as `dims` and transposed by
// `perm`: r and n as digits of merged dims, innermost first (the GEMM's OutputPermutation). Row
// digit 2 and column digit 2 take what remains of r and n.
struct GemmOutputLayout {
  std::array<int64_t, 2> row_radix{1, 1};
  std::array<int64_t, 3> row_stride{0, 0, 0};
  std::array<int64_t, 2> col_radix{1, 1};
  std::array<int64_t, 2> col_stride{0, 0};  // of column digits 1 and 2; digit 0 has stride 1
};

// The layout, when `dims` splits the rows and the columns apart (its trailing dims multiply to n),
// `perm` keeps the last axis last and moves something, the innermost column dims (merged) are a
// multiple of 4 wide, and each side merges into at most three digits; nullopt otherwise.
std::optional<GemmOutputLayout> gemm_output_layout(int64_t rows, int64_t n, const Shape& dims,
                                                   std::span<const int64_t> perm);

// Rewrites every such product (static shapes, no residual or column parts on it, neither
// intermediate a graph output or read by anything else). Returns the number rewritten.
size_t fold_gemm_output_transposes(Graph& graph);

}  // namespace onda
