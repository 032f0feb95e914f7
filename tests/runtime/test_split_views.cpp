// Split along an axis with only unit dims before it (attention's stacked Q, K and V after their
// Transpose) hands out views of its input instead of copies; a split elsewhere still copies. The
// parts must equal the input's pieces bit for bit, as graph outputs and as inputs of later ops.
#include <gtest/gtest.h>

#include "harness.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

constexpr int64_t kViewRows = 200, kViewCols = 128;  // x [1, 3, kViewRows, kViewCols]: beyond host evaluation

// parts p0 [1, 1, R, C], p1 [1, 2, R, C] = Split(x, axis 1) (views); Relu(p0), p1 * p1 on the GPU;
// h0, h1 = Split(x, axis 2, [R / 2, R / 2]) (copies: dims before axis 2 are not all 1).
onnx::ModelProto outer_split_model() {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 3, kViewRows, kViewCols});
  add_int64_initializer(graph, "sizes", {2}, {1, 2});
  add_int_attribute(add_node(graph, "Split", {"x", "sizes"}, {"p0", "p1"}, "outer_split"), "axis", 1);
  add_node(graph, "Relu", {"p0"}, {"relu_p0"}, "relu");
  add_node(graph, "Mul", {"p1", "p1"}, {"square_p1"}, "square");
  add_int64_initializer(graph, "halves", {2}, {kViewRows / 2, kViewRows / 2});
  add_int_attribute(add_node(graph, "Split", {"x", "halves"}, {"h0", "h1"}, "inner_split"), "axis", 2);
  for (const char* name : {"p0", "p1", "relu_p0", "square_p1", "h0", "h1"}) add_float_output(graph, name);
  return model;
}

TEST(SplitViews, OuterSplitIsAViewInnerSplitACopy) {
  Random random(test_seed());
  TemporaryFolder folder;
  auto session = open_session(outer_split_model(), folder);
  const Shape shape{1, 3, kViewRows, kViewCols};
  const std::vector<float> x = random.normal(shape_numel(shape));
  const int64_t plane = kViewRows * kViewCols;
  for (int run = 0; run < 2; ++run) {  // the first run plans and traces, the second follows the plan
    auto outputs = session->run({{"x", HostTensor::from_values<float>(shape, x)}});
    int64_t mismatches = 0;
    auto expect_piece = [&](const char* name, const Shape& part_shape, auto element) {
      const HostTensor& t = outputs.at(name);
      ASSERT_EQ(t.shape(), part_shape) << name;
      const auto values = t.values<float>();
      for (size_t i = 0; i < values.size(); ++i) mismatches += values[i] != element(static_cast<int64_t>(i));
    };
    expect_piece("p0", {1, 1, kViewRows, kViewCols}, [&](int64_t i) { return x[i]; });
    expect_piece("p1", {1, 2, kViewRows, kViewCols}, [&](int64_t i) { return x[plane + i]; });
    expect_piece("relu_p0", {1, 1, kViewRows, kViewCols}, [&](int64_t i) { return std::max(x[i], 0.0f); });
    expect_piece("square_p1", {1, 2, kViewRows, kViewCols}, [&](int64_t i) { return x[plane + i] * x[plane + i]; });
    const int64_t half = kViewRows / 2 * kViewCols;
    expect_piece("h0", {1, 3, kViewRows / 2, kViewCols}, [&](int64_t i) { return x[(i / half) * plane + i % half]; });
    expect_piece("h1", {1, 3, kViewRows / 2, kViewCols},
                 [&](int64_t i) { return x[(i / half) * plane + half + i % half]; });
    EXPECT_EQ(mismatches, 0) << "run " << run;
    // Dispatches: Relu, Mul and the inner split's two parts; the outer split none.
    EXPECT_EQ(session->last_run().dispatches, 4u) << "run " << run;
  }
}

}  // namespace
}  // namespace onda::test
