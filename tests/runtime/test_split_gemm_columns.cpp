// A split of a product's columns folded into the product (graph/split_gemm_columns.h): the graph
// pass, and the parts against float64 on random inputs, with the adapter's storage binding limit and
// with a small one under which the product is recorded whole and its parts copied.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "graph/split_gemm_columns.h"
#include "harness.h"
#include "reference_graphs.h"
#include "test_graph_nodes.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

TEST(SplitGemmColumns, EqualPartsOfTheLastAxisFold) {
  Graph graph;
  graph.inputs = {"x"};
  declare_f32(graph, "x", {2, 50, 8});
  graph.set_initializer("w", HostTensor::from_values<float>({8, 96}, std::vector<float>(768, 0.5f)));
  graph.set_initializer("w90", HostTensor::from_values<float>({8, 90}, std::vector<float>(720, 0.5f)));
  graph.set_initializer("w24", HostTensor::from_values<float>({8, 24}, std::vector<float>(192, 0.5f)));
  for (const char* y : {"y0", "y1", "y2", "y3"}) declare_f32(graph, y, {2, 50, 96});
  declare_f32(graph, "y4", {2, 50, 90});
  declare_f32(graph, "y5", {2, 50, 24});
  set_ints(graph, "last", {-1});
  set_ints(graph, "axis2", {2});
  for (int64_t v : {0, 12, 24, 32, 48, 64, 96}) set_ints(graph, "at" + std::to_string(v), {v});
  set_ints(graph, "end", {std::numeric_limits<int64_t>::max()});
  set_ints(graph, "halves", {48, 48});
  // y0: three Slices, listed out of order, the last open-ended: folds into 3 parts.
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y0"}));
  graph.nodes.push_back(graph_node("Slice", {"y0", "at64", "end", "last"}, {"v0"}));
  graph.nodes.push_back(graph_node("Slice", {"y0", "at0", "at32", "axis2"}, {"q0"}));
  graph.nodes.push_back(graph_node("Slice", {"y0", "at32", "at64", "last"}, {"k0"}));
  // y1: a Split of the last axis in halves: folds into 2 parts.
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y1"}));
  graph.nodes.push_back(graph_node("Split", {"y1", "halves"}, {"a1", "b1"}));
  graph.nodes.back().set_attribute("axis", int64_t{-1});
  // y2: two Slices that leave a gap: stays.
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y2"}));
  graph.nodes.push_back(graph_node("Slice", {"y2", "at0", "at32", "last"}, {"q2"}));
  graph.nodes.push_back(graph_node("Slice", {"y2", "at64", "at96", "last"}, {"v2"}));
  // y3: also read by a Relu: stays.
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y3"}));
  graph.nodes.push_back(graph_node("Slice", {"y3", "at0", "at48", "last"}, {"a3"}));
  graph.nodes.push_back(graph_node("Slice", {"y3", "at48", "at96", "last"}, {"b3"}));
  graph.nodes.push_back(graph_node("Relu", {"y3"}, {"r3"}));
  // y4: parts of 30 columns (not a multiple of 4): stays.
  graph.nodes.push_back(graph_node("MatMul", {"x", "w90"}, {"y4"}));
  graph.nodes.push_back(graph_node("Split", {"y4"}, {"a4", "b4", "c4"}));
  graph.nodes.back().set_attribute("axis", int64_t{2});
  // y5: 24 columns, a product the GEMM runs on its skinny path: stays.
  graph.nodes.push_back(graph_node("MatMul", {"x", "w24"}, {"y5"}));
  graph.nodes.push_back(graph_node("Slice", {"y5", "at0", "at12", "last"}, {"a5"}));
  graph.nodes.push_back(graph_node("Slice", {"y5", "at12", "at24", "last"}, {"b5"}));
  graph.outputs = {"q0", "k0", "v0", "a1", "b1", "q2", "v2", "a3", "b3", "r3", "a4", "b4", "c4", "a5", "b5"};
  EXPECT_EQ(split_gemm_columns(graph), 2u);
  graph.validate();
  EXPECT_EQ(graph.nodes[0].outputs, (std::vector<std::string>{"q0", "k0", "v0"}));
  EXPECT_EQ(graph.nodes[0].attribute_int(kColumnPartsAttribute), 3);
  EXPECT_EQ(graph.nodes[1].outputs, (std::vector<std::string>{"a1", "b1"}));
  EXPECT_EQ(graph.nodes[1].attribute_int(kColumnPartsAttribute), 2);
  EXPECT_EQ(graph.nodes.size(), 2u + 3u + 4u + 2u + 3u);
}

constexpr int64_t kColumnsBatch = 4, kColumnsRows = 100, kColumnsInner = 16, kColumnsQkv = 96, kColumnsGlu = 80;

// x [4, 100, 16]: p = x @ w + c, sliced into q, k, v (32 columns each, given out of order);
// g = x @ u, split into halves a and b, then a * sigmoid(b) (a GLU).
onnx::ModelProto parts_model(const std::vector<float>& w, const std::vector<float>& c, const std::vector<float>& u) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {kColumnsBatch, kColumnsRows, kColumnsInner});
  add_float_initializer(graph, "w", {kColumnsInner, kColumnsQkv}, w);
  add_float_initializer(graph, "c", {kColumnsQkv}, c);
  add_float_initializer(graph, "u", {kColumnsInner, kColumnsGlu}, u);
  for (int64_t v : {0, 32, 64, 96}) add_int64_initializer(graph, "at" + std::to_string(v), {1}, {v});
  add_int64_initializer(graph, "last", {1}, {-1});
  add_int64_initializer(graph, "halves", {2}, {kColumnsGlu / 2, kColumnsGlu / 2});
  add_node(graph, "MatMul", {"x", "w"}, {"p"}, "in_proj");
  add_node(graph, "Add", {"c", "p"}, {"pb"}, "in_proj_bias");
  add_node(graph, "Slice", {"pb", "at64", "at96", "last"}, {"v"}, "slice_v");
  add_node(graph, "Slice", {"pb", "at0", "at32", "last"}, {"q"}, "slice_q");
  add_node(graph, "Slice", {"pb", "at32", "at64", "last"}, {"k"}, "slice_k");
  add_node(graph, "MatMul", {"x", "u"}, {"g"}, "glu_proj");
  onnx::NodeProto* split = add_node(graph, "Split", {"g", "halves"}, {"a", "b"}, "glu_split");
  add_int_attribute(split, "axis", -1);
  add_node(graph, "Sigmoid", {"b"}, {"sb"}, "glu_sigmoid");
  add_node(graph, "Mul", {"a", "sb"}, {"glu"}, "glu_mul");
  for (const char* name : {"q", "k", "v", "glu"}) add_float_output(graph, name);
  return model;
}

TEST(SplitGemmColumns, PartsMatchFloat64WithoutCopies) {
  Random random(test_seed());
  const std::vector<float> w = random.normal(kColumnsInner * kColumnsQkv), c = random.normal(kColumnsQkv), u = random.normal(kColumnsInner * kColumnsGlu);
  TemporaryFolder folder;
  const auto path = folder.path() / "parts.onnx";
  write_file(path, parts_model(w, c, u).SerializeAsString());
  for (const uint64_t binding : {uint64_t{0}, uint64_t{64} << 10}) {  // 0: the adapter's limit
    SessionOptions options;
    options.max_storage_binding_bytes = binding;
    auto session = Session::open(path, options);
    for (int run = 0; run < 2; ++run) {  // the second run replays the first's recording
      const std::vector<float> x = random.normal(kColumnsBatch * kColumnsRows * kColumnsInner);
      auto outputs = session->run({{"x", HostTensor::from_values<float>({kColumnsBatch, kColumnsRows, kColumnsInner}, x)}});
      const int64_t rows = kColumnsBatch * kColumnsRows, width = kColumnsQkv / 3, half = kColumnsGlu / 2;
      std::map<std::string, std::vector<double>> expected;
      for (const char* name : {"q", "k", "v"}) expected[name].resize(rows * width);
      expected["glu"].resize(rows * half);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < kColumnsQkv; ++j) {
          double s = c[j];
          for (int64_t k = 0; k < kColumnsInner; ++k) s += double(x[r * kColumnsInner + k]) * w[k * kColumnsQkv + j];
          expected[j < width ? "q" : j < 2 * width ? "k" : "v"][r * width + j % width] = s;
        }
        for (int64_t j = 0; j < half; ++j) {
          double a = 0, b = 0;
          for (int64_t k = 0; k < kColumnsInner; ++k) {
            a += double(x[r * kColumnsInner + k]) * u[k * kColumnsGlu + j];
            b += double(x[r * kColumnsInner + k]) * u[k * kColumnsGlu + half + j];
          }
          expected["glu"][r * half + j] = a / (1.0 + std::exp(-b));
        }
      }
      for (const auto& [name, values] : expected)
        EXPECT_LT(rel_l2(values_of(outputs.at(name)), values), 1e-6) << name << " binding " << binding << " run " << run;
      const RunStats& stats = session->last_run();
      if (binding == 0) {
        EXPECT_EQ(stats.record_ms_by_op.count("Slice"), 0u);
        EXPECT_EQ(stats.record_ms_by_op.count("Split"), 0u);
      }
    }
  }
}

// On the reference models (zero-filled weights: structure only), after the session's fusion passes.
TEST(SplitGemmColumns, ReferenceModelsFoldTheirSplits) {
  const std::optional<fs::path> models = reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  // MP-SENet: its 8 attentions' Q, K, V. HTDemucs: its 10 attentions' packed projections (Q, K, V
  // of a self-attention, K, V of a cross-attention). BS-RoFormer: the GLU halves of its 26 band MLPs
  // with more than 64 output columns (the other 36 run on the GEMM's skinny path).
  const std::pair<const char*, size_t> expected[] = {
      {"mpsenet", 8}, {"htdemucs6", 10}, {"bsroformer_viperx1297", 26}};
  TemporaryFolder folder;
  for (const auto& [name, count] : expected) {
    std::optional<Graph> loaded = fused_reference_graph(*models, name, folder);
    if (!loaded) continue;
    const Graph& graph = *loaded;
    size_t folded = 0;
    for (const Node& node : graph.nodes) folded += node.has_attribute(kColumnPartsAttribute);
    std::printf("  %-22s %zu products stored in column parts\n", name, folded);
    EXPECT_EQ(folded, count) << name;
  }
}

}  // namespace
}  // namespace onda::test
