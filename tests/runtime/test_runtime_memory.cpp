// The Session's memory plan: values are released after their last reader (graph/liveness.h), so a
// chain of elementwise ops holds two activations at a time and the pool hands the released buffers
// to later nodes. Checked on a chain where the peak is computable, with the weights reported apart.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu/buffer_pool.h"
#include "harness.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

// y = Tanh(Sub(Mul(s, s), w)) with s = Sigmoid(Abs(Neg(Relu(Add(x, w))))): eight nodes, each reading
// only the previous value (and the weight w), so at most two activations of n floats live at once.
onnx::ModelProto elementwise_chain(int64_t n, const std::vector<float>& weight) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {n});
  add_float_initializer(graph, "w", {n}, weight);
  add_node(graph, "Add", {"x", "w"}, {"a1"}, "add");
  add_node(graph, "Relu", {"a1"}, {"a2"}, "relu");
  add_node(graph, "Neg", {"a2"}, {"a3"}, "neg");
  add_node(graph, "Abs", {"a3"}, {"a4"}, "abs");
  add_node(graph, "Sigmoid", {"a4"}, {"a5"}, "sigmoid");
  add_node(graph, "Mul", {"a5", "a5"}, {"a6"}, "square");
  add_node(graph, "Sub", {"a6", "w"}, {"a7"}, "sub");
  add_node(graph, "Tanh", {"a7"}, {"y"}, "tanh");
  add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {n});
  return model;
}

TEST(RuntimeMemory, ChainHoldsTwoActivationsAndReusesBuffers) {
  const int64_t n = int64_t{1} << 18;  // 1 MiB per value: above the host-evaluation size
  Random random(test_seed());
  const std::vector<float> x = random.normal(n), w = random.normal(n);
  TemporaryFolder folder;
  auto session = open_session(elementwise_chain(n, w), folder);
  const HostTensor input = HostTensor::from_values<float>({n}, x);

  std::vector<double> reference(n);
  for (int64_t i = 0; i < n; ++i) {
    const double a = std::abs(-std::max(0.0, double(x[i]) + w[i]));
    const double s = 1.0 / (1.0 + std::exp(-a));
    reference[i] = std::tanh(s * s - w[i]);
  }
  const uint64_t value_bytes = gpu::BufferPool::size_class(n * sizeof(float));
  for (int run = 0; run < 2; ++run) {
    auto outputs = session->run({{"x", input}});
    const auto y = outputs.at("y").values<float>();
    const double error = rel_l2(std::vector<float>(y.begin(), y.end()), reference);
    const RunStats& stats = session->last_run();
    std::printf("run %d: rel L2 %.2e; peak activations %llu bytes (%.1f values), weights %llu bytes, %llu new buffers\n",
                run, error, static_cast<unsigned long long>(stats.peak_activation_bytes),
                double(stats.peak_activation_bytes) / double(value_bytes),
                static_cast<unsigned long long>(stats.weight_bytes),
                static_cast<unsigned long long>(stats.buffers_allocated));
    EXPECT_LT(error, 1e-5);
    // The widest point: a node's input and its output. All nine values held at once would be 9x.
    EXPECT_EQ(stats.peak_activation_bytes, 2 * value_bytes);
    EXPECT_EQ(stats.weight_bytes, value_bytes);  // w, uploaded once
    EXPECT_EQ(stats.peak_gpu_bytes, stats.peak_activation_bytes + stats.weight_bytes);
    // Released buffers go to later nodes: while recording, the first run creates one buffer (the
    // first node's output; the second node's output reuses the input's buffer, and so on
    // alternately), a second run none.
    EXPECT_EQ(stats.buffers_allocated, run == 0 ? 1u : 0u);
  }
}

// The first run uploads the loaded graph's weights while its plan is made, by name: uploads that the
// plan does not read (a weight only a dead node reads, one folded into another initializer by a
// Reshape) must be released, and the plan's own initializers uploaded after it.
TEST(RuntimeMemory, FirstRunKeepsOnlyTheWeightsItsPlanReads) {
  const int64_t n = int64_t{1} << 18;
  Random random(test_seed());
  const std::vector<float> x = random.normal(n), w = random.normal(n), dead = random.normal(n),
                           v = random.normal(n);
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {n});
  add_float_initializer(graph, "w", {n}, w);
  add_float_initializer(graph, "dead", {n}, dead);
  add_float_initializer(graph, "v", {n / 2, 2}, v);
  add_int64_initializer(graph, "flat", {1}, {n});
  add_node(graph, "Neg", {"dead"}, {"unread"}, "dead_neg");
  add_node(graph, "Reshape", {"v", "flat"}, {"r"}, "reshape");
  add_node(graph, "Add", {"x", "w"}, {"a"}, "add_w");
  add_node(graph, "Add", {"a", "r"}, {"y"}, "add_r");
  add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {n});
  TemporaryFolder folder;
  auto session = open_session(model, folder);
  std::vector<double> reference(n);
  for (int64_t i = 0; i < n; ++i) reference[i] = double(x[i]) + w[i] + v[i];
  const uint64_t value_bytes = gpu::BufferPool::size_class(n * sizeof(float));
  for (int run = 0; run < 2; ++run) {
    auto outputs = session->run({{"x", HostTensor::from_values<float>({n}, x)}});
    const auto y = outputs.at("y").values<float>();
    EXPECT_LT(rel_l2(std::vector<float>(y.begin(), y.end()), reference), 1e-6);
    EXPECT_EQ(session->last_run().weight_bytes, 2 * value_bytes) << "run " << run << ": w and r only";
  }
}

}  // namespace
}  // namespace onda::test
