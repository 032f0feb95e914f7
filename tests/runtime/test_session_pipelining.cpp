// Session::submit / collect: several runs in flight at once (each recorded while the GPU executes
// the previous one, in chunked submits) return the same outputs as run() would, in order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "harness.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

// y = ((x * 1.01 + 0.1) * 1.01 + 0.1) ... over `depth` Mul/Add pairs. The chain runs as a few fused
// dispatches (graph/fuse_elementwise.h, at most kMaxFusedElementwiseNodes ops each), so the test
// submits in chunks of one dispatch first (SessionOptions::first_submit_dispatches).
onnx::ModelProto chain_model(const Shape& shape, int depth) {
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, shape);
  add_float_initializer(graph, "scale", {}, {1.01f});
  add_float_initializer(graph, "shift", {}, {0.1f});
  std::string value = "x";
  for (int i = 0; i < depth; ++i) {
    const std::string scaled = "s" + std::to_string(i), shifted = i + 1 == depth ? "y" : "a" + std::to_string(i);
    add_node(graph, "Mul", {value, "scale"}, {scaled});
    add_node(graph, "Add", {scaled, "shift"}, {shifted});
    value = shifted;
  }
  add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, shape);
  return model;
}

std::vector<double> chain_reference(const std::vector<float>& x, int depth) {
  std::vector<double> y(x.begin(), x.end());
  for (int i = 0; i < depth; ++i)
    for (double& v : y) v = static_cast<float>(static_cast<float>(v * 1.01f) + 0.1f);  // as the GPU rounds
  return y;
}

TEST(SessionPipelining, SubmittedRunsMatchTheirInputsInOrder) {
  Random r(test_seed());
  const Shape shape = {3, 1000};
  const int depth = 40;
  TemporaryFolder folder;
  write_file(folder.path() / "model.onnx", chain_model(shape, depth).SerializeAsString());
  SessionOptions options;
  options.first_submit_dispatches = 1;
  auto session = Session::open(folder.path() / "model.onnx", options);
  std::vector<std::vector<float>> inputs;
  for (int k = 0; k < 4; ++k) inputs.push_back(r.normal(static_cast<size_t>(shape_numel(shape))));
  // Two in flight at a time, as onda separate feeds segments: submit k+1, then collect k.
  session->submit({{"x", HostTensor::from_values<float>(shape, inputs[0])}});
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (k + 1 < inputs.size()) session->submit({{"x", HostTensor::from_values<float>(shape, inputs[k + 1])}});
    EXPECT_EQ(session->runs_in_flight(), k + 1 < inputs.size() ? 2u : 1u);
    const auto y = session->collect().at("y").to_double();
    const double e = rel_l2(std::vector<float>(y.begin(), y.end()), chain_reference(inputs[k], depth));
    std::printf("  run %zu: rel L2 %.3g, %llu dispatches in %llu submits\n", k, e,
                static_cast<unsigned long long>(session->last_run().dispatches),
                static_cast<unsigned long long>(session->last_run().submits));
    EXPECT_LE(e, 1e-6) << "run " << k;
    EXPECT_GT(session->last_run().submits, 1u) << "the run was not submitted in chunks";
  }
  EXPECT_EQ(session->runs_in_flight(), 0u);
  EXPECT_THROW(session->collect(), std::logic_error);
  // run() after pipelined runs; and refused while a submitted run waits.
  const auto again = session->run({{"x", HostTensor::from_values<float>(shape, inputs[0])}}).at("y").to_double();
  EXPECT_LE(rel_l2(std::vector<float>(again.begin(), again.end()), chain_reference(inputs[0], depth)), 1e-6);
  session->submit({{"x", HostTensor::from_values<float>(shape, inputs[1])}});
  EXPECT_THROW(session->run({{"x", HostTensor::from_values<float>(shape, inputs[1])}}), std::logic_error);
  session->collect();
}

}  // namespace
}  // namespace onda::test
