// Linear layers' biases fused into their MatMuls (graph/fuse_matmul_bias.h) and elementwise tails
// run as the GEMM's epilogue (graph/fuse_epilogue.h): the graph pass, and the fused nodes against
// float64 references on random inputs, with the adapter's storage binding limit and with a small
// one that makes the batched MatMul run in slices of its batch.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/fuse_matmul_bias.h"
#include "harness.h"
#include "test_graph_nodes.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

TEST(FuseMatmulBias, ColumnBiasesFuseOthersStay) {
  Graph graph;
  graph.inputs = {"x"};
  declare_f32(graph, "x", {2, 5, 8});
  for (const char* y : {"y0", "y1", "y2", "y3", "y4"}) declare_f32(graph, y, {2, 5, 6});
  graph.initializers["w"] = HostTensor::from_values<float>({8, 6}, std::vector<float>(48, 0.5f));
  graph.initializers["bias"] = HostTensor::from_values<float>({6}, std::vector<float>(6, 1.0f));
  graph.initializers["bias_row"] = HostTensor::from_values<float>({1, 1, 6}, std::vector<float>(6, 1.0f));
  graph.initializers["full"] = HostTensor::from_values<float>({5, 6}, std::vector<float>(30, 1.0f));
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y0"}));
  graph.nodes.push_back(graph_node("Add", {"bias", "y0"}, {"z0"}));  // bias first, as PyTorch exports it
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y1"}));
  graph.nodes.push_back(graph_node("Add", {"y1", "bias_row"}, {"z1"}));
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y2"}));
  graph.nodes.push_back(graph_node("Add", {"y2", "full"}, {"z2"}));  // one value per element: stays
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y3"}));
  graph.nodes.push_back(graph_node("Add", {"y3", "x_runtime"}, {"z3"}));  // not a constant: stays
  graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"y4"}));
  graph.nodes.push_back(graph_node("Add", {"y4", "bias"}, {"z4"}));
  graph.outputs = {"z0", "z1", "z2", "z3", "z4", "y4"};  // y4 is read twice: stays
  EXPECT_EQ(fuse_matmul_bias(graph), 2u);
  ASSERT_EQ(graph.nodes.size(), 8u);
  EXPECT_EQ(graph.nodes[0].op_type, "MatMul");
  EXPECT_EQ(graph.nodes[0].inputs, (std::vector<std::string>{"x", "w", "bias"}));
  EXPECT_EQ(graph.nodes[0].outputs[0], "z0");
  EXPECT_EQ(graph.nodes[1].inputs, (std::vector<std::string>{"x", "w", "bias_row"}));
  EXPECT_EQ(graph.nodes[1].outputs[0], "z1");
  for (size_t i = 2; i < 8; i += 2) {
    EXPECT_EQ(graph.nodes[i].inputs.size(), 2u) << i;
    EXPECT_EQ(graph.nodes[i + 1].op_type, "Add") << i;
  }
}

constexpr int64_t kBiasBatch = 3, kBiasRows = 200, kBiasInner = 24, kBiasHidden = 64, kBiasOut = 20;

// x [3, 200, 24]: g = GELU(x @ w + b) as PyTorch exports it (Div by sqrt 2, Erf, Add 1, Mul, Mul 0.5);
// r = Relu(x @ v + c) with c [1, 1, 20]; s = x @ v + full, full [200, 20] (not a column bias).
onnx::ModelProto linear_model(const std::vector<float>& w, const std::vector<float>& b,
                              const std::vector<float>& v, const std::vector<float>& c,
                              const std::vector<float>& full) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {kBiasBatch, kBiasRows, kBiasInner});
  add_float_initializer(graph, "w", {kBiasInner, kBiasHidden}, w);
  add_float_initializer(graph, "b", {kBiasHidden}, b);
  add_float_initializer(graph, "v", {kBiasInner, kBiasOut}, v);
  add_float_initializer(graph, "c", {1, 1, kBiasOut}, c);
  add_float_initializer(graph, "full", {kBiasRows, kBiasOut}, full);
  add_float_initializer(graph, "sqrt2", {}, {1.4142135f});
  add_float_initializer(graph, "one", {}, {1.0f});
  add_float_initializer(graph, "half", {}, {0.5f});
  add_node(graph, "MatMul", {"x", "w"}, {"h"}, "fc1");
  add_node(graph, "Add", {"b", "h"}, {"hb"}, "fc1_bias");
  add_node(graph, "Div", {"hb", "sqrt2"}, {"scaled"}, "gelu_div");
  add_node(graph, "Erf", {"scaled"}, {"erf"}, "gelu_erf");
  add_node(graph, "Add", {"erf", "one"}, {"erf1"}, "gelu_add");
  add_node(graph, "Mul", {"hb", "erf1"}, {"prod"}, "gelu_mul");
  add_node(graph, "Mul", {"prod", "half"}, {"g"}, "gelu_half");
  add_node(graph, "MatMul", {"x", "v"}, {"p"}, "fc2");
  add_node(graph, "Add", {"p", "c"}, {"pc"}, "fc2_bias");
  add_node(graph, "Relu", {"pc"}, {"r"}, "fc2_relu");
  add_node(graph, "MatMul", {"x", "v"}, {"q"}, "fc3");
  add_node(graph, "Add", {"q", "full"}, {"s"}, "fc3_add");
  for (const char* name : {"g", "r", "s"}) add_float_output(graph, name);
  return model;
}

std::vector<double> product(const std::vector<float>& x, const std::vector<float>& w, int64_t cols) {
  std::vector<double> y(kBiasBatch * kBiasRows * cols, 0.0);
  for (int64_t r = 0; r < kBiasBatch * kBiasRows; ++r)
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t k = 0; k < kBiasInner; ++k) y[r * cols + j] += double(x[r * kBiasInner + k]) * w[k * cols + j];
  return y;
}

TEST(FuseMatmulBias, BiasAndGeluRunInTheGemmEpilogue) {
  Random random(test_seed());
  const std::vector<float> w = random.normal(kBiasInner * kBiasHidden), b = random.normal(kBiasHidden),
                           v = random.normal(kBiasInner * kBiasOut), c = random.normal(kBiasOut),
                           full = random.normal(kBiasRows * kBiasOut);
  const onnx::ModelProto model = linear_model(w, b, v, c, full);
  TemporaryFolder folder;
  const auto path = folder.path() / "linear.onnx";
  write_file(path, model.SerializeAsString());
  for (const uint64_t binding : {uint64_t{0}, uint64_t{64} << 10}) {  // 0: the adapter's limit
    SessionOptions options;
    options.max_storage_binding_bytes = binding;
    auto session = Session::open(path, options);
    for (int run = 0; run < 2; ++run) {  // the second run replays the first's recording
      const std::vector<float> x = random.normal(kBiasBatch * kBiasRows * kBiasInner);
      auto outputs = session->run({{"x", HostTensor::from_values<float>({kBiasBatch, kBiasRows, kBiasInner}, x)}});
      std::vector<double> g = product(x, w, kBiasHidden), r = product(x, v, kBiasOut), s = r;
      for (size_t i = 0; i < g.size(); ++i) {
        const double h = g[i] + b[i % kBiasHidden];
        g[i] = 0.5 * h * (1.0 + std::erf(h / std::sqrt(2.0)));
      }
      for (size_t i = 0; i < r.size(); ++i) {
        r[i] = std::max(r[i] + c[i % kBiasOut], 0.0);
        s[i] += full[i % (kBiasRows * kBiasOut)];
      }
      EXPECT_LT(rel_l2(values_of(outputs.at("g")), g), 1e-6) << "binding " << binding << " run " << run;
      EXPECT_LT(rel_l2(values_of(outputs.at("r")), r), 1e-6) << "binding " << binding << " run " << run;
      EXPECT_LT(rel_l2(values_of(outputs.at("s")), s), 1e-6) << "binding " << binding << " run " << run;
      const RunStats& stats = session->last_run();
      for (const char* fused : {"Relu", "FusedElementwise"})
        EXPECT_EQ(stats.record_ms_by_op.count(fused), 0u) << fused;
      // Three GEMMs and fc3's Add (the first run also packs the three weights); under the small
      // binding each batch slice is a GEMM of its own.
      if (binding == 0) {
        EXPECT_EQ(stats.dispatches, run == 0 ? 7u : 4u) << "run " << run;
      }
    }
  }
}

}  // namespace
}  // namespace onda::test
