// If with a condition known at plan time: a sample-rate switch on a constant and, nested in one
// branch, a switch on an input dimension. The Session inlines the taken branch (outer-scope names
// resolve to the enclosing graph, branch-local names that clash are renamed, branch outputs become
// the If's outputs) and runs it on the GPU; checked against a float64 reference for all four paths.
// Conditions computed from input values: test_runtime_control_flow.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "graph/model_error.h"
#include "graph/simplify.h"
#include "harness.h"
#include "onnx/onnx_loader.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

onnx::GraphProto* add_branch(onnx::NodeProto* node, const char* attribute_name) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(attribute_name);
  attribute->set_type(onnx::AttributeProto::GRAPH);
  attribute->mutable_g()->set_name(std::string(node->name()) + "_" + attribute_name);
  return attribute->mutable_g();
}

// x[2, T] (T dynamic), sample_rate a constant:
//   if sample_rate == 48000:  y = x * 0.5                      (then: local value "scaled")
//   else: if T % 2 == 0:      y = (x + bias) * 0.5             (nested then: also defines "scaled")
//         else:               y = -x
onnx::ModelProto sample_rate_switch(int64_t sample_rate) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::ValueInfoProto* x = add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 1});
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("T");
  add_int64_initializer(graph, "sample_rate", {}, {sample_rate});
  add_int64_initializer(graph, "rate_48k", {}, {48000});
  add_int64_initializer(graph, "one", {}, {1});
  add_int64_initializer(graph, "two", {}, {2});
  add_int64_initializer(graph, "zero", {}, {0});
  add_float_initializer(graph, "half", {}, {0.5f});
  add_float_initializer(graph, "bias", {2, 1}, {1.0f, -3.0f});
  add_node(graph, "Equal", {"sample_rate", "rate_48k"}, {"is_48k"}, "rate_check");
  add_node(graph, "Shape", {"x"}, {"x_shape"}, "shape");
  add_node(graph, "Gather", {"x_shape", "one"}, {"frames"}, "frames");
  add_node(graph, "Mod", {"frames", "two"}, {"odd"}, "parity");
  add_node(graph, "Equal", {"odd", "zero"}, {"even"}, "even_check");
  onnx::NodeProto* outer_if = add_node(graph, "If", {"is_48k"}, {"y"}, "rate_switch");

  onnx::GraphProto* at_48k = add_branch(outer_if, "then_branch");
  add_node(at_48k, "Mul", {"x", "half"}, {"scaled"}, "scale_48k");
  add_float_output(at_48k, "scaled");

  onnx::GraphProto* other_rate = add_branch(outer_if, "else_branch");
  onnx::NodeProto* inner_if = add_node(other_rate, "If", {"even"}, {"inner_y"}, "parity_switch");
  onnx::GraphProto* even = add_branch(inner_if, "then_branch");
  add_node(even, "Add", {"x", "bias"}, {"biased"}, "add_bias");
  add_node(even, "Mul", {"biased", "half"}, {"scaled"}, "scale_even");  // same local name as at_48k
  add_float_output(even, "scaled");
  onnx::GraphProto* odd = add_branch(inner_if, "else_branch");
  add_node(odd, "Neg", {"x"}, {"negated"}, "negate");
  add_float_output(odd, "negated");
  add_float_output(other_rate, "inner_y");
  add_float_output(graph, "y");
  return model;
}

double expected(int64_t sample_rate, int64_t frames, int64_t row, float x) {
  if (sample_rate == 48000) return 0.5 * x;
  if (frames % 2 == 0) return 0.5 * (double(x) + (row == 0 ? 1.0 : -3.0));
  return -double(x);
}

TEST(RuntimeIf, ConstantConditionsInlineTheTakenBranch) {
  Random random(test_seed());
  for (int64_t sample_rate : {48000, 44100}) {
    TemporaryFolder folder;
    auto session = open_session(sample_rate_switch(sample_rate), folder);
    for (int64_t frames : {6, 7}) {
      const std::vector<float> x = random.normal(2 * frames);
      auto outputs = session->run({{"x", HostTensor::from_values<float>({2, frames}, x)}});
      const HostTensor& y = outputs.at("y");
      ASSERT_EQ(y.shape(), (Shape{2, frames}));
      std::vector<double> reference;
      for (int64_t i = 0; i < 2 * frames; ++i) reference.push_back(expected(sample_rate, frames, i / frames, x[i]));
      const auto values = y.values<float>();
      const double error = rel_l2(std::vector<float>(values.begin(), values.end()), reference);
      std::printf("sample rate %lld, %lld frames: rel L2 %.2e\n", static_cast<long long>(sample_rate),
                  static_cast<long long>(frames), error);
      EXPECT_LT(error, 1e-6) << "sample rate " << sample_rate << ", frames " << frames;
    }
  }
}

// Both Ifs folded: the nested branch's "scaled" does not collide with the outer one (two Ifs whose
// taken branches define the same local name: the second is renamed), and the graph stays valid.
TEST(RuntimeIf, ClashingBranchNamesAreRenamed) {
  onnx::ModelProto model = sample_rate_switch(44100);
  onnx::GraphProto* graph = model.mutable_graph();
  // A second switch taking a branch that also defines "scaled" and "biased".
  onnx::TensorProto* always = graph->add_initializer();
  always->set_name("always");
  always->set_data_type(onnx::TensorProto::BOOL);
  always->add_int32_data(1);
  onnx::NodeProto* second = add_node(graph, "If", {"always"}, {"y2"}, "second_switch");
  onnx::GraphProto* then_branch = add_branch(second, "then_branch");
  add_node(then_branch, "Add", {"y", "bias"}, {"biased"}, "add_bias_again");
  add_node(then_branch, "Mul", {"biased", "half"}, {"scaled"}, "scale_again");
  add_float_output(then_branch, "scaled");
  onnx::GraphProto* else_branch = add_branch(second, "else_branch");
  add_node(else_branch, "Identity", {"y"}, {"same"}, "same");
  add_float_output(else_branch, "same");
  add_float_output(graph, "y2");

  Graph loaded = parse_onnx_model(model.SerializeAsString(), ".", "two switches");
  const SimplifyReport report = simplify_graph(loaded, {{"x", {2, 4}}});
  EXPECT_EQ(report.inlined_branches, 3u);  // rate switch, parity switch, second switch
  EXPECT_NO_THROW(loaded.validate());
  std::set<std::string> ops;
  for (const Node& node : loaded.nodes) ops.insert(node.op_type);
  EXPECT_EQ(ops.count("If"), 0u);
  EXPECT_TRUE(loaded.find_value("y2/scaled") && loaded.find_value("y2/biased")) << "second branch renamed";
  ASSERT_TRUE(loaded.find_value("y2")->shape);
  EXPECT_EQ(*loaded.find_value("y2")->shape, (Shape{2, 4}));
}

}  // namespace
}  // namespace onda::test
