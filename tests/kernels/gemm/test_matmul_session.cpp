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

// A large constant B (an initializer the walk uploads): once the node has packed it, the walk drops
// B's upload (the packed form is all the GEMM reads), so the weights held are the packed B alone, and
// later runs, given B without an upload, still compute with their own A.
TEST(MatmulSession, PackedBReplacesItsUpload) {
  Random r(test_seed());
  const int64_t m = 5, k = 512, n = 160;  // B: 81920 floats, above the host limit
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "a", onnx::TensorProto::FLOAT, {m, k});
  add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {m, n});
  const std::vector<float> b = r.normal(k * n);
  add_float_initializer(graph, "b", {k, n}, b);
  add_node(graph, "MatMul", {"a", "b"}, {"y"}, "mm");
  TemporaryFolder folder;
  auto session = open_session(model, folder);
  const uint64_t b_bytes = b.size() * sizeof(float);
  for (int run = 0; run < 4; ++run) {
    const std::vector<float> a = r.normal(m * k);
    const auto y = session->run({{"a", HostTensor::copy_of(DType::f32, {m, k}, a.data(), a.size() * 4)}})
                       .at("y")
                       .to_double();
    std::vector<double> ref(m * n, 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p < k; ++p) ref[i * n + j] += double(a[i * k + p]) * b[p * n + j];
    const double e = rel_l2(std::vector<float>(y.begin(), y.end()), ref);
    const uint64_t held = session->last_run().weight_bytes;
    std::printf("  MatMul run %d: weights held %llu bytes (B %llu), rel L2 %.3g\n", run + 1,
                static_cast<unsigned long long>(held), static_cast<unsigned long long>(b_bytes), e);
    EXPECT_LE(e, 1e-6) << "run " << run + 1;
    EXPECT_GE(held, b_bytes) << "run " << run + 1;
    EXPECT_LT(held, 2 * b_bytes) << "run " << run + 1 << ": B's upload is still held next to its packed form";
  }
}

}  // namespace
}  // namespace onda::test
