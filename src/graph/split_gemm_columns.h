// Plan-time fusion of a split of a product's columns into the product: y = MatMul/Gemm(...) read only
// by Slices of its last axis that cut it into equal consecutive parts (attention's packed in_proj:
// MP-SENet's 8, HTDemucs's 10), or by one Split of its last axis into equal parts
// (a GLU after a linear layer: 26 of BS-RoFormer's band MLPs). The GEMM then stores its output as the
// parts one after the other (GemmProblem::column_parts) and its outputs are the parts, each a view:
// no copy of the product.
#pragma once
#include <cstddef>
#include <string_view>

#include "graph/graph.h"

namespace onda {

// The attribute (onda-internal) that holds the number of parts on the MatMul or Gemm node; its
// outputs are then the parts, in column order.
inline constexpr std::string_view kColumnPartsAttribute = "onda.column_parts";

// Rewrites every such product (static shapes, more than 64 rows and columns, each part a multiple of
// 4 columns wide, the product neither a graph output nor read by anything else). Returns the number
// rewritten.
size_t split_gemm_columns(Graph& graph);

}  // namespace onda
