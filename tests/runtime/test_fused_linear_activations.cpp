// Activations fused into the GEMM epilogue of Gemm and MatMul nodes (graph/fuse_activations.h): the
// graph pass, and the fused nodes against float64 references on random inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/fuse_activations.h"
#include "harness.h"
#include "test_graph_nodes.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

TEST(FuseActivations, GemmAndMatMulTakeTheirActivation) {
  Graph graph;
  graph.nodes.push_back(graph_node("Gemm", {"a", "w", "b"}, {"logits"}));
  graph.nodes.push_back(graph_node("Sigmoid", {"logits"}, {"mask"}));
  graph.nodes.push_back(graph_node("MatMul", {"x", "v"}, {"hidden"}));
  graph.nodes.push_back(graph_node("Relu", {"hidden"}, {"rectified"}));
  // Read twice: the MatMul's own output is needed, so its Tanh stays a node.
  graph.nodes.push_back(graph_node("MatMul", {"x", "u"}, {"shared"}));
  graph.nodes.push_back(graph_node("Tanh", {"shared"}, {"squashed"}));
  graph.outputs = {"mask", "rectified", "squashed", "shared"};
  EXPECT_EQ(fuse_activations(graph), 2u);
  ASSERT_EQ(graph.nodes.size(), 4u);
  EXPECT_EQ(graph.nodes[0].op_type, "Gemm");
  EXPECT_EQ(graph.nodes[0].outputs[0], "mask");
  EXPECT_EQ(graph.nodes[0].attribute_string(kFusedActivationAttribute, ""), "sigmoid");
  EXPECT_EQ(graph.nodes[1].outputs[0], "rectified");
  EXPECT_EQ(graph.nodes[1].attribute_string(kFusedActivationAttribute, ""), "relu");
  EXPECT_FALSE(graph.nodes[2].has_attribute(kFusedActivationAttribute));
  EXPECT_EQ(graph.nodes[3].op_type, "Tanh");
}

// y = Sigmoid(Gemm(a [5, 37], w [37, 19], b [19])); z = LeakyRelu(MatMul(x [2, 3, 8, 16], v [16, 24]), 0.2).
onnx::ModelProto linear_heads(const std::vector<float>& w, const std::vector<float>& b,
                              const std::vector<float>& v) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "a", onnx::TensorProto::FLOAT, {5, 37});
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 3, 8, 16});
  add_float_initializer(graph, "w", {37, 19}, w);
  add_float_initializer(graph, "b", {19}, b);
  add_float_initializer(graph, "v", {16, 24}, v);
  add_node(graph, "Gemm", {"a", "w", "b"}, {"logits"}, "mask_head");
  add_node(graph, "Sigmoid", {"logits"}, {"y"}, "mask");
  add_node(graph, "MatMul", {"x", "v"}, {"hidden"}, "projection");
  onnx::NodeProto* leaky = add_node(graph, "LeakyRelu", {"hidden"}, {"z"}, "leaky");
  onnx::AttributeProto* alpha = leaky->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(0.2f);
  add_float_output(graph, "y");
  add_float_output(graph, "z");
  return model;
}

TEST(FuseActivations, FusedGemmAndMatMulMatchFloat64) {
  Random random(test_seed());
  const std::vector<float> w = random.normal(37 * 19), b = random.normal(19), v = random.normal(16 * 24);
  TemporaryFolder folder;
  auto session = open_session(linear_heads(w, b, v), folder);
  for (int run = 0; run < 2; ++run) {  // the second run replays the first's recording
    const std::vector<float> a = random.normal(5 * 37), x = random.normal(2 * 3 * 8 * 16);
    auto outputs = session->run({{"a", HostTensor::from_values<float>({5, 37}, a)},
                                 {"x", HostTensor::from_values<float>({2, 3, 8, 16}, x)}});
    std::vector<double> y_ref, z_ref;
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 19; ++j) {
        double sum = b[j];
        for (int64_t k = 0; k < 37; ++k) sum += double(a[i * 37 + k]) * w[k * 19 + j];
        y_ref.push_back(1.0 / (1.0 + std::exp(-sum)));
      }
    for (int64_t r = 0; r < 2 * 3 * 8; ++r)
      for (int64_t j = 0; j < 24; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < 16; ++k) sum += double(x[r * 16 + k]) * v[k * 24 + j];
        z_ref.push_back(sum >= 0 ? sum : 0.2 * sum);
      }
    ASSERT_EQ(outputs.at("y").shape(), (Shape{5, 19}));
    ASSERT_EQ(outputs.at("z").shape(), (Shape{2, 3, 8, 24}));
    EXPECT_LT(rel_l2(values_of(outputs.at("y")), y_ref), 1e-6) << "run " << run;
    EXPECT_LT(rel_l2(values_of(outputs.at("z")), z_ref), 1e-6) << "run " << run;
    const RunStats& stats = session->last_run();
    EXPECT_EQ(stats.record_ms_by_op.count("Sigmoid"), 0u) << "the Sigmoid is fused into the Gemm";
    EXPECT_EQ(stats.record_ms_by_op.count("LeakyRelu"), 0u) << "the LeakyRelu is fused into the MatMul";
  }
}

}  // namespace
}  // namespace onda::test
