// A Conv whose one output position reads its whole input (streaming models' causal convolutions
// over [cache | frame]) runs as one GEMM: against float64 references, constant and non-constant
// weights, 1-D and 2-D, bias and a fused activation.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

// y[n, o] = sum_j x[n, j] w[o, j] (+ b[o]), j over C_in x kernel, as float64.
std::vector<double> whole_input_reference(const std::vector<float>& x, const std::vector<float>& w,
                                          const std::vector<float>* b, int64_t batch, int64_t out, int64_t k,
                                          bool relu) {
  std::vector<double> y;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < out; ++o) {
      double sum = b ? (*b)[o] : 0.0;
      for (int64_t j = 0; j < k; ++j) sum += double(x[n * k + j]) * w[o * k + j];
      y.push_back(relu ? std::max(sum, 0.0) : sum);
    }
  return y;
}

// conv1d: x [2, 5, 3] * w [7, 5, 3] + b, then Relu; conv2d: u [1, 4, 2, 3] * v [6, 4, 2, 3] with v
// a graph input (not constant: no prepacked weight).
onnx::ModelProto whole_input_convs(const std::vector<float>& w, const std::vector<float>& b) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 5, 3});
  add_tensor_value(graph->mutable_input(), "u", onnx::TensorProto::FLOAT, {1, 4, 2, 3});
  add_tensor_value(graph->mutable_input(), "v", onnx::TensorProto::FLOAT, {6, 4, 2, 3});
  add_float_initializer(graph, "w", {7, 5, 3}, w);
  add_float_initializer(graph, "b", {7}, b);
  add_node(graph, "Conv", {"x", "w", "b"}, {"conv1d"}, "causal_conv");
  add_node(graph, "Relu", {"conv1d"}, {"y"}, "relu");
  add_node(graph, "Conv", {"u", "v"}, {"z"}, "frame_conv2d");
  add_float_output(graph, "y");
  add_float_output(graph, "z");
  return model;
}

TEST(WholeInputConv, MatchesFloat64) {
  Random random(test_seed());
  const std::vector<float> w = random.normal(7 * 5 * 3), b = random.normal(7);
  TemporaryFolder folder;
  auto session = open_session(whole_input_convs(w, b), folder);
  for (int run = 0; run < 3; ++run) {
    const std::vector<float> x = random.normal(2 * 5 * 3), u = random.normal(4 * 6),
                             v = random.normal(6 * 4 * 6);
    auto outputs = session->run({{"x", HostTensor::from_values<float>({2, 5, 3}, x)},
                                 {"u", HostTensor::from_values<float>({1, 4, 2, 3}, u)},
                                 {"v", HostTensor::from_values<float>({6, 4, 2, 3}, v)}});
    ASSERT_EQ(outputs.at("y").shape(), (Shape{2, 7, 1}));
    ASSERT_EQ(outputs.at("z").shape(), (Shape{1, 6, 1, 1}));
    EXPECT_LT(rel_l2(values_of(outputs.at("y")), whole_input_reference(x, w, &b, 2, 7, 15, true)), 1e-6)
        << "run " << run;
    EXPECT_LT(rel_l2(values_of(outputs.at("z")), whole_input_reference(u, v, nullptr, 1, 6, 24, false)), 1e-6)
        << "run " << run;
  }
}

}  // namespace
}  // namespace onda::test
