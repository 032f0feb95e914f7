// Unique through a Session (ops/unique_op.cpp): float inputs of more than 64 elements live only on
// the GPU, so each run reads the input back mid-run. Against a reference built on std::map (the
// distinct items in sorted order, their first index, counts, each item's position), with and
// without an axis, sorted and by first occurrence, over runs with different numbers of distinct items.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "harness.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

onnx::ModelProto unique_model(const Shape& shape, std::optional<int64_t> axis, bool sorted) {
  OneNode m("Unique", {{"x", shape}}, {onnx::TensorProto::FLOAT},
            {{"y", {}}, {"indices", {}}, {"inverse", {}}, {"counts", {}}},
            {onnx::TensorProto::FLOAT, onnx::TensorProto::INT64, onnx::TensorProto::INT64,
             onnx::TensorProto::INT64});
  for (int k = 0; k < 4; ++k)
    m.model.mutable_graph()->mutable_output(k)->mutable_type()->mutable_tensor_type()->clear_shape();
  if (axis) add_int_attribute(m.node, "axis", *axis);
  add_int_attribute(m.node, "sorted", sorted ? 1 : 0);
  return m.model;
}

TEST(UniqueOp, WithAndWithoutAxisSortedOrByFirstOccurrence) {
  Random rng(test_seed());
  const Shape shape = {6, 4, 5};
  for (std::optional<int64_t> axis :
       {std::optional<int64_t>{}, std::optional<int64_t>{1}, std::optional<int64_t>{-3}})
    for (bool sorted : {true, false}) {
      TemporaryFolder folder;
      auto session = open_session(unique_model(shape, axis, sorted), folder);
      for (int levels : {3, 1, 40}) {
        // Few distinct values; along an axis, slices repeat by copying.
        std::vector<float> x(element_count(shape));
        for (auto& v : x) v = static_cast<float>(rng.integer(0, levels - 1)) - 1.5f;
        const int64_t a = axis ? (*axis < 0 ? *axis + 3 : *axis) : 0;
        const int64_t count = axis ? shape[a] : static_cast<int64_t>(x.size());
        int64_t outer = 1, inner = 1;
        if (axis) {
          for (int64_t d = 0; d < a; ++d) outer *= shape[d];
          for (int64_t d = a + 1; d < 3; ++d) inner *= shape[d];
          for (int64_t k = 1; k < count; ++k)  // item k copies an earlier one half the time
            if (rng.integer(0, 1) == 0) {
              const int64_t from = rng.integer(0, k - 1);
              for (int64_t o = 0; o < outer; ++o)
                for (int64_t i = 0; i < inner; ++i)
                  x[(o * count + k) * inner + i] = x[(o * count + from) * inner + i];
            }
        }
        auto item = [&](int64_t k) {
          std::vector<float> v;
          for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) v.push_back(x[(o * count + k) * inner + i]);
          return v;
        };
        std::map<std::vector<float>, int64_t> first;  // item -> first index
        std::vector<std::vector<float>> occurrence;   // distinct items by first occurrence
        for (int64_t k = 0; k < count; ++k)
          if (first.emplace(item(k), k).second) occurrence.push_back(item(k));
        std::vector<std::vector<float>> distinct;
        if (sorted) {
          for (const auto& [v, k] : first) distinct.push_back(v);
        } else {
          distinct = occurrence;
        }
        const auto out = session->run({{"x", floats(shape, x)}});
        const int64_t n = static_cast<int64_t>(distinct.size());
        Shape y_shape = axis ? shape : Shape{n};
        y_shape[a] = n;
        ASSERT_EQ(out.at("y").shape(), y_shape) << "levels " << levels;
        const std::vector<double> y = out.at("y").to_double();
        const std::vector<int64_t> indices = out.at("indices").to_int64(),
                                   inverse = out.at("inverse").to_int64(),
                                   counts = out.at("counts").to_int64();
        ASSERT_EQ(static_cast<int64_t>(indices.size()), n);
        ASSERT_EQ(static_cast<int64_t>(inverse.size()), count);
        for (int64_t j = 0; j < n; ++j) {
          EXPECT_EQ(indices[j], first.at(distinct[j]));
          EXPECT_EQ(counts[j],
                    std::count_if(inverse.begin(), inverse.end(), [&](int64_t v) { return v == j; }));
          for (int64_t o = 0, e = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i, ++e) ASSERT_EQ(y[(o * n + j) * inner + i], distinct[j][e]);
        }
        for (int64_t k = 0; k < count; ++k) ASSERT_EQ(distinct.at(inverse[k]), item(k)) << "item " << k;
      }
    }
}

}  // namespace
}  // namespace onda::test
