// The determinant kernel against a float64 CPU reference (Gaussian elimination with partial
// pivoting in long double) on fresh random matrices of every size 1..16 and batch shapes, outputs
// poisoned; singular matrices give 0; Det through a one-node model; a non-square input names the node.
#include <gtest/gtest.h>

#include <cmath>

#include "harness.h"
#include "kernels/reduce/determinant.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

double determinant(std::vector<long double> a, int64_t n) {
  long double det = 1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::abs(a[r * n + c]) > std::abs(a[pivot * n + c])) pivot = r;
    if (a[pivot * n + c] == 0) return 0;
    if (pivot != c) {
      for (int64_t k = 0; k < n; ++k) std::swap(a[c * n + k], a[pivot * n + k]);
      det = -det;
    }
    det *= a[c * n + c];
    for (int64_t r = c + 1; r < n; ++r) {
      const long double f = a[r * n + c] / a[c * n + c];
      for (int64_t k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
    }
  }
  return static_cast<double>(det);
}

TEST(Determinant, EverySizeAgainstFloat64) {
  Random rng(test_seed());
  const kernels::KernelContext kc{gpu().context, gpu().pipelines};
  for (int64_t n = 1; n <= kernels::kMaxDeterminantSize; ++n) {
    const Shape batch = {rng.integer(1, 3), rng.integer(1, 3)};
    const Shape shape = {batch[0], batch[1], n, n};
    std::vector<float> x = rng.normal(element_count(shape));
    if (n >= 2) {  // the first matrix singular: its last row repeats its first
      for (int64_t k = 0; k < n; ++k) x[(n - 1) * n + k] = x[k];
    }
    Tensor y = poisoned(DType::f32, batch);
    gpu::CommandRecorder recorder(gpu().context);
    kernels::record_determinant(kc, recorder, upload_floats(x, DType::f32, shape), y);
    recorder.submit_and_wait();
    const std::vector<float> got = y.download_floats(gpu().context);
    std::vector<double> ref;
    for (int64_t m = 0; m < element_count(batch); ++m)
      ref.push_back(determinant({x.begin() + m * n * n, x.begin() + (m + 1) * n * n}, n));
    EXPECT_LT(rel_l2(got, ref), 1e-4) << n << "x" << n;
    if (n >= 2) {
      EXPECT_LT(std::abs(got[0]), 1e-3 * (1 + std::abs(ref[1]))) << "singular " << n << "x" << n;
    }
  }
}

TEST(Determinant, DetOpAndItsErrors) {
  Random rng(test_seed());
  const Shape shape = {3, 4, 4};
  OneNode m("Det", {{"x", shape}}, {onnx::TensorProto::FLOAT}, {{"y", {3}}}, {onnx::TensorProto::FLOAT});
  TemporaryFolder folder;
  auto session = open_session(m.model, folder);
  for (int run = 0; run < 2; ++run) {
    const std::vector<float> x = rng.normal(element_count(shape));
    const std::vector<double> y = session->run({{"x", floats(shape, x)}}).at("y").to_double();
    for (int64_t b = 0; b < 3; ++b) {
      const double ref = determinant({x.begin() + b * 16, x.begin() + (b + 1) * 16}, 4);
      EXPECT_NEAR(y[b], ref, 1e-4 * (1 + std::abs(ref)));
    }
  }
  OneNode bad("Det", {{"x", {2, 3}}}, {onnx::TensorProto::FLOAT}, {{"y", {}}}, {onnx::TensorProto::FLOAT});
  bad.model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  try {
    TemporaryFolder bad_folder;
    auto s = open_session(bad.model, bad_folder);
    s->run({{"x", floats({2, 3}, std::vector<float>(6, 1.0f))}});
    ADD_FAILURE() << "Det of a 2x3 matrix was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("node_under_test"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onda::test
