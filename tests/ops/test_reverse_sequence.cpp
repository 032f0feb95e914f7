// ReverseSequence against a CPU reference: both axis orders, random lengths (0 and full included),
// trailing dims, two runs with fresh data; a length past the time axis names the node.
#include <gtest/gtest.h>

#include "harness.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

onnx::ModelProto reverse_model(const Shape& shape, int64_t time_axis, const std::vector<int64_t>& lengths) {
  OneNode m("ReverseSequence", {{"x", shape}, {"lens", {static_cast<int64_t>(lengths.size())}}},
            {onnx::TensorProto::FLOAT, onnx::TensorProto::INT64}, {{"y", shape}}, {onnx::TensorProto::FLOAT});
  add_int64_initializer(m.model.mutable_graph(), "lens", {static_cast<int64_t>(lengths.size())}, lengths);
  m.model.mutable_graph()->mutable_input()->RemoveLast();
  add_int_attribute(m.node, "time_axis", time_axis);
  add_int_attribute(m.node, "batch_axis", 1 - time_axis);
  return m.model;
}

TEST(ReverseSequence, BothAxisOrdersRandomLengths) {
  Random rng(test_seed());
  for (int64_t time_axis : {0, 1}) {
    const Shape shape = {rng.integer(1, 6), rng.integer(1, 6), rng.integer(1, 4)};
    const int64_t batch = shape[1 - time_axis], steps = shape[time_axis];
    std::vector<int64_t> lengths(batch);
    for (auto& l : lengths) l = rng.integer(0, steps);
    TemporaryFolder folder;
    auto session = open_session(reverse_model(shape, time_axis, lengths), folder);
    for (int run = 0; run < 2; ++run) {
      const std::vector<float> x = rng.normal(element_count(shape));
      const std::vector<double> y = session->run({{"x", floats(shape, x)}}).at("y").to_double();
      for (int64_t a = 0; a < shape[0]; ++a)
        for (int64_t b = 0; b < shape[1]; ++b)
          for (int64_t i = 0; i < shape[2]; ++i) {
            const int64_t t = time_axis == 0 ? a : b, length = lengths[time_axis == 0 ? b : a];
            const int64_t source_t = t < length ? length - 1 - t : t;
            const int64_t sa = time_axis == 0 ? source_t : a, sb = time_axis == 0 ? b : source_t;
            ASSERT_EQ(y[(a * shape[1] + b) * shape[2] + i], x[(sa * shape[1] + sb) * shape[2] + i])
                << "time_axis " << time_axis << " at " << a << "," << b << "," << i;
          }
    }
  }
}

TEST(ReverseSequence, LengthPastTheTimeAxisNamesTheNode) {
  const Shape shape = {3, 2, 1};
  TemporaryFolder folder;
  try {
    auto session = open_session(reverse_model(shape, 0, {1, 4}), folder);
    session->run({{"x", floats(shape, std::vector<float>(6, 1.0f))}});
    ADD_FAILURE() << "a sequence length of 4 over 3 steps was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("node_under_test"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onda::test
