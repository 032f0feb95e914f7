// MatMul through the public Session over several runs with new inputs, against float64: the node
// keeps its packed constant B and its GEMM plan across runs, so later runs must still compute with
// their own A (and, for a B that is a graph input, their own B).
#include <gtest/gtest.h>

#include <cstdio>

#include "harness.h"
#include "onda/session.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

void run_matmul(bool b_is_input) {
  Random r(test_seed());
  const int64_t m = 9, k = 13, n = 7;
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "a", onnx::TensorProto::FLOAT, {m, k});
  add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {m, n});
  std::vector<float> b = r.normal(k * n);
  if (b_is_input) {
    add_tensor_value(graph->mutable_input(), "b", onnx::TensorProto::FLOAT, {k, n});
  } else {
    add_float_initializer(graph, "b", {k, n}, b);
  }
  add_node(graph, "MatMul", {"a", "b"}, {"y"}, "mm");
  TemporaryFolder folder;
  auto session = open_session(model, folder);
  for (int run = 0; run < 3; ++run) {
    const std::vector<float> a = r.normal(m * k);
    if (b_is_input) b = r.normal(k * n);
    std::map<std::string, HostTensor> feeds = {{"a", HostTensor::copy_of(DType::f32, {m, k}, a.data(), a.size() * 4)}};
    if (b_is_input) feeds["b"] = HostTensor::copy_of(DType::f32, {k, n}, b.data(), b.size() * 4);
    const auto y = session->run(feeds).at("y").to_double();
    std::vector<double> ref(m * n, 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p < k; ++p) ref[i * n + j] += double(a[i * k + p]) * b[p * n + j];
    const double e = rel_l2(std::vector<float>(y.begin(), y.end()), ref);
    std::printf("  MatMul (%s) run %d: rel L2 %.3g\n", b_is_input ? "B as input" : "B initializer", run + 1, e);
    EXPECT_LE(e, 1e-6) << "run " << run + 1;
  }
}

TEST(MatmulSession, ConstantBPackedAndPlanKept) { run_matmul(false); }
TEST(MatmulSession, GraphInputBPlanKept) { run_matmul(true); }

}  // namespace
}  // namespace onda::test
