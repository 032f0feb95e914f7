// Session replay (src/runtime/session.cpp): from a plan's third run on, a run with the same input
// shapes and host-side input values replays the captured second run. Replayed runs must give what
// recording them would (here: the float64 reference of every run's own inputs), a changed host
// input value must be recorded again (its Reshape target changes the output), and profiled runs
// are recorded as usual.
#include <gtest/gtest.h>

#include <cstdio>

#include "harness.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

// y = Reshape(x * 1.5 + 0.25, target) * 2 (a Softmax over the last axis of that, so the reshape
// target changes values, not only the shape), with `target` an int64 graph input known on the host.
// x has more than the 64 elements below which a float input is also kept on the host.
onnx::ModelProto reshape_model() {
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 48});
  add_tensor_value(graph->mutable_input(), "target", onnx::TensorProto::INT64, {2});
  add_float_initializer(graph, "scale", {}, {1.5f});
  add_float_initializer(graph, "shift", {}, {0.25f});
  add_node(graph, "Mul", {"x", "scale"}, {"a"});
  add_node(graph, "Add", {"a", "shift"}, {"b"});
  add_node(graph, "Reshape", {"b", "target"}, {"c"});
  add_int_attribute(add_node(graph, "Softmax", {"c"}, {"y"}), "axis", -1);
  add_float_output(graph, "y");
  return model;
}

std::vector<double> reference(const std::vector<float>& x, int64_t cols) {
  std::vector<double> y(x.size());
  for (size_t row = 0; row < x.size() / cols; ++row) {
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += y[row * cols + j] = std::exp(1.5 * x[row * cols + j] + 0.25);
    for (int64_t j = 0; j < cols; ++j) y[row * cols + j] /= sum;
  }
  return y;
}

bool replayed(const Session& session) {
  return session.last_run().record_ms_by_op.count("(replay)") > 0;
}

TEST(SessionReplay, ReplayedRunsMatchTheirInputs) {
  Random r(test_seed());
  TemporaryFolder folder;
  auto session = open_session(reshape_model(), folder);
  // (cols of the reshape target, expected replay) per run: the second run of a plan is captured, the
  // third replays; a new target is recorded (and not captured); the first target replays again.
  const std::vector<std::pair<int64_t, bool>> runs = {{48, false}, {48, false}, {48, true}, {48, true},
                                                      {12, false}, {12, false}, {48, true}};
  for (size_t k = 0; k < runs.size(); ++k) {
    const auto [cols, expect_replay] = runs[k];
    const std::vector<float> x = r.normal(96);
    const auto out = session->run({{"x", HostTensor::from_values<float>({2, 48}, x)},
                                   {"target", HostTensor::from_values<int64_t>({2}, {96 / cols, cols})}});
    const HostTensor& y = out.at("y");
    EXPECT_EQ(y.shape(), (Shape{96 / cols, cols})) << "run " << k;
    const auto got = y.to_double();
    const double e = rel_l2(std::vector<float>(got.begin(), got.end()), reference(x, cols));
    std::printf("  run %zu: target [%lld, %lld], %s, rel L2 %.3g\n", k, static_cast<long long>(96 / cols),
                static_cast<long long>(cols), replayed(*session) ? "replayed" : "recorded", e);
    EXPECT_LE(e, 1e-6) << "run " << k;
    EXPECT_EQ(replayed(*session), expect_replay) << "run " << k;
  }
  // Profiled runs are recorded (their timestamps are per dispatch), and still correct.
  session->set_profiling(true);
  const std::vector<float> x = r.normal(96);
  const auto got = session->run({{"x", HostTensor::from_values<float>({2, 48}, x)},
                                 {"target", HostTensor::from_values<int64_t>({2}, {2, 48})}})
                       .at("y")
                       .to_double();
  EXPECT_FALSE(replayed(*session));
  EXPECT_FALSE(session->last_run().profile.empty());
  EXPECT_LE(rel_l2(std::vector<float>(got.begin(), got.end()), reference(x, 48)), 1e-6);
}

// New input shapes make a new plan, which drops the capture: its runs are recorded, captured and
// replayed in turn, and correct throughout.
TEST(SessionReplay, NewShapesStartOver) {
  Random r(test_seed());
  TemporaryFolder folder;
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 8})
      ->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("rows");
  add_int_attribute(add_node(graph, "Softmax", {"x"}, {"y"}), "axis", -1);
  add_float_output(graph, "y");
  auto session = open_session(model, folder);
  int replays = 0;
  for (int64_t rows : {9, 9, 9, 13, 13, 13, 9, 9, 9}) {
    const std::vector<float> x = r.normal(static_cast<size_t>(rows * 8));
    const auto got = session->run({{"x", HostTensor::from_values<float>({rows, 8}, x)}}).at("y").to_double();
    std::vector<float> scaled(x.size());
    for (size_t i = 0; i < x.size(); ++i) scaled[i] = static_cast<float>((x[i] - 0.25) / 1.5);  // reference() undoes
    EXPECT_LE(rel_l2(std::vector<float>(got.begin(), got.end()), reference(scaled, 8)), 1e-6) << rows;
    replays += replayed(*session);
  }
  EXPECT_EQ(replays, 3);  // the third run of each of the three plans
}

}  // namespace
}  // namespace onda::test
