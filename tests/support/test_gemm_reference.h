// A float64 reference for the GEMM tests, written independently of kernels/gemm: numpy.matmul
// semantics (1-D promotion, right-aligned batch broadcasting), optional transposes, an addend that
// broadcasts to the output, alpha/beta and the activation.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/gemm/gemm_epilogue.h"
#include "tensor/tensor.h"

namespace onda::test {

struct HostMatrixOperand {
  std::vector<float> values;
  Shape shape;
  bool transpose = false;
};

inline double reference_activation(double x, const kernels::gemm::GemmEpilogue& e) {
  using kernels::gemm::Activation;
  switch (e.activation) {
    case Activation::none:
      return x;
    case Activation::relu:
      return x > 0 ? x : 0;
    case Activation::leaky_relu:
      return x >= 0 ? x : static_cast<double>(e.activation_alpha) * x;
    case Activation::sigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case Activation::tanh:
      return std::tanh(x);
    case Activation::gelu_erf:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  }
  return x;
}

// Index of `out_index` (a multi-index into out_shape) in a contiguous tensor of `shape` broadcast to
// out_shape (right-aligned; size-1 dimensions repeat).
inline int64_t broadcast_index(const std::vector<int64_t>& out_index, const Shape& out_shape,
                               const Shape& shape) {
  int64_t index = 0, stride = 1;
  for (size_t j = 0; j < shape.size(); ++j) {
    const int64_t d = shape[shape.size() - 1 - j];
    const int64_t i = out_index[out_shape.size() - 1 - j];
    index += (d == 1 ? 0 : i) * stride;
    stride *= d;
  }
  return index;
}

// Returns the output shape in `out_shape` and the values.
inline std::vector<double> reference_gemm(const HostMatrixOperand& a, const HostMatrixOperand& b,
                                          const HostMatrixOperand* addend,
                                          const kernels::gemm::GemmEpilogue& e, Shape& out_shape) {
  const Shape a2 = a.shape.size() == 1 ? Shape{1, a.shape[0]} : a.shape;
  const Shape b2 = b.shape.size() == 1 ? Shape{b.shape[0], 1} : b.shape;
  const int64_t ar = a2[a2.size() - 2], ac = a2.back(), br = b2[b2.size() - 2], bc = b2.back();
  const int64_t M = a.transpose ? ac : ar, K = a.transpose ? ar : ac, N = b.transpose ? br : bc;
  const Shape ab(a2.begin(), a2.end() - 2), bb(b2.begin(), b2.end() - 2);
  const size_t rank = std::max(ab.size(), bb.size());
  Shape batch(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - ab.size() ? 1 : ab[i - (rank - ab.size())];
    const int64_t db = i < rank - bb.size() ? 1 : bb[i - (rank - bb.size())];
    batch[i] = std::max(da, db);
  }
  out_shape = batch;
  if (a.shape.size() > 1) out_shape.push_back(M);
  if (b.shape.size() > 1) out_shape.push_back(N);
  const int64_t batches = element_count(batch);
  std::vector<double> out(batches * M * N);
  std::vector<int64_t> bi(rank);
  for (int64_t z = 0; z < batches; ++z) {
    int64_t rest = z;
    for (size_t i = rank; i-- > 0;) {
      bi[i] = rest % batch[i];
      rest /= batch[i];
    }
    const int64_t a_base = broadcast_index(bi, batch, ab) * ar * ac;
    const int64_t b_base = broadcast_index(bi, batch, bb) * br * bc;
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double x = a.values[a_base + (a.transpose ? k * ac + m : m * ac + k)];
          const double y = b.values[b_base + (b.transpose ? n * bc + k : k * bc + n)];
          acc += x * y;
        }
        double v = static_cast<double>(e.alpha) * acc;
        if (addend) {
          std::vector<int64_t> oi = bi;
          if (a.shape.size() > 1) oi.push_back(m);
          if (b.shape.size() > 1) oi.push_back(n);
          v += static_cast<double>(e.beta) * addend->values[broadcast_index(oi, out_shape, addend->shape)];
        }
        out[(z * M + m) * N + n] = reference_activation(v, e);
      }
    }
  }
  return out;
}

}  // namespace onda::test
