// TopK against a CPU reference (std::stable_sort of each row): random rows with ties and NaN,
// every axis, largest and smallest, k from 0 to the axis length, two runs with fresh data through
// one-node models in a Session; values and indices exact. K past the axis names the node.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "harness.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

onnx::ModelProto top_k_model(const Shape& shape, int64_t axis, int64_t k, bool largest) {
  Shape out = shape;
  out[axis] = k;
  OneNode m("TopK", {{"x", shape}, {"k", {1}}}, {onnx::TensorProto::FLOAT, onnx::TensorProto::INT64},
            {{"values", out}, {"indices", out}}, {onnx::TensorProto::FLOAT, onnx::TensorProto::INT64});
  add_int64_initializer(m.model.mutable_graph(), "k", {1}, {k});
  m.model.mutable_graph()->mutable_input()->RemoveLast();
  add_int_attribute(m.node, "axis", axis);
  add_int_attribute(m.node, "largest", largest);
  return m.model;
}

TEST(TopK, EveryAxisLargestAndSmallestWithTies) {
  Random rng(test_seed());
  for (int trial = 0; trial < 8; ++trial) {
    const Shape shape = {rng.integer(1, 4), rng.integer(1, 9), rng.integer(1, 4)};
    const int64_t axis = trial % 3;
    const int64_t k = trial == 0 ? 0 : rng.integer(1, shape[axis]);
    const bool largest = trial % 2 == 0;
    TemporaryFolder folder;
    auto session = open_session(top_k_model(shape, axis, k, largest), folder);
    for (int run = 0; run < 2; ++run) {
      std::vector<float> x = rng.uniform(element_count(shape), -3, 3);
      for (auto& v : x) v = std::round(v);  // few distinct values: ties
      x[rng.integer(0, static_cast<int64_t>(x.size()) - 1)] = NAN;
      const auto out = session->run({{"x", floats(shape, x)}});
      const std::vector<double> values = out.at("values").to_double();
      const std::vector<int64_t> indices = out.at("indices").to_int64();
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
      for (int64_t d = axis + 1; d < 3; ++d) inner *= shape[d];
      const int64_t length = shape[axis];
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          auto at = [&](int64_t j) { return x[(o * length + j) * inner + i]; };
          std::vector<int64_t> order(length);
          std::iota(order.begin(), order.end(), 0);
          std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
            const float va = at(a), vb = at(b);
            if (std::isnan(va) || std::isnan(vb))
              return largest ? std::isnan(va) && !std::isnan(vb) : !std::isnan(va) && std::isnan(vb);
            return largest ? va > vb : va < vb;
          });
          for (int64_t r = 0; r < k; ++r) {
            const int64_t slot = (o * k + r) * inner + i;
            ASSERT_EQ(indices[slot], order[r]) << "rank " << r << (largest ? " largest" : " smallest");
            if (std::isnan(at(order[r])))
              ASSERT_TRUE(std::isnan(values[slot]));
            else
              ASSERT_EQ(values[slot], at(order[r]));
          }
        }
    }
  }
}

TEST(TopK, KPastTheAxisNamesTheNode) {
  const Shape shape = {2, 3};
  TemporaryFolder folder;
  try {
    auto session = open_session(top_k_model(shape, 1, 4, true), folder);
    session->run({{"x", floats(shape, std::vector<float>(6, 1.0f))}});
    ADD_FAILURE() << "K = 4 over an axis of 3 was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("node_under_test"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onda::test
