// Residual connections fused into the GEMM that feeds them (graph/fuse_residual_add.h): the graph
// pass, and the fused nodes against float64 references on random inputs, with the adapter's storage
// binding limit and with a small one that makes the batched MatMuls run in slices.
#include <gtest/gtest.h>

#include <algorithm>

#include "graph/fuse_residual_add.h"
#include "harness.h"
#include "reference_graphs.h"
#include "test_graph_nodes.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

TEST(FuseResidualAdd, SumsOfAProductAndAnIndependentTensorFuse) {
  Graph graph;
  graph.inputs = {"x", "r", "r_t"};
  declare_f32(graph, "x", {2, 5, 8});
  declare_f32(graph, "r_t", {2, 6, 5});
  declare_f32(graph, "x2", {10, 8});
  declare_f32(graph, "g", {10, 6});
  for (const char* name : {"r", "y0", "z0", "y1", "z1", "y2", "z2", "y3", "z3", "y4", "z4", "y5", "z5", "rr", "gr", "z6"})
    declare_f32(graph, name, {2, 5, 6});
  declare_f32(graph, "b6", {2, 1, 6});
  graph.set_initializer("w", HostTensor::from_values<float>({8, 6}, std::vector<float>(48, 0.5f)));
  graph.set_initializer("shape2d", HostTensor::from_values<int64_t>({2}, {10, 8}));
  graph.set_initializer("shape3d", HostTensor::from_values<int64_t>({3}, {2, 5, 6}));
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y0"}));
  graph.nodes.push_back(graph_node("Add", {"r", "y0"}, {"z0"}));  // fuses, residual first
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y1"}));
  graph.nodes.push_back(graph_node("Add", {"y1", "y1"}, {"z1"}));  // the product twice: stays
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y2"}));
  graph.nodes.push_back(graph_node("Relu", {"y2"}, {"rr"}));
  graph.nodes.push_back(graph_node("Add", {"y2", "rr"}, {"z2"}));  // the residual depends on it: stays
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y3"}));
  graph.nodes.push_back(graph_node("Add", {"y3", "b6"}, {"z3"}));  // broadcast residual: stays
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y4"}));
  graph.nodes.push_back(graph_node("Transpose", {"r_t"}, {"y5"}));  // produced after the product
  graph.nodes.back().set_attribute("perm", std::vector<int64_t>{0, 2, 1});
  graph.nodes.push_back(graph_node("Add", {"y4", "y5"}, {"z4"}));  // fuses, the product moves after y5
  graph.nodes.push_back(graph_node("Reshape", {"x", "shape2d"}, {"x2"}));
  graph.nodes.push_back(graph_node("Gemm", {"x2", "w"}, {"g"}));
  graph.nodes.push_back(graph_node("Reshape", {"g", "shape3d"}, {"gr"}));
  graph.nodes.push_back(graph_node("Add", {"gr", "r"}, {"z6"}));  // fuses through the Reshape
  graph.inputs.push_back("b6");
  graph.outputs = {"z0", "z1", "z2", "z3", "z4", "z6"};
  EXPECT_EQ(fuse_residual_adds(graph), 3u);
  graph.validate();
  size_t adds = 0;
  std::map<std::string, const Node*> producer;
  for (const Node& node : graph.nodes) {
    adds += node.op_type == "Add";
    for (const std::string& out : node.outputs) producer[out] = &node;
  }
  EXPECT_EQ(adds, 3u);  // z1, z2, z3
  ASSERT_TRUE(producer.count("z0") && producer.count("z4") && producer.count("z6"));
  EXPECT_EQ(producer["z0"]->op_type, "MatMul");
  EXPECT_EQ(producer["z0"]->inputs, (std::vector<std::string>{"x", "w", "", "r"}));
  EXPECT_EQ(producer["z4"]->op_type, "MatMul");
  EXPECT_EQ(producer["z4"]->inputs[3], "y5");
  // Gemm -> Reshape -> the sum: the Gemm reads the residual viewed as [10, 6], the Reshape writes z6.
  EXPECT_EQ(producer["z6"]->op_type, "Reshape");
  const Node* gemm = producer.at(producer["z6"]->inputs[0]);
  EXPECT_EQ(gemm->op_type, "Gemm");
  ASSERT_EQ(gemm->inputs.size(), 4u);
  const Node* view = producer.at(gemm->inputs[3]);
  EXPECT_EQ(view->op_type, "Reshape");
  EXPECT_EQ(view->inputs[0], "r");
  EXPECT_EQ(static_shape_of(graph, gemm->inputs[3]), (Shape{10, 6}));
}

constexpr int64_t kResidualBatch = 3, kResidualRows = 300, kResidualInner = 24, kResidualOut = 20;

// x [3, 300, 24], r [3, 300, 20], r_t [3, 20, 300]:
//   a = r + (x @ v + c)                      MatMul, bias, residual first
//   b = Reshape(Gemm(x as [900, 24], v, c)) + r   through the Gemm's 2-D output
//   d = x @ v + Transpose(r_t)               the residual computed after the product in node order
//   e = 0.5 (x @ v) + Relu(r)                a fused elementwise group of the product and r
//   f = x @ v + r, x @ v also an output      stays
onnx::ModelProto residual_model(const std::vector<float>& v, const std::vector<float>& c) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {kResidualBatch, kResidualRows, kResidualInner});
  add_tensor_value(graph->mutable_input(), "r", onnx::TensorProto::FLOAT, {kResidualBatch, kResidualRows, kResidualOut});
  add_tensor_value(graph->mutable_input(), "r_t", onnx::TensorProto::FLOAT, {kResidualBatch, kResidualOut, kResidualRows});
  add_float_initializer(graph, "v", {kResidualInner, kResidualOut}, v);
  add_float_initializer(graph, "c", {kResidualOut}, c);
  add_float_initializer(graph, "half", {}, {0.5f});
  add_int64_initializer(graph, "flat", {2}, {kResidualBatch * kResidualRows, kResidualInner});
  add_int64_initializer(graph, "unflat", {3}, {kResidualBatch, kResidualRows, kResidualOut});
  add_node(graph, "MatMul", {"x", "v"}, {"p"}, "fc_a");
  add_node(graph, "Add", {"c", "p"}, {"pb"}, "fc_a_bias");
  add_node(graph, "Add", {"r", "pb"}, {"a"}, "residual_a");
  add_node(graph, "Reshape", {"x", "flat"}, {"x2"}, "flatten");
  add_node(graph, "Gemm", {"x2", "v", "c"}, {"g"}, "fc_b");
  add_node(graph, "Reshape", {"g", "unflat"}, {"g3"}, "unflatten");
  add_node(graph, "Add", {"g3", "r"}, {"b"}, "residual_b");
  add_node(graph, "MatMul", {"x", "v"}, {"q"}, "fc_d");
  onnx::NodeProto* transpose = add_node(graph, "Transpose", {"r_t"}, {"rt"}, "late");
  add_ints_attribute(transpose, "perm", {0, 2, 1});
  add_node(graph, "Add", {"q", "rt"}, {"d"}, "residual_d");
  add_node(graph, "MatMul", {"x", "v"}, {"s"}, "fc_e");
  add_node(graph, "Mul", {"s", "half"}, {"sh"}, "scale_e");
  add_node(graph, "Relu", {"r"}, {"rr"}, "relu_e");
  add_node(graph, "Add", {"sh", "rr"}, {"e"}, "residual_e");
  add_node(graph, "MatMul", {"x", "v"}, {"u"}, "fc_f");
  add_node(graph, "Add", {"u", "r"}, {"f"}, "residual_f");
  for (const char* name : {"a", "b", "d", "e", "f", "u"}) add_float_output(graph, name);
  return model;
}

TEST(FuseResidualAdd, SumsRunInTheGemmStore) {
  Random random(test_seed());
  const std::vector<float> v = random.normal(kResidualInner * kResidualOut), c = random.normal(kResidualOut);
  TemporaryFolder folder;
  const auto path = folder.path() / "residual.onnx";
  write_file(path, residual_model(v, c).SerializeAsString());
  for (const uint64_t binding : {uint64_t{0}, uint64_t{64} << 10}) {  // 0: the adapter's limit; 64 KiB: slices
    SessionOptions options;
    options.max_storage_binding_bytes = binding;
    auto session = Session::open(path, options);
    for (int run = 0; run < 2; ++run) {  // the second run replays the first's recording
      const std::vector<float> x = random.normal(kResidualBatch * kResidualRows * kResidualInner), r = random.normal(kResidualBatch * kResidualRows * kResidualOut),
                               r_t = random.normal(kResidualBatch * kResidualRows * kResidualOut);
      auto outputs = session->run({{"x", HostTensor::from_values<float>({kResidualBatch, kResidualRows, kResidualInner}, x)},
                                   {"r", HostTensor::from_values<float>({kResidualBatch, kResidualRows, kResidualOut}, r)},
                                   {"r_t", HostTensor::from_values<float>({kResidualBatch, kResidualOut, kResidualRows}, r_t)}});
      std::vector<double> p(kResidualBatch * kResidualRows * kResidualOut, 0.0);
      for (int64_t i = 0; i < kResidualBatch * kResidualRows; ++i)
        for (int64_t j = 0; j < kResidualOut; ++j)
          for (int64_t k = 0; k < kResidualInner; ++k) p[i * kResidualOut + j] += double(x[i * kResidualInner + k]) * v[k * kResidualOut + j];
      std::map<std::string, std::vector<double>> expected;
      for (const char* name : {"a", "b", "d", "e", "f", "u"}) expected[name].resize(p.size());
      for (int64_t i = 0; i < kResidualBatch * kResidualRows; ++i) {
        for (int64_t j = 0; j < kResidualOut; ++j) {
          const int64_t e = i * kResidualOut + j;
          const int64_t batch = i / kResidualRows, row = i % kResidualRows;
          expected["a"][e] = r[e] + p[e] + c[j];
          expected["b"][e] = p[e] + c[j] + r[e];
          expected["d"][e] = p[e] + r_t[(batch * kResidualOut + j) * kResidualRows + row];
          expected["e"][e] = 0.5 * p[e] + std::max<double>(r[e], 0.0);
          expected["f"][e] = p[e] + r[e];
          expected["u"][e] = p[e];
        }
      }
      for (const auto& [name, values] : expected)
        EXPECT_LT(rel_l2(values_of(outputs.at(name)), values), 1e-6) << name << " binding " << binding << " run " << run;
      const RunStats& stats = session->last_run();
      EXPECT_EQ(stats.record_ms_by_op.count("FusedElementwise"), 0u);
      EXPECT_EQ(stats.record_ms_by_op.count("Relu"), 0u);
      EXPECT_EQ(stats.record_ms_by_op.count("Add"), 1u) << "f's sum stays (its product is an output too)";
    }
  }
}

// On the reference models (zero-filled weights: structure only), after the session's fusion passes:
// the GEMMs that add a residual at their store.
TEST(FuseResidualAdd, ReferenceModelsFuseTheirResiduals) {
  const std::optional<fs::path> models = reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  // MP-SENet: an attention (Gemm -> Reshape -> Add) and a feed-forward residual per transformer, 8
  // transformers. BS-RoFormer: 24 transformers' attention (to_out) and feed-forward residuals.
  const std::pair<const char*, size_t> expected[] = {{"mpsenet", 16}, {"bsroformer_viperx1297", 48}};
  TemporaryFolder folder;
  for (const auto& [name, count] : expected) {
    std::optional<Graph> loaded = fused_reference_graph(*models, name, folder);
    if (!loaded) continue;
    const Graph& graph = *loaded;
    size_t fused = 0;
    for (const Node& node : graph.nodes)
      fused += (node.op_type == "MatMul" || node.op_type == "Gemm") && node.inputs.size() == 4;
    std::printf("  %-22s %zu residuals fused into GEMMs\n", name, fused);
    EXPECT_EQ(fused, count) << name;
  }
}

}  // namespace
}  // namespace onda::test
