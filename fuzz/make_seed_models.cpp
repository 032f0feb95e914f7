// Writes the fuzz target's seed corpus: small valid ONNX models that reach each loader and
// simplify path (initializer encodings, external data, Constant forms, subgraphs, model-local
// functions, dynamic dimensions, shape-arithmetic chains, opset-dependent signatures), each also
// truncated at a third, two thirds and one byte short. scripts/fuzz.sh adds ONNX's own node tests.
//
//   make_seed_models OUTPUT_DIR
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "graph/model_error.h"
#include "graph/simplify.h"
#include "onnx/onnx_loader.h"

namespace {

using Dims = std::vector<int64_t>;

onnx::ModelProto empty_model(int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(opset);
  model.mutable_graph()->set_name("seed");
  return model;
}

// A dimension < 0 is written as the symbolic dimension "N"; no dims at all: rank unknown.
void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
               int elem_type, const Dims* dims) {
  onnx::ValueInfoProto* value = list->Add();
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  if (!dims) return;
  auto* shape = tensor->mutable_shape();
  for (int64_t dim : *dims) {
    if (dim < 0)
      shape->add_dim()->set_dim_param("N");
    else
      shape->add_dim()->set_dim_value(dim);
  }
}

void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
               int elem_type, const Dims& dims) {
  add_value(list, name, elem_type, &dims);
}

onnx::NodeProto* add_node(onnx::GraphProto* graph, const std::string& op, std::vector<std::string> inputs,
                          std::vector<std::string> outputs) {
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(op + "_" + std::to_string(graph->node_size()));
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
  return node;
}

void add_int(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void add_ints(onnx::NodeProto* node, const std::string& name, const Dims& values) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attribute->add_ints(v);
}

void add_int64_initializer(onnx::GraphProto* graph, const std::string& name, const Dims& values,
                           bool scalar = false) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) tensor->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) tensor->add_int64_data(v);
}

void add_float_initializer(onnx::GraphProto* graph, const std::string& name, const Dims& dims,
                           const std::vector<float>& values) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) tensor->add_dims(dim);
  tensor->set_raw_data(values.data(), values.size() * sizeof(float));
}

// x[N,6] -> Shape -> Gather -> Unsqueeze -> Concat -> Reshape -> Add(w) -> If(cond folds from N).
onnx::ModelProto shape_chain_and_if() {
  onnx::ModelProto model = empty_model(17);
  onnx::GraphProto* graph = model.mutable_graph();
  add_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {-1, 6});
  add_int64_initializer(graph, "zero", {0}, true);
  add_int64_initializer(graph, "axis0", {0});
  add_int64_initializer(graph, "minus_one", {-1});
  add_int64_initializer(graph, "two", {2}, true);
  add_float_initializer(graph, "w", {3}, {1.0f, 2.0f, 3.0f});
  add_node(graph, "Shape", {"x"}, {"s"});
  add_node(graph, "Gather", {"s", "zero"}, {"n"});
  add_node(graph, "Mod", {"n", "two"}, {"odd"});
  add_node(graph, "Equal", {"odd", "zero"}, {"even"});
  add_node(graph, "Unsqueeze", {"n", "axis0"}, {"n1"});
  add_int(add_node(graph, "Concat", {"n1", "minus_one"}, {"target"}), "axis", 0);
  add_node(graph, "Reshape", {"x", "target"}, {"r"});
  add_node(graph, "Add", {"x", "x"}, {"sum"});
  onnx::NodeProto* branch = add_node(graph, "If", {"even"}, {"y"});
  for (auto [attribute_name, op] : {std::pair<const char*, const char*>{"then_branch", "Neg"}, {"else_branch", "Abs"}}) {
    auto* attribute = branch->add_attribute();
    attribute->set_name(attribute_name);
    attribute->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* body = attribute->mutable_g();
    body->set_name(attribute_name);
    add_node(body, op, {"sum"}, {std::string(op) + "_out"});
    add_value(body->mutable_output(), std::string(op) + "_out", onnx::TensorProto::FLOAT, {-1, 6});
  }
  add_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {-1, 6});
  add_value(graph->mutable_output(), "r", onnx::TensorProto::FLOAT, {-1, 6});
  return model;
}

// Split, ReduceMean and Unsqueeze in the opset-`opset` form (attributes before 13/18, inputs after).
onnx::ModelProto opset_variant(int64_t opset) {
  onnx::ModelProto model = empty_model(opset);
  onnx::GraphProto* graph = model.mutable_graph();
  add_value(graph->mutable_input(), "x:0", onnx::TensorProto::FLOAT, {-1, 4});
  add_float_initializer(graph, "scale", {4}, {1.0f, 0.5f, 2.0f, 1.0f});
  onnx::NodeProto* split;
  if (opset >= 13) {
    add_int64_initializer(graph, "split", {1, 3});
    split = add_node(graph, "Split", {"x:0", "split"}, {"a/0", "b/0"});
  } else {
    split = add_node(graph, "Split", {"x:0"}, {"a/0", "b/0"});
    add_ints(split, "split", {1, 3});
  }
  add_int(split, "axis", 1);
  onnx::NodeProto* mean;
  if (opset >= 18) {
    add_int64_initializer(graph, "axes", {1});
    mean = add_node(graph, "ReduceMean", {"b/0", "axes"}, {"m"});
  } else {
    mean = add_node(graph, "ReduceMean", {"b/0"}, {"m"});
    add_ints(mean, "axes", {1});
  }
  add_int(mean, "keepdims", 1);
  add_node(graph, "Sub", {"b/0", "m"}, {"centered"});
  add_node(graph, "Concat", {"a/0", "centered"}, {"joined"})->add_attribute()->CopyFrom([] {
    onnx::AttributeProto axis;
    axis.set_name("axis");
    axis.set_type(onnx::AttributeProto::INT);
    axis.set_i(1);
    return axis;
  }());
  if (opset >= 17) {
    onnx::NodeProto* norm = add_node(graph, "LayerNormalization", {"joined", "scale", ""}, {"1", "", ""});
    add_int(norm, "axis", -1);
  } else {
    add_node(graph, "Mul", {"joined", "scale"}, {"1"});
  }
  add_value(graph->mutable_output(), "1", onnx::TensorProto::FLOAT, {-1, 4});
  return model;
}

// Constant nodes in every form, initializers in typed fields and as (missing) external data, and
// shape ops whose results fold: Range, ConstantOfShape, Expand, Slice, Pad, Tile, Where, Cast.
onnx::ModelProto constants_and_shape_ops() {
  onnx::ModelProto model = empty_model(17);
  onnx::GraphProto* graph = model.mutable_graph();
  add_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {-1, 2});
  auto constant = [&](const std::string& output, const std::string& attribute_name, auto fill) {
    onnx::NodeProto* node = add_node(graph, "Constant", {}, {output});
    auto* attribute = node->add_attribute();
    attribute->set_name(attribute_name);
    fill(*attribute);
  };
  constant("start", "value_int", [](onnx::AttributeProto& a) { a.set_type(onnx::AttributeProto::INT); a.set_i(0); });
  constant("limit", "value_int", [](onnx::AttributeProto& a) { a.set_type(onnx::AttributeProto::INT); a.set_i(6); });
  constant("delta", "value_int", [](onnx::AttributeProto& a) { a.set_type(onnx::AttributeProto::INT); a.set_i(2); });
  constant("f", "value_floats", [](onnx::AttributeProto& a) {
    a.set_type(onnx::AttributeProto::FLOATS);
    a.add_floats(1.5f);
    a.add_floats(-2.0f);
  });
  constant("shape", "value", [](onnx::AttributeProto& a) {
    a.set_type(onnx::AttributeProto::TENSOR);
    a.mutable_t()->set_data_type(onnx::TensorProto::INT64);
    a.mutable_t()->add_dims(2);
    a.mutable_t()->add_int64_data(2);
    a.mutable_t()->add_int64_data(3);
  });
  onnx::TensorProto* external = graph->add_initializer();
  external->set_name("external_weight");
  external->set_data_type(onnx::TensorProto::FLOAT);
  external->add_dims(3);
  external->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [key, value] : {std::pair<const char*, const char*>{"location", "weights.bin"}, {"offset", "0"}, {"length", "12"}}) {
    auto* entry = external->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  add_int64_initializer(graph, "pads", {0, 1, 0, 1});
  add_int64_initializer(graph, "starts", {0});
  add_int64_initializer(graph, "ends", {1});
  add_int64_initializer(graph, "repeats", {1, 2});
  add_node(graph, "Range", {"start", "limit", "delta"}, {"range"});
  add_node(graph, "ConstantOfShape", {"shape"}, {"ones"});
  add_node(graph, "Cast", {"range"}, {"range_f"})->add_attribute()->CopyFrom([] {
    onnx::AttributeProto to;
    to.set_name("to");
    to.set_type(onnx::AttributeProto::INT);
    to.set_i(onnx::TensorProto::FLOAT);
    return to;
  }());
  add_node(graph, "Expand", {"range_f", "shape"}, {"expanded"});
  add_node(graph, "Slice", {"x", "starts", "ends"}, {"sliced"});
  add_node(graph, "Pad", {"x", "pads"}, {"padded"});
  add_node(graph, "Tile", {"x", "repeats"}, {"tiled"});
  add_node(graph, "Greater", {"x", "f"}, {"mask"});
  add_node(graph, "Where", {"mask", "x", "f"}, {"chosen"});
  add_node(graph, "Transpose", {"expanded"}, {"transposed"});
  for (const char* output : {"ones", "transposed", "sliced", "padded", "tiled", "chosen", "external_weight"})
    add_value(graph->mutable_output(), output, onnx::TensorProto::FLOAT, nullptr);
  return model;
}

// A model-local function Scale(x) = Mul(x, Constant(@alpha)) called with alpha = 3.
onnx::ModelProto model_local_function() {
  onnx::ModelProto model = empty_model(17);
  auto* domain = model.add_opset_import();
  domain->set_domain("local");
  domain->set_version(1);
  onnx::FunctionProto* scale = model.add_functions();
  scale->set_name("Scale");
  scale->set_domain("local");
  scale->add_input("x");
  scale->add_output("y");
  scale->add_attribute("alpha");
  onnx::NodeProto* constant = scale->add_node();
  constant->set_op_type("Constant");
  constant->add_output("factor");
  auto* reference = constant->add_attribute();
  reference->set_name("value_float");
  reference->set_type(onnx::AttributeProto::FLOAT);
  reference->set_ref_attr_name("alpha");
  onnx::NodeProto* mul = scale->add_node();
  mul->set_op_type("Mul");
  mul->add_input("x");
  mul->add_input("factor");
  mul->add_output("y");
  onnx::GraphProto* graph = model.mutable_graph();
  add_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {4});
  onnx::NodeProto* call = add_node(graph, "Scale", {"x"}, {"y"});
  call->set_domain("local");
  auto* alpha = call->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(3.0f);
  add_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {4});
  return model;
}

void write(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!file) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  std::vector<std::pair<std::string, onnx::ModelProto>> models = {
      {"shape_chain_and_if", shape_chain_and_if()},
      {"constants_and_shape_ops", constants_and_shape_ops()},
      {"model_local_function", model_local_function()}};
  for (int64_t opset : {11, 13, 15, 17, 18, 21}) models.push_back({"opset" + std::to_string(opset), opset_variant(opset)});
  for (const auto& [name, model] : models) {
    const std::string bytes = model.SerializeAsString();
    write(dir / (name + ".onnx"), bytes);
    // A seed that the loader rejects would only exercise the error paths: check each one loads.
    // (The external weight of constants_and_shape_ops is missing on purpose: it loads from a
    // folder holding it, so that model is checked with its weights written next to it.)
    try {
      if (name == "constants_and_shape_ops") {
        const float weights[3] = {1, 2, 3};
        write(dir / "weights.bin", std::string(reinterpret_cast<const char*>(weights), sizeof weights));
      }
      onda::Graph graph = onda::parse_onnx_model(bytes, dir, name);
      std::map<std::string, onda::Shape> shapes;
      for (const std::string& input : graph.inputs) {
        onda::Shape shape = *graph.find_value(input)->shape;
        for (int64_t& dim : shape) dim = dim < 0 ? 3 : dim;
        shapes[input] = shape;
      }
      const onda::SimplifyReport report = onda::simplify_graph(graph, shapes);
      std::printf("%-26s loads: %zu nodes after simplify (%zu folded)\n", name.c_str(), graph.nodes.size(),
                  report.folded_nodes);
      std::filesystem::remove(dir / "weights.bin");
    } catch (const onda::ModelError& error) {
      std::fprintf(stderr, "seed model %s does not load: %s\n", name.c_str(), error.what());
      return 1;
    }
    for (size_t length : {bytes.size() / 3, 2 * bytes.size() / 3, bytes.size() - 1})
      write(dir / (name + ".cut" + std::to_string(length) + ".onnx"), bytes.substr(0, length));
  }
  std::printf("%zu seed models (and 3 truncated copies of each) in %s\n", models.size(), dir.c_str());
  return 0;
}
