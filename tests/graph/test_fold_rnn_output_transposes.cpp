// The Transpose(0, 2, 1, 3) after a recurrent layer goes into the layer where it is Y's only reader
// (graph/fold_rnn_output_transposes.h), and stays everywhere else. The folded layer's values are
// checked against float64 in tests/runtime/test_binding_limit_families.cpp (unsplit and in time
// chunks) and end to end by MP-SENet against ONNX Runtime.
#include <gtest/gtest.h>

#include "graph/fold_rnn_output_transposes.h"
#include "graph/fuse_activations.h"
#include "graph/fusion_passes.h"
#include "graph/shape_inference.h"
#include "graph/simplify.h"
#include "harness.h"
#include "onnx/onnx_loader.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

constexpr int64_t kRnnSeq = 5, kRnnBatch = 3, kRnnInput = 4, kRnnHidden = 8;

struct FoldCase {
  const char* name;
  const char* op = "GRU";
  std::vector<int64_t> perm{0, 2, 1, 3};
  int64_t layout = 0;
  bool expose_y = false;  // Y is also a graph output
  bool second_reader = false;  // a Relu reads Y too
  bool folds = true;
};

Graph folded_graph(const FoldCase& c, size_t* folds) {
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  const int64_t gates = std::string(c.op) == "LSTM" ? 4 : std::string(c.op) == "GRU" ? 3 : 1;
  const Shape x_shape = c.layout == 0 ? Shape{kRnnSeq, kRnnBatch, kRnnInput} : Shape{kRnnBatch, kRnnSeq, kRnnInput};
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, x_shape);
  add_float_initializer(graph, "w", {2, gates * kRnnHidden, kRnnInput}, std::vector<float>(2 * gates * kRnnHidden * kRnnInput, 0.1f));
  add_float_initializer(graph, "r", {2, gates * kRnnHidden, kRnnHidden}, std::vector<float>(2 * gates * kRnnHidden * kRnnHidden, 0.1f));
  auto* layer = add_node(graph, c.op, {"x", "w", "r"}, {"y"}, "layer");
  add_int_attribute(layer, "hidden_size", kRnnHidden);
  if (c.layout != 0) add_int_attribute(layer, "layout", c.layout);
  onnx::AttributeProto* direction = layer->add_attribute();
  direction->set_name("direction");
  direction->set_type(onnx::AttributeProto::STRING);
  direction->set_s("bidirectional");
  add_ints_attribute(add_node(graph, "Transpose", {"y"}, {"yt"}, "transpose"), "perm", c.perm);
  add_float_output(graph, "yt");
  if (c.expose_y) add_float_output(graph, "y");
  if (c.second_reader) {
    add_node(graph, "Relu", {"y"}, {"relu"}, "relu");
    add_float_output(graph, "relu");
  }
  Graph parsed = parse_onnx_model(model.SerializeAsString(), ".", "rnn transpose test model");
  simplify_graph(parsed, {});
  *folds = fold_rnn_output_transposes(parsed);
  return parsed;
}

TEST(FoldRnnOutputTransposes, FoldsOnlyTheExportedTransposeThatAloneReadsY) {
  const FoldCase cases[] = {
      {"GRU, Transpose(0, 2, 1, 3)"},
      {"LSTM", "LSTM"},
      {"RNN", "RNN"},
      {"another permutation", "GRU", {2, 0, 1, 3}, 0, false, false, false},
      {"layout 1", "LSTM", {0, 2, 1, 3}, 1, false, false, false},
      {"Y also a graph output", "GRU", {0, 2, 1, 3}, 0, true, false, false},
      {"Y also read by a Relu", "GRU", {0, 2, 1, 3}, 0, false, true, false},
  };
  for (const FoldCase& c : cases) {
    size_t folds = 0;
    const Graph g = folded_graph(c, &folds);
    EXPECT_EQ(folds, c.folds ? 1u : 0u) << c.name;
    bool has_transpose = false;
    for (const Node& node : g.nodes) {
      has_transpose = has_transpose || node.op_type == "Transpose";
      if (node.op_type != c.op) continue;
      EXPECT_EQ(node.has_attribute(kRnnOutputPerm), c.folds) << c.name;
      if (c.folds) {
        EXPECT_EQ(node.outputs[0], "yt") << c.name;
        EXPECT_EQ(node.attribute_ints(kRnnOutputPerm, {}), (std::vector<int64_t>{0, 2, 1, 3})) << c.name;
      }
    }
    EXPECT_EQ(has_transpose, !c.folds) << c.name;
  }
}

// The folded layer's Y has the Transpose's shape in shape inference.
TEST(FoldRnnOutputTransposes, FoldedYHasTheTransposedShape) {
  size_t folds = 0;
  const Graph g = folded_graph({"GRU"}, &folds);
  ASSERT_EQ(folds, 1u);
  for (const Node& node : g.nodes) {
    if (node.op_type != "GRU") continue;
    const std::vector<std::optional<TensorType>> inputs = {
        TensorType{DType::f32, {kRnnSeq, kRnnBatch, kRnnInput}}, TensorType{DType::f32, {2, 3 * kRnnHidden, kRnnInput}},
        TensorType{DType::f32, {2, 3 * kRnnHidden, kRnnHidden}}};
    const auto types = infer_output_types(node, inputs, {nullptr, nullptr, nullptr});
    ASSERT_FALSE(types.empty());
    ASSERT_TRUE(types[0].has_value());
    EXPECT_EQ(types[0]->shape, (Shape{kRnnSeq, kRnnBatch, 2, kRnnHidden}));
  }
}

// PyTorch's whole pattern, Y -> Transpose(0, 2, 1, 3) -> Reshape -> LeakyRelu (MP-SENet's feed-forward
// GRUs): the layer writes the permuted, activated Y and the Reshape alone stays; a Relu reading the
// Reshape next to another reader stays. Values: tests/runtime/test_binding_limit_families.cpp.
TEST(FoldRnnOutputTransposes, ActivationAfterTheReshapeGoesIntoTheLayer) {
  for (bool second_reader : {false, true}) {
    onnx::ModelProto model = empty_model();
    auto* graph = model.mutable_graph();
    add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {kRnnSeq, kRnnBatch, kRnnInput});
    add_float_initializer(graph, "w", {2, 3 * kRnnHidden, kRnnInput}, std::vector<float>(2 * 3 * kRnnHidden * kRnnInput, 0.1f));
    add_float_initializer(graph, "r", {2, 3 * kRnnHidden, kRnnHidden}, std::vector<float>(2 * 3 * kRnnHidden * kRnnHidden, 0.1f));
    add_int64_initializer(graph, "shape", {3}, {kRnnSeq, kRnnBatch, 2 * kRnnHidden});
    auto* layer = add_node(graph, "GRU", {"x", "w", "r"}, {"y"}, "layer");
    add_int_attribute(layer, "hidden_size", kRnnHidden);
    onnx::AttributeProto* direction = layer->add_attribute();
    direction->set_name("direction");
    direction->set_type(onnx::AttributeProto::STRING);
    direction->set_s("bidirectional");
    add_ints_attribute(add_node(graph, "Transpose", {"y"}, {"yt"}, "transpose"), "perm", {0, 2, 1, 3});
    add_node(graph, "Reshape", {"yt", "shape"}, {"flat"}, "reshape");
    add_float_attribute(add_node(graph, "LeakyRelu", {"flat"}, {"out"}, "leaky"), "alpha", 0.2f);
    add_float_output(graph, "out");
    if (second_reader) {
      add_node(graph, "Relu", {"flat"}, {"relu"}, "relu");
      add_float_output(graph, "relu");
    }
    Graph g = parse_onnx_model(model.SerializeAsString(), ".", "rnn activation test model");
    simplify_graph(g, {});
    run_fusion_passes(g);
    std::vector<std::string> ops;
    for (const Node& node : g.nodes) ops.push_back(node.op_type);
    const std::vector<std::string> expected =
        second_reader ? std::vector<std::string>{"GRU", "Reshape", "LeakyRelu", "Relu"}
                      : std::vector<std::string>{"GRU", "Reshape"};
    EXPECT_EQ(ops, expected) << (second_reader ? "second reader" : "one reader");
    const Node& gru = g.nodes[0];
    EXPECT_EQ(gru.attribute_string(kFusedActivationAttribute, ""), second_reader ? "" : "leaky_relu");
    if (!second_reader) {
      EXPECT_FLOAT_EQ(gru.attribute_float(kFusedActivationAlphaAttribute, 0), 0.2f);
      EXPECT_EQ(g.nodes[1].outputs[0], "out");
    }
  }
}

}  // namespace
}  // namespace onda::test
