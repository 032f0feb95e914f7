// Concat whose output, and Split whose input, is larger than one storage binding (lavapipe: 128 MiB;
// the UVR model has a 190 MB Concat): recorded in slices of the collapsed outer dims, or, with one
// outer row, as row-sliced copies of each part. Exact copies, so the Concat must equal its inputs
// bit for bit, and Split must give them back. An elementwise op on the result slices along the first
// dim above 1 (the second case's leading dim is 1, as in [1, C, F, T] activations).
#include <gtest/gtest.h>

#include <algorithm>

#include "harness.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

onnx::ModelProto concat_model(const Shape& a, const Shape& b, int64_t axis) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "a", onnx::TensorProto::FLOAT, a);
  add_tensor_value(graph->mutable_input(), "b", onnx::TensorProto::FLOAT, b);
  add_int_attribute(add_node(graph, "Concat", {"a", "b"}, {"y"}, "big_concat"), "axis", axis);
  add_int64_initializer(graph, "sizes", {2}, {a[axis], b[axis]});
  add_int_attribute(add_node(graph, "Split", {"y", "sizes"}, {"a_again", "b_again"}, "big_split"), "axis", axis);
  add_node(graph, "Relu", {"y"}, {"relu_y"}, "big_relu");  // elementwise: slices after leading 1s
  add_float_output(graph, "y");
  add_float_output(graph, "relu_y");
  add_float_output(graph, "a_again");
  add_float_output(graph, "b_again");
  return model;
}

TEST(RuntimeLargeConcat, ConcatAndSplitBeyondOneBindingRunInSlices) {
  Random random(test_seed());
  TemporaryFolder folder;
  struct Case {
    Shape a, b;
    int64_t axis;
  };
  // 34M floats (136 MB) out of each: several outer rows, then a single outer row (leading dim 1).
  const std::vector<Case> cases = {{{4, 3, 1700000}, {4, 2, 1700000}, 1}, {{1, 9000000, 2}, {1, 8000001, 2}, 1}};
  for (const Case& c : cases) {
    auto session = open_session(concat_model(c.a, c.b, c.axis), folder);
    const std::vector<float> a = random.uniform(shape_numel(c.a), -1, 1), b = random.uniform(shape_numel(c.b), -1, 1);
    auto outputs = session->run({{"a", HostTensor::from_values<float>(c.a, a)}, {"b", HostTensor::from_values<float>(c.b, b)}});
    const HostTensor& y = outputs.at("y");
    Shape expected_shape = c.a;
    expected_shape[c.axis] += c.b[c.axis];
    ASSERT_EQ(y.shape(), expected_shape);
    // Beyond lavapipe's 128 MiB binding: the one-binding path would throw DeviceLimitError.
    EXPECT_GT(y.byte_size(), size_t{128} << 20);
    // Reference: per outer index, a's slab then b's slab.
    int64_t outer = 1;
    for (int64_t d = 0; d < c.axis; ++d) outer *= c.a[d];
    const int64_t slab_a = shape_numel(c.a) / outer, slab_b = shape_numel(c.b) / outer;
    const auto values = y.values<float>();
    int64_t mismatches = 0;
    for (int64_t o = 0; o < outer; ++o) {
      const float* row = values.data() + o * (slab_a + slab_b);
      for (int64_t i = 0; i < slab_a; ++i) mismatches += row[i] != a[o * slab_a + i];
      for (int64_t i = 0; i < slab_b; ++i) mismatches += row[slab_a + i] != b[o * slab_b + i];
    }
    for (const auto& [name, original] : {std::pair<const char*, const std::vector<float>*>{"a_again", &a}, {"b_again", &b}}) {
      const auto part = outputs.at(name).values<float>();
      ASSERT_EQ(part.size(), original->size());
      for (size_t i = 0; i < part.size(); ++i) mismatches += part[i] != (*original)[i];
    }
    const auto relu = outputs.at("relu_y").values<float>();
    ASSERT_EQ(relu.size(), values.size());
    for (size_t i = 0; i < relu.size(); ++i) mismatches += relu[i] != std::max(values[i], 0.0f);
    std::printf("Concat %s + %s -> %s (%.0f MB) -> Split, Relu: %lld mismatches\n", shape_to_string(c.a).c_str(),
                shape_to_string(c.b).c_str(), shape_to_string(y.shape()).c_str(), y.byte_size() / 1e6,
                static_cast<long long>(mismatches));
    EXPECT_EQ(mismatches, 0);
  }
}

}  // namespace
}  // namespace onda::test
