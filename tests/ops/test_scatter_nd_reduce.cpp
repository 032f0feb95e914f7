// ScatterND with reductions (add, mul, max, min) against a float64 CPU reference: random data,
// random index tuples of every length with duplicates, through one-node models in a Session run
// twice with fresh data; bad indices and a bad reduction are clean errors naming the node.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

onnx::ModelProto scatter_model(const Shape& data, const Shape& index_shape,
                               const std::vector<int64_t>& indices, const Shape& updates,
                               const std::string& reduction) {
  OneNode m("ScatterND", {{"data", data}, {"indices", index_shape}, {"updates", updates}},
            {onnx::TensorProto::FLOAT, onnx::TensorProto::INT64, onnx::TensorProto::FLOAT}, {{"y", data}},
            {onnx::TensorProto::FLOAT});
  add_int64_initializer(m.model.mutable_graph(), "indices", index_shape, indices);
  m.model.mutable_graph()->mutable_input()->DeleteSubrange(1, 1);
  set_string(m.node, "reduction", reduction);
  return m.model;
}

TEST(ScatterNDReduce, EveryReductionAndTupleLength) {
  Random rng(test_seed());
  for (int trial = 0; trial < 8; ++trial) {
    const Shape data = {rng.integer(1, 4), rng.integer(1, 4), rng.integer(1, 5)};
    const int64_t depth = rng.integer(1, 3), rows = rng.integer(1, 6);
    const std::string reduction = std::vector<std::string>{"add", "mul", "max", "min"}[trial % 4];
    std::vector<int64_t> indices;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t d = 0; d < depth; ++d)
        indices.push_back(rng.integer(-data[d], data[d] - 1));  // duplicates likely
    Shape updates = {rows};
    updates.insert(updates.end(), data.begin() + depth, data.end());
    TemporaryFolder folder;
    auto session = open_session(scatter_model(data, {rows, depth}, indices, updates, reduction), folder);
    for (int run = 0; run < 2; ++run) {
      const std::vector<float> x = rng.normal(element_count(data)), u = rng.normal(element_count(updates));
      std::vector<double> ref(x.begin(), x.end());
      const int64_t slice = element_count(updates) / rows;
      for (int64_t r = 0; r < rows; ++r) {
        int64_t base = 0;
        for (int64_t d = 0; d < depth; ++d) {
          const int64_t i = indices[r * depth + d];
          base = base * data[d] + (i < 0 ? i + data[d] : i);
        }
        for (int64_t s = 0; s < slice; ++s) {
          double& out = ref[base * slice + s];
          const double v = u[r * slice + s];
          out = reduction == "add"   ? out + v
                : reduction == "mul" ? out * v
                : reduction == "max" ? std::max(out, v)
                                     : std::min(out, v);
        }
      }
      const std::vector<double> got =
          session->run({{"data", floats(data, x)}, {"updates", floats(updates, u)}}).at("y").to_double();
      ASSERT_EQ(got.size(), ref.size());
      for (size_t i = 0; i < ref.size(); ++i)
        ASSERT_NEAR(got[i], ref[i], 1e-5 * (1 + std::abs(ref[i]))) << reduction << " element " << i;
    }
  }
}

std::string run_error(const onnx::ModelProto& model, const Shape& data, const Shape& updates) {
  TemporaryFolder folder;
  try {
    auto session = open_session(model, folder);
    session->run({{"data", floats(data, std::vector<float>(element_count(data), 1.0f))},
                  {"updates", floats(updates, std::vector<float>(element_count(updates), 1.0f))}});
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST(ScatterNDReduce, BadIndicesAndReductionNameTheNode) {
  const Shape data = {3, 4}, updates = {2, 4};
  std::string message = run_error(scatter_model(data, {2, 1}, {0, 3}, updates, "add"), data, updates);
  EXPECT_NE(message.find("node_under_test"), std::string::npos) << message;
  EXPECT_NE(message.find("out of range"), std::string::npos) << message;
  message = run_error(scatter_model(data, {2, 1}, {0, 1}, updates, "average"), data, updates);
  EXPECT_NE(message.find("node_under_test"), std::string::npos) << message;
  EXPECT_NE(message.find("average"), std::string::npos) << message;
}

}  // namespace
}  // namespace onda::test
