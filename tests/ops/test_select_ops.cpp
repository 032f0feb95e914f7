// NonZero and Compress through a Session: their output shapes depend on the input's values, so
// each run counts on the GPU and reads the count back mid-run (ops/select_ops.cpp). Runs of one
// Session with inputs of different counts each give the CPU reference's answer; a malformed
// Compress names the node.
#include <gtest/gtest.h>

#include "harness.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

void leave_output_shape_to_the_run(onnx::ModelProto& model) {
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
}

TEST(SelectOps, NonZeroRunsWithDifferentCounts) {
  Random rng(test_seed());
  const Shape shape = {3, 5, 7};
  OneNode m("NonZero", {{"x", shape}}, {onnx::TensorProto::FLOAT}, {{"y", {}}}, {onnx::TensorProto::INT64});
  leave_output_shape_to_the_run(m.model);
  TemporaryFolder folder;
  auto session = open_session(m.model, folder);
  for (double density : {0.5, 0.1, 0.0, 1.0, 0.3}) {
    std::vector<float> x = rng.normal(element_count(shape));
    const std::vector<float> draw = rng.uniform(x.size(), 0, 1);
    for (size_t i = 0; i < x.size(); ++i)
      if (draw[i] >= density) x[i] = i % 2 ? -0.0f : 0.0f;
    std::vector<int64_t> positions;
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i] != 0.0f) positions.push_back(static_cast<int64_t>(i));
    const HostTensor y = session->run({{"x", floats(shape, x)}}).at("y");
    const int64_t count = static_cast<int64_t>(positions.size());
    ASSERT_EQ(y.shape(), (Shape{3, count})) << "density " << density;
    const std::vector<int64_t> got = y.to_int64();
    for (int64_t k = 0; k < count; ++k) {
      const int64_t p = positions[k];
      ASSERT_EQ(got[k], p / 35);
      ASSERT_EQ(got[count + k], p / 7 % 5);
      ASSERT_EQ(got[2 * count + k], p % 7);
    }
  }
}

onnx::ModelProto compress_model(const Shape& shape, int64_t condition_length, std::optional<int64_t> axis) {
  OneNode m("Compress", {{"x", shape}, {"condition", {condition_length}}},
            {onnx::TensorProto::FLOAT, onnx::TensorProto::BOOL}, {{"y", {}}}, {onnx::TensorProto::FLOAT});
  leave_output_shape_to_the_run(m.model);
  if (axis) add_int_attribute(m.node, "axis", *axis);
  return m.model;
}

// With an axis: the kept slices along it; without: the kept elements of the flattened input. The
// condition may be shorter than the axis (the rest is dropped). Conditions over 64 entries live
// only on the GPU (axis 0, flattened: the read-back path), shorter ones also on the host.
TEST(SelectOps, CompressAlongEachAxisAndFlattened) {
  Random rng(test_seed());
  const Shape shape = {70, 3, 5};
  for (std::optional<int64_t> axis : {std::optional<int64_t>{0}, std::optional<int64_t>{-1},
                                      std::optional<int64_t>{1}, std::optional<int64_t>{}}) {
    const int64_t axis_dim = axis ? shape[*axis < 0 ? *axis + 3 : *axis] : 1050;
    const int64_t length = axis_dim - (rng.integer(0, 1) ? 1 : 0);
    TemporaryFolder folder;
    auto session = open_session(compress_model(shape, length, axis), folder);
    for (int run = 0; run < 3; ++run) {
      const std::vector<float> x = rng.normal(element_count(shape));
      std::vector<int64_t> keep(length);
      for (auto& k : keep) k = rng.integer(0, 2) == 0 ? 1 : 0;
      if (run == 2) std::fill(keep.begin(), keep.end(), 0);
      const HostTensor y = session
                               ->run({{"x", floats(shape, x)},
                                      {"condition", HostTensor::from_int64(DType::boolean, {length}, keep)}})
                               .at("y");
      std::vector<double> want;
      Shape want_shape;
      if (!axis) {
        for (int64_t i = 0; i < length; ++i)
          if (keep[i]) want.push_back(x[i]);
        want_shape = {static_cast<int64_t>(want.size())};
      } else {
        const int64_t a = *axis < 0 ? *axis + 3 : *axis;
        int64_t outer = 1, inner = 1, kept = 0;
        for (int64_t d = 0; d < a; ++d) outer *= shape[d];
        for (int64_t d = a + 1; d < 3; ++d) inner *= shape[d];
        for (int64_t k : keep) kept += k;
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t j = 0; j < length; ++j)
            if (keep[j])
              for (int64_t i = 0; i < inner; ++i) want.push_back(x[(o * shape[a] + j) * inner + i]);
        want_shape = shape;
        want_shape[a] = kept;
      }
      ASSERT_EQ(y.shape(), want_shape)
          << "axis " << (axis ? std::to_string(*axis) : "none") << " run " << run;
      ASSERT_EQ(y.to_double(), want) << "axis " << (axis ? std::to_string(*axis) : "none") << " run " << run;
    }
  }
}

TEST(SelectOps, CompressConditionLongerThanTheAxisNamesTheNode) {
  TemporaryFolder folder;
  try {
    auto session = open_session(compress_model({2, 3}, 4, 1), folder);
    session->run({{"x", floats({2, 3}, std::vector<float>(6, 1.0f))},
                  {"condition", HostTensor::from_int64(DType::boolean, {4}, {1, 0, 1, 1})}});
    ADD_FAILURE() << "a condition of 4 entries over an axis of 3 was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("node_under_test"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("condition has 4 entries"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onda::test
