// A Split read only by elementwise groups folded into them as strided views of its input
// (graph/fold_split_views.h): a GLU on a channel axis and a three-way split, in a session against
// float64 with the adapter's storage binding limit and with a small one (the parts then copied out),
// a part read by another op keeping its Split, and the reference models' GLUs.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/fold_split_views.h"
#include "harness.h"
#include "reference_graphs.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

const Shape kX = {6, 20, 150};  // a GLU over 20 channels (split in halves along axis 1); 72 KB

// glu = a * sigmoid(b) with [a, b] = Split(x, axis 1); three_partial = p * p + r and three = sin(q) with
// [p, q, r] = Split(x, axis -1, [60, 30, 60]) (unequal parts, two groups reading them); kept = Relu(c) + d
// and ac = |c| with [c, d] = Split(x, axis 0), its parts read by one group and by an Abs of their own:
// that Split stays.
onnx::ModelProto split_model() {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* g = model.mutable_graph();
  add_tensor_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, kX);
  add_int64_initializer(g, "halves", {2}, {10, 10});
  add_int64_initializer(g, "thirds", {3}, {60, 30, 60});
  add_int64_initializer(g, "rows", {2}, {3, 3});
  add_int_attribute(add_node(g, "Split", {"x", "halves"}, {"a", "b"}, "glu_split"), "axis", 1);
  add_node(g, "Sigmoid", {"b"}, {"sb"}, "glu_sigmoid");
  add_node(g, "Mul", {"a", "sb"}, {"glu"}, "glu_mul");
  add_int_attribute(add_node(g, "Split", {"x", "thirds"}, {"p", "q", "r"}, "three_split"), "axis", -1);
  add_node(g, "Mul", {"p", "p"}, {"pp"}, "square_p");
  add_node(g, "Add", {"pp", "r"}, {"three_partial"}, "add_r");
  add_node(g, "Sin", {"q"}, {"sq"}, "sin_q");
  add_node(g, "Mul", {"sq", "q"}, {"three"}, "mul_q");
  add_int_attribute(add_node(g, "Split", {"x", "rows"}, {"c", "d"}, "row_split"), "axis", 0);
  add_node(g, "Relu", {"c"}, {"rc"}, "relu_c");
  add_node(g, "Add", {"rc", "d"}, {"kept"}, "add_d");
  add_node(g, "Abs", {"c"}, {"ac"}, "abs_c");
  for (const char* name : {"glu", "three_partial", "three", "kept", "ac"}) add_float_output(g, name);
  return model;
}

TEST(FoldSplitViews, PartsReadInPlaceMatchFloat64) {
  Random random(test_seed());
  TemporaryFolder folder;
  const auto path = folder.path() / "splits.onnx";
  write_file(path, split_model().SerializeAsString());
  for (const uint64_t binding : {uint64_t{0}, uint64_t{64} << 10}) {  // 0: the adapter's limit
    SessionOptions options;
    options.max_storage_binding_bytes = binding;
    auto session = Session::open(path, options);
    for (int run = 0; run < 2; ++run) {  // the second run replays the first's recording
      const std::vector<float> x = random.normal(shape_numel(kX));
      auto outputs = session->run({{"x", HostTensor::from_values<float>(kX, x)}});
      const auto at = [&](int64_t n, int64_t c, int64_t t) { return double(x[(n * 20 + c) * 150 + t]); };
      std::vector<double> glu, three_partial, three, kept, ac;
      for (int64_t n = 0; n < 6; ++n)
        for (int64_t c = 0; c < 10; ++c)
          for (int64_t t = 0; t < 150; ++t) glu.push_back(at(n, c, t) / (1 + std::exp(-at(n, c + 10, t))));
      for (int64_t n = 0; n < 6; ++n)
        for (int64_t c = 0; c < 20; ++c) {
          for (int64_t t = 0; t < 60; ++t) three_partial.push_back(at(n, c, t) * at(n, c, t) + at(n, c, 90 + t));
          for (int64_t t = 60; t < 90; ++t) three.push_back(std::sin(at(n, c, t)) * at(n, c, t));
        }
      for (int64_t n = 0; n < 3; ++n)
        for (int64_t c = 0; c < 20; ++c)
          for (int64_t t = 0; t < 150; ++t) {
            kept.push_back(std::max(at(n, c, t), 0.0) + at(n + 3, c, t));
            ac.push_back(std::abs(at(n, c, t)));
          }
      EXPECT_LT(rel_l2(values_of(outputs.at("glu")), glu), 1e-6) << "binding " << binding;
      EXPECT_LT(rel_l2(values_of(outputs.at("three_partial")), three_partial), 1e-6) << "binding " << binding;
      EXPECT_LT(rel_l2(values_of(outputs.at("three")), three), 1e-6) << "binding " << binding;
      EXPECT_LT(rel_l2(values_of(outputs.at("kept")), kept), 1e-6) << "binding " << binding;
      EXPECT_LT(rel_l2(values_of(outputs.at("ac")), ac), 1e-6) << "binding " << binding;
      if (binding == 0) {
        // Only the row split stays (its first part is read by a Relu, an Abs and an Add).
        EXPECT_EQ(session->last_run().record_ms_by_op.count("Split"), 1u);
      }
    }
  }
}

// On the reference models (zero-filled weights: structure only), after the session's fusion passes:
// HTDemucs's 48 GLU Splits (its DConv layers' halves along the channel axis) are read as views.
TEST(FoldSplitViews, ReferenceModelsReadTheirGluHalvesInPlace) {
  const std::optional<fs::path> models = reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  TemporaryFolder folder;
  for (const auto& [name, expected] : {std::pair<const char*, size_t>{"htdemucs6", 96}}) {
    std::optional<Graph> loaded = fused_reference_graph(*models, name, folder);
    if (!loaded) continue;
    size_t views = 0, splits = 0;
    for (const Node& node : loaded->nodes) {
      views += node.attribute_ints(kInputViewsAttribute, {}).size() / 4;
      splits += is_onnx_op(node, "Split");
    }
    std::printf("  %-22s %zu inputs read as views, %zu Splits left\n", name, views, splits);
    EXPECT_EQ(views, expected) << name;
  }
}

}  // namespace
}  // namespace onda::test
