// A Transpose that moves only axes of extent 1 is a view (no dispatch); any other stays a copy.
#include <gtest/gtest.h>

#include "harness.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

// y = Transpose(x [1, C, 1], perm [2, 0, 1]) as a graph output; z = Transpose(x, perm [1, 2, 0]) + 1
// (also a view); w = Transpose(u [2, 1, 3], perm [2, 1, 0]) (a real transpose).
onnx::ModelProto transposes(int64_t channels) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, channels, 1});
  add_tensor_value(graph->mutable_input(), "u", onnx::TensorProto::FLOAT, {2, 1, 3});
  add_float_initializer(graph, "one", {}, {1.0f});
  add_ints_attribute(add_node(graph, "Transpose", {"x"}, {"y"}, "to_time_major"), "perm", {2, 0, 1});
  add_ints_attribute(add_node(graph, "Transpose", {"x"}, {"xt"}, "channels_first"), "perm", {1, 2, 0});
  add_node(graph, "Add", {"xt", "one"}, {"z"}, "plus_one");
  add_ints_attribute(add_node(graph, "Transpose", {"u"}, {"w"}, "reverse"), "perm", {2, 1, 0});
  add_float_output(graph, "y");
  add_float_output(graph, "z");
  add_float_output(graph, "w");
  return model;
}

TEST(TransposeView, UnitAxisMovesAreViews) {
  Random random(test_seed());
  TemporaryFolder folder;
  auto session = open_session(transposes(300), folder);
  for (int run = 0; run < 2; ++run) {
    const std::vector<float> x = random.normal(300), u = random.normal(6);
    auto outputs = session->run({{"x", HostTensor::from_values<float>({1, 300, 1}, x)},
                                 {"u", HostTensor::from_values<float>({2, 1, 3}, u)}});
    ASSERT_EQ(outputs.at("y").shape(), (Shape{1, 1, 300}));
    ASSERT_EQ(outputs.at("z").shape(), (Shape{300, 1, 1}));
    ASSERT_EQ(outputs.at("w").shape(), (Shape{3, 1, 2}));
    std::vector<double> y_ref(x.begin(), x.end()), z_ref, w_ref;
    for (float v : x) z_ref.push_back(double(v) + 1.0);
    for (int64_t k = 0; k < 3; ++k)
      for (int64_t i = 0; i < 2; ++i) w_ref.push_back(u[i * 3 + k]);
    EXPECT_EQ(rel_l2(values_of(outputs.at("y")), y_ref), 0.0) << "run " << run;
    EXPECT_LT(rel_l2(values_of(outputs.at("z")), z_ref), 1e-7) << "run " << run;
    EXPECT_EQ(rel_l2(values_of(outputs.at("w")), w_ref), 0.0) << "run " << run;
  }
  // Dispatches: the Add and the one real Transpose; the views and the output readbacks' copies
  // are not dispatches.
  EXPECT_EQ(session->last_run().dispatches, 2u);
}

}  // namespace
}  // namespace onda::test
