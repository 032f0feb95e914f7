// onda::summarize_model (what `onda inspect` prints): a model built here with a graph input that
// is also an initializer, symbolic dims, an If with subgraphs, a model-local function, an op onda
// lacks, a Constant, external data and metadata; the summary must count and mark each. CPU only.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "graph/model_error.h"
#include "onda/model_summary.h"

namespace {

namespace fs = std::filesystem;

void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
               std::vector<std::string> dims) {
  auto* value = list->Add();
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (const auto& d : dims) {
    if (std::isdigit(static_cast<unsigned char>(d[0])))
      tensor->mutable_shape()->add_dim()->set_dim_value(std::stoll(d));
    else
      tensor->mutable_shape()->add_dim()->set_dim_param(d);
  }
}

onnx::NodeProto* add_node(onnx::GraphProto* graph, const std::string& op, std::vector<std::string> inputs,
                          std::vector<std::string> outputs, const std::string& domain = "") {
  auto* node = graph->add_node();
  node->set_op_type(op);
  node->set_domain(domain);
  for (const auto& i : inputs) node->add_input(i);
  for (const auto& o : outputs) node->add_output(o);
  return node;
}

onnx::GraphProto branch(const std::string& op, const std::string& domain) {
  onnx::GraphProto g;
  g.set_name(op);
  add_node(&g, op, {"x"}, {"y_" + op}, domain);
  add_value(g.mutable_output(), "y_" + op, {"N", "3"});
  return g;
}

TEST(ModelSummary, CountsAndMarksEveryOp) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.set_producer_name("test");
  model.set_producer_version("1.2");
  model.add_opset_import()->set_version(13);
  auto* custom = model.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  auto* local = model.add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  auto* meta = model.add_metadata_props();
  meta->set_key("onda");
  meta->set_value("{}");

  auto* g = model.mutable_graph();
  add_value(g->mutable_input(), "x", {"N", "3"});
  add_value(g->mutable_input(), "w", {"3"});  // also an initializer: not an input to give
  add_value(g->mutable_input(), "cond", {});
  g->mutable_input(2)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  g->mutable_input(2)->mutable_type()->mutable_tensor_type()->mutable_shape();  // rank 0
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [key, value] : {std::pair{"location", "weights.bin"}, {"offset", "0"}, {"length", "16"}}) {
    auto* entry = w->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  add_node(g, "Constant", {}, {"c"});
  add_node(g, "Mul", {"x", "w"}, {"m"});
  add_node(g, "Square", {"m"}, {"s"}, "local");
  add_node(g, "Sharpen", {"s"}, {"p"}, "com.example");
  auto* if_node = add_node(g, "If", {"cond"}, {"out"});
  auto* then_branch = if_node->add_attribute();
  then_branch->set_name("then_branch");
  then_branch->set_type(onnx::AttributeProto::GRAPH);
  *then_branch->mutable_g() = branch("Relu", "");
  auto* else_branch = if_node->add_attribute();
  else_branch->set_name("else_branch");
  else_branch->set_type(onnx::AttributeProto::GRAPH);
  *else_branch->mutable_g() = branch("Relu", "ai.onnx");
  add_value(g->mutable_output(), "out", {"N", "3"});
  auto* function = model.add_functions();
  function->set_name("Square");
  function->set_domain("local");
  function->add_input("a");
  function->add_output("b");
  auto* body = function->add_node();
  body->set_op_type("Mul");
  body->add_input("a");
  body->add_input("a");
  body->add_output("b");
  auto* function_opset = function->add_opset_import();
  function_opset->set_version(13);

  const fs::path path = fs::temp_directory_path() / ("onda_summary_" + std::to_string(::getpid()) + ".onnx");
  {
    std::ofstream file(path, std::ios::binary);
    ASSERT_TRUE(model.SerializeToOstream(&file));
  }
  const onda::ModelSummary s = onda::summarize_model(path);
  fs::remove(path);

  EXPECT_EQ(s.ir_version, 7);
  EXPECT_EQ(s.producer_name, "test");
  EXPECT_EQ(s.producer_version, "1.2");
  EXPECT_EQ(s.opsets.at(""), 13);
  EXPECT_EQ(s.opsets.at("com.example"), 1);
  ASSERT_EQ(s.inputs.size(), 2u);  // x and cond; w has an initializer
  EXPECT_EQ(s.inputs[0].name, "x");
  EXPECT_EQ(s.inputs[0].dtype, "FLOAT");
  EXPECT_EQ(s.inputs[0].shape, (std::vector<std::string>{"N", "3"}));
  EXPECT_EQ(s.inputs[1].dtype, "BOOL");
  EXPECT_TRUE(s.inputs[1].has_shape);
  EXPECT_TRUE(s.inputs[1].shape.empty());  // a scalar
  ASSERT_EQ(s.outputs.size(), 1u);
  EXPECT_EQ(s.nodes, 8);  // 5 in the graph, 2 in the If branches, 1 in the function
  EXPECT_EQ(s.initializers, 1);
  ASSERT_EQ(s.external_data.size(), 1u);
  EXPECT_EQ(s.external_data[0].location, "weights.bin");
  EXPECT_EQ(s.external_data[0].bytes, 16u);
  EXPECT_EQ(s.external_data[0].tensors, 1);
  EXPECT_FALSE(s.external_data[0].present);
  EXPECT_EQ(s.metadata.at("onda"), "{}");

  std::map<std::string, onda::OpCount> ops;
  for (const auto& op : s.ops) ops[op.domain + "::" + op.op_type] = op;
  ASSERT_EQ(ops.size(), 6u) << "Constant, Mul, local::Square, com.example::Sharpen, If, Relu";
  EXPECT_EQ(ops.at("::Mul").count, 2);   // the graph's and the function body's
  EXPECT_EQ(ops.at("::Relu").count, 2);  // "" and "ai.onnx" are one domain
  EXPECT_EQ(s.ops.front().count, 2);     // most frequent first
  EXPECT_TRUE(ops.at("::Constant").supported);
  EXPECT_TRUE(ops.at("::Mul").supported);
  EXPECT_TRUE(ops.at("local::Square").supported);  // a local function: inlined
  EXPECT_TRUE(ops.at("::If").supported);
  EXPECT_FALSE(ops.at("com.example::Sharpen").supported);
}

TEST(ModelSummary, NamesTheFileItCannotRead) {
  EXPECT_THROW(onda::summarize_model("/nonexistent/model.onnx"), onda::ModelError);
  const fs::path path =
      fs::temp_directory_path() / ("onda_summary_junk_" + std::to_string(::getpid()) + ".onnx");
  std::ofstream(path) << "not a model";
  try {
    onda::summarize_model(path);
    ADD_FAILURE() << "no error for a file that is not a model";
  } catch (const onda::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("is not an ONNX model"), std::string::npos) << e.what();
  }
  fs::remove(path);
}

}  // namespace
