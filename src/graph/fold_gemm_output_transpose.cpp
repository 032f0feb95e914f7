#include "graph/fold_gemm_output_transpose.h"

#include <numeric>
#include <string>
#include <vector>

#include "graph/split_gemm_columns.h"

namespace onda {
namespace {

int64_t product(const Shape& dims, size_t begin, size_t end) {
  return std::accumulate(dims.begin() + begin, dims.begin() + end, int64_t{1}, std::multiplies<>());
}

// One side's dims (outermost first) with their strides in the transposed output, size-1 dims dropped
// and neighbours merged where the outer one steps over exactly the inner one; innermost first.
struct Digit {
  int64_t radix, stride;
};
std::vector<Digit> merged_digits(const Shape& dims, const std::vector<int64_t>& strides, size_t begin, size_t end) {
  std::vector<Digit> outer_first;
  for (size_t i = begin; i < end; ++i) {
    if (dims[i] == 1) continue;
    if (!outer_first.empty() && outer_first.back().stride == strides[i] * dims[i]) {
      outer_first.back() = {outer_first.back().radix * dims[i], strides[i]};
    } else {
      outer_first.push_back({dims[i], strides[i]});
    }
  }
  return {outer_first.rbegin(), outer_first.rend()};
}

}  // namespace

std::optional<GemmOutputLayout> gemm_output_layout(int64_t rows, int64_t n, const Shape& dims,
                                                   std::span<const int64_t> perm) {
  const size_t rank = dims.size();
  if (rank < 2 || perm.size() != rank || rows < 1 || n < 1) return std::nullopt;
  std::vector<int64_t> position(rank, -1);
  for (size_t q = 0; q < rank; ++q) {
    if (perm[q] < 0 || perm[q] >= static_cast<int64_t>(rank) || position[perm[q]] >= 0) return std::nullopt;
    position[perm[q]] = static_cast<int64_t>(q);
  }
  if (perm.back() != static_cast<int64_t>(rank) - 1) return std::nullopt;
  // The split between row dims and column dims: the trailing dims multiply to n, the others to rows.
  size_t split = rank;
  while (split > 0 && product(dims, split - 1, rank) <= n) --split;
  while (split < rank && product(dims, split, rank) != n) ++split;
  if (product(dims, split, rank) != n || product(dims, 0, split) != rows) return std::nullopt;
  // Each input dim's stride in the transposed output.
  std::vector<int64_t> out_stride(rank, 1), stride(rank, 0);
  for (size_t q = rank - 1; q-- > 0;) out_stride[q] = out_stride[q + 1] * dims[perm[q + 1]];
  for (size_t i = 0; i < rank; ++i) stride[i] = out_stride[position[i]];
  const std::vector<Digit> row = merged_digits(dims, stride, 0, split), col = merged_digits(dims, stride, split, rank);
  // A plain row-major product (the perm moved nothing but size-1 dims) is no rewrite.
  if (row.size() <= 1 && col.size() == 1 && (row.empty() || row[0].stride == n)) return std::nullopt;
  if (row.size() > 3 || col.empty() || col.size() > 3 || col[0].stride != 1 || col[0].radix % 4 != 0)
    return std::nullopt;
  GemmOutputLayout layout;
  for (size_t d = 0; d < row.size(); ++d) {
    if (d < 2) layout.row_radix[d] = row[d].radix;
    layout.row_stride[d] = row[d].stride;
  }
  layout.col_radix[0] = col[0].radix;
  for (size_t d = 1; d < col.size(); ++d) {
    if (d < 2) layout.col_radix[d] = col[d].radix;
    layout.col_stride[d - 1] = col[d].stride;
  }
  return layout;
}

size_t fold_gemm_output_transposes(Graph& graph) {
  const ValueUses uses = value_uses(graph);
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t folded = 0;
  for (size_t t = 0; t < graph.nodes.size(); ++t) {
    const Node& transpose = graph.nodes[t];
    if (!is_onnx_op(transpose, "Transpose") || transpose.inputs.size() != 1 || transpose.outputs.size() != 1)
      continue;
    const std::optional<size_t> r = producer_read_once(uses, transpose.inputs[0]);
    if (!r || removed[*r] || !is_onnx_op(graph.nodes[*r], "Reshape")) continue;
    const Node& reshape = graph.nodes[*r];
    const std::optional<size_t> g = producer_read_once(uses, reshape.inputs.at(0));
    if (!g || removed[*g]) continue;
    Node& product = graph.nodes[*g];
    if (!is_onnx_op(product, "MatMul") || !is_static_matrix_product(graph, product) || product.outputs.size() != 1 ||
        product.has_attribute(kColumnPartsAttribute) || product.has_attribute(kOutputPermAttribute) ||
        (product.inputs.size() > 3 && !product.inputs[3].empty()))
      continue;
    const std::optional<Shape> product_shape = static_shape_of(graph, product.outputs[0]);
    const std::optional<Shape> dims = static_shape_of(graph, reshape.outputs[0]);
    const std::optional<Shape> out_shape = static_shape_of(graph, transpose.outputs[0]);
    if (!product_shape || product_shape->empty() || !dims || !out_shape) continue;
    std::vector<int64_t> perm = transpose.attribute_ints("perm", {});
    if (perm.empty()) {  // ONNX's default: the axes reversed (the last axis moves: no fold)
      continue;
    }
    for (int64_t& p : perm)
      if (p < 0) p += static_cast<int64_t>(dims->size());
    const int64_t n = product_shape->back();
    const int64_t numel = shape_numel(*product_shape);
    if (n == 0 || numel == 0 || !gemm_output_layout(numel / n, n, *dims, perm)) continue;
    graph.values.erase(product.outputs[0]);
    graph.values.erase(reshape.outputs[0]);
    product.outputs[0] = transpose.outputs[0];
    product.set_attribute(kOutputDimsAttribute, std::vector<int64_t>(dims->begin(), dims->end()));
    product.set_attribute(kOutputPermAttribute, std::move(perm));
    removed[t] = removed[*r] = true;
    ++folded;
  }
  erase_marked_nodes(graph, removed);
  return folded;
}

}  // namespace onda
