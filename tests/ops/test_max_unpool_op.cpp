// MaxUnpool through a Session (ops/max_unpool_op.cpp): random values at random distinct indices of
// the inferred output (as MaxPool's Indices give them), without and with a larger output_shape (the
// coordinates kept, as ONNX Runtime places them), against a CPU reference; an index past the output
// names the node.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "harness.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

onnx::ModelProto unpool_model(const Shape& xs, const Shape& ys, std::optional<Shape> output_shape) {
  OneNode m("MaxUnpool", {{"x", xs}, {"i", xs}}, {onnx::TensorProto::FLOAT, onnx::TensorProto::INT64},
            {{"y", ys}}, {onnx::TensorProto::FLOAT});
  add_ints_attribute(m.node, "kernel_shape", {2, 2});
  add_ints_attribute(m.node, "strides", {2, 2});
  if (output_shape) {
    add_int64_initializer(m.model.mutable_graph(), "shape", {4}, *output_shape);
    m.node->add_input("shape");
  }
  return m.model;
}

TEST(MaxUnpoolOp, InferredAndGivenOutputShapes) {
  Random rng(test_seed());
  const Shape xs = {2, 3, 4, 5}, inferred = {2, 3, 8, 10};
  for (std::optional<Shape> given : {std::optional<Shape>{}, std::optional<Shape>{Shape{2, 3, 9, 11}}}) {
    const Shape ys = given ? *given : inferred;
    TemporaryFolder folder;
    auto session = open_session(unpool_model(xs, ys, given), folder);
    for (int run = 0; run < 2; ++run) {
      std::vector<int64_t> all(shape_numel(inferred));
      std::iota(all.begin(), all.end(), 0);
      std::shuffle(all.begin(), all.end(), rng.engine());
      const std::vector<int64_t> indices(all.begin(), all.begin() + shape_numel(xs));
      const std::vector<float> x = rng.normal(shape_numel(xs));
      std::vector<double> want(shape_numel(ys), 0.0);
      for (size_t k = 0; k < indices.size(); ++k) {
        int64_t rest = indices[k], at = 0, stride = 1;
        for (size_t d = 4; d-- > 0;) {
          at += rest % inferred[d] * stride;
          rest /= inferred[d];
          stride *= ys[d];
        }
        want[at] = x[k];
      }
      const HostTensor y =
          session->run({{"x", floats(xs, x)}, {"i", HostTensor::from_values<int64_t>(xs, indices)}}).at("y");
      ASSERT_EQ(y.shape(), ys);
      EXPECT_EQ(y.to_double(), want) << (given ? "given shape" : "inferred shape");
    }
  }
}

TEST(MaxUnpoolOp, IndexPastTheOutputNamesTheNode) {
  const Shape xs = {1, 1, 1, 1};
  TemporaryFolder folder;
  try {
    open_session(unpool_model(xs, {1, 1, 2, 2}, std::nullopt), folder)
        ->run({{"x", floats(xs, {1.0f})}, {"i", HostTensor::from_values<int64_t>(xs, {4})}});
    ADD_FAILURE() << "index 4 into 4 elements was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("node_under_test"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onda::test
