// BatchNormalization (inference) through the public Session, against float64: with initializer
// parameters the folded scale and shift are uploaded once and kept by the node, so every run after
// the first records no upload; a second run on new inputs must still match (the kept parameters
// are the node's, not the first run's output). With the mean as a graph input the parameters are
// combined on the GPU every run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "harness.h"
#include "onda/session.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

void run_batch_norm(bool mean_is_input) {
  Random r(test_seed());
  const int64_t n = 2, c = 5, h = 7, w = 3;
  const std::vector<float> scale = r.uniform(c, 0.5, 1.5), bias = r.normal(c), mean = r.normal(c),
                           var = r.uniform(c, 0.2, 2.0);
  const float epsilon = 1e-3f;
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {n, c, h, w});
  add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {n, c, h, w});
  add_float_initializer(graph, "scale", {c}, scale);
  add_float_initializer(graph, "bias", {c}, bias);
  add_float_initializer(graph, "var", {c}, var);
  if (mean_is_input) {
    add_tensor_value(graph->mutable_input(), "mean", onnx::TensorProto::FLOAT, {c});
  } else {
    add_float_initializer(graph, "mean", {c}, mean);
  }
  auto* node = add_node(graph, "BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn");
  auto* eps = node->add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(epsilon);
  TemporaryFolder folder;
  auto session = open_session(model, folder);
  for (int run = 0; run < 3; ++run) {
    const std::vector<float> x = r.normal(n * c * h * w);  // new values every run
    std::map<std::string, HostTensor> feeds = {{"x", HostTensor::copy_of(DType::f32, {n, c, h, w}, x.data(), x.size() * 4)}};
    if (mean_is_input) feeds["mean"] = HostTensor::copy_of(DType::f32, {c}, mean.data(), mean.size() * 4);
    const auto y = session->run(feeds).at("y").to_double();
    std::vector<double> ref(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t ch = (i / (h * w)) % c;
      ref[i] = (double(x[i]) - mean[ch]) / std::sqrt(double(var[ch]) + epsilon) * scale[ch] + bias[ch];
    }
    const double e = rel_l2(std::vector<float>(y.begin(), y.end()), ref);
    std::printf("  BatchNormalization (%s) run %d: rel L2 %.3g\n", mean_is_input ? "mean as input" : "initializers",
                run + 1, e);
    EXPECT_LE(e, 1e-6) << "run " << run + 1;
  }
}

TEST(BatchNormSession, InitializerParametersFoldedOnce) { run_batch_norm(false); }
TEST(BatchNormSession, ParametersFromTheGraph) { run_batch_norm(true); }

}  // namespace
}  // namespace onda::test
