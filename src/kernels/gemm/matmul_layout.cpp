#include "kernels/gemm/matmul_layout.h"

#include <fmt/format.h>

#include <stdexcept>

namespace onda::kernels::gemm {

Shape broadcast_shapes(const Shape& x, const Shape& y, const char* what) {
  const size_t rank = std::max(x.size(), y.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t dx = i < rank - x.size() ? 1 : x[i - (rank - x.size())];
    const int64_t dy = i < rank - y.size() ? 1 : y[i - (rank - y.size())];
    if (dx != dy && dx != 1 && dy != 1) {
      throw std::invalid_argument(
          fmt::format("{}: shapes {} and {} do not broadcast", what, shape_string(x), shape_string(y)));
    }
    out[i] = dx == 1 ? dy : dx;
  }
  return out;
}

namespace {

// numpy.matmul's promotion of 1-D operands: A [K] -> [1, K], B [K] -> [K, 1].
Shape promoted_a(const Shape& a) {
  return a.size() == 1 ? Shape{1, a[0]} : a;
}
Shape promoted_b(const Shape& b) {
  return b.size() == 1 ? Shape{b[0], 1} : b;
}

// Strides (elements) of a contiguous tensor of `shape` seen through the right-aligned dimensions of
// `target`; 0 where the tensor lacks the dimension or broadcasts it.
std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& target) {
  std::vector<int64_t> strides(target.size(), 0);
  int64_t stride = 1;
  for (size_t j = 0; j < shape.size(); ++j) {
    const size_t from_end = j + 1;
    const size_t ti = target.size() - from_end;
    const int64_t d = shape[shape.size() - from_end];
    strides[ti] = (d == 1 && target[ti] != 1) ? 0 : stride;
    stride *= d;
  }
  return strides;
}

// M, N, K and the stored row strides of op(A) op(B), the 1-D operands promoted as numpy.matmul does;
// checks the ranks and that K agrees.
void plan_matrices(MatmulLayout& L, const Shape& a, bool transpose_a, const Shape& b, bool transpose_b) {
  if (a.empty() || b.empty()) {
    throw std::invalid_argument(
        fmt::format("matmul: operands must have rank >= 1, got {} and {}", shape_string(a), shape_string(b)));
  }
  for (const Shape* s : {&a, &b}) element_count(*s);  // rejects negative dimensions
  if ((transpose_a && a.size() < 2) || (transpose_b && b.size() < 2)) {
    throw std::invalid_argument(fmt::format("matmul: a transpose needs a rank >= 2 operand, got {} and {}",
                                            shape_string(a), shape_string(b)));
  }
  const Shape a2 = promoted_a(a), b2 = promoted_b(b);
  const int64_t a_rows = a2[a2.size() - 2], a_cols = a2.back();
  const int64_t b_rows = b2[b2.size() - 2], b_cols = b2.back();
  L.m = transpose_a ? a_cols : a_rows;
  L.k = transpose_a ? a_rows : a_cols;
  const int64_t kb = transpose_b ? b_cols : b_rows;
  L.n = transpose_b ? b_rows : b_cols;
  if (L.k != kb) {
    throw std::invalid_argument(fmt::format(
        "matmul: inner dimensions differ: A {}{} has K = {}, B {}{} has K = {}", shape_string(a),
        transpose_a ? " (transposed)" : "", L.k, shape_string(b), transpose_b ? " (transposed)" : "", kb));
  }
  L.a_row_stride = a_cols;
  L.b_row_stride = b_cols;
}

// The addend's strides over the output: its row and column strides into L, its batch strides returned
// (over `batch`).
std::vector<int64_t> plan_addend(MatmulLayout& L, const Shape& addend, const Shape& a, const Shape& b,
                                 size_t batch_rank) {
  element_count(addend);
  const Shape full = broadcast_shapes(addend, L.output_shape, "matmul addend");
  if (full != L.output_shape) {
    throw std::invalid_argument(fmt::format("matmul addend {} does not broadcast to the output {}",
                                            shape_string(addend), shape_string(L.output_shape)));
  }
  const std::vector<int64_t> s = broadcast_strides(addend, L.output_shape);
  size_t next = s.size();  // walk the output dimensions from the end: [N], [M], then batch
  L.addend_col_stride = b.size() > 1 ? s[--next] : 0;
  L.addend_row_stride = a.size() > 1 ? s[--next] : 0;
  std::vector<int64_t> d_strides(batch_rank, 0);
  for (size_t i = 0; i < next; ++i) d_strides[i] = s[i];
  L.has_addend = true;
  return d_strides;
}

// Collapse: drop size-1 dimensions, merge neighbours walked contiguously by every operand.
void collapse_batch(MatmulLayout& L, const Shape& batch, const std::vector<int64_t>& a_strides,
                    const std::vector<int64_t>& b_strides, const std::vector<int64_t>& d_strides) {
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i] == 1) continue;
    if (!L.batch_shape.empty()) {
      const int64_t d = batch[i];
      auto merges = [&](const std::vector<int64_t>& merged, const std::vector<int64_t>& full) {
        return merged.back() == full[i] * d;
      };
      if (merges(L.a_batch_strides, a_strides) && merges(L.b_batch_strides, b_strides) &&
          merges(L.addend_batch_strides, d_strides)) {
        L.batch_shape.back() *= d;
        L.a_batch_strides.back() = a_strides[i];
        L.b_batch_strides.back() = b_strides[i];
        L.addend_batch_strides.back() = d_strides[i];
        continue;
      }
    }
    L.batch_shape.push_back(batch[i]);
    L.a_batch_strides.push_back(a_strides[i]);
    L.b_batch_strides.push_back(b_strides[i]);
    L.addend_batch_strides.push_back(d_strides[i]);
  }
}

// A batch dimension that only A walks (B shared, e.g. a Linear layer on [T, 1, C] activations)
// is more rows of one matrix product: fold it into M when A's matrices follow each other in
// memory (so do the output's; an addend must repeat per row the same way). One [T*M, K] x [K, N]
// product fills the GPU; T products of M rows would each be a starved GEMV.
void fold_batch_into_rows(MatmulLayout& L, bool transpose_a) {
  while (!transpose_a && !L.batch_shape.empty() && L.b_batch_strides.back() == 0 &&
         L.a_batch_strides.back() == L.m * L.k &&
         (!L.has_addend || L.addend_batch_strides.back() == L.m * L.addend_row_stride)) {
    L.m *= L.batch_shape.back();
    L.batch_shape.pop_back();
    L.a_batch_strides.pop_back();
    L.b_batch_strides.pop_back();
    L.addend_batch_strides.pop_back();
  }
}

}  // namespace

MatmulLayout plan_matmul_layout(const Shape& a, bool transpose_a, const Shape& b, bool transpose_b,
                                const std::optional<Shape>& addend) {
  MatmulLayout L;
  plan_matrices(L, a, transpose_a, b, transpose_b);
  const Shape a2 = promoted_a(a), b2 = promoted_b(b);
  const Shape a_batch(a2.begin(), a2.end() - 2), b_batch(b2.begin(), b2.end() - 2);
  const Shape batch = broadcast_shapes(a_batch, b_batch, "matmul batch dimensions");
  L.output_shape = batch;
  if (a.size() > 1) L.output_shape.push_back(L.m);
  if (b.size() > 1) L.output_shape.push_back(L.n);

  std::vector<int64_t> a_strides = broadcast_strides(a_batch, batch),
                       b_strides = broadcast_strides(b_batch, batch);
  for (auto& s : a_strides) s *= a2[a2.size() - 2] * a2.back();
  for (auto& s : b_strides) s *= b2[b2.size() - 2] * b2.back();
  const std::vector<int64_t> d_strides =
      addend ? plan_addend(L, *addend, a, b, batch.size()) : std::vector<int64_t>(batch.size(), 0);

  collapse_batch(L, batch, a_strides, b_strides, d_strides);
  if (L.batch_shape.size() > kMaxBatchDims) {
    throw std::invalid_argument(
        fmt::format("matmul: the broadcast of batch dimensions {} and {} needs {} independent dimensions; at "
                    "most {} are supported",
                    shape_string(a_batch), shape_string(b_batch), L.batch_shape.size(), kMaxBatchDims));
  }
  fold_batch_into_rows(L, transpose_a);
  L.batch_count = 1;
  for (int64_t d : L.batch_shape) L.batch_count *= d;
  return L;
}

}  // namespace onda::kernels::gemm
