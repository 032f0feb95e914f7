// Shape inference, constant folding and dead-node removal: against ONNX's node conformance data
// (inferred output shapes and folded output values must equal the reference outputs), on a
// synthetic shape-arithmetic chain with random input shapes, and on the four reference models
// (every output's inferred shape must be the recipe's).
#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "graph/graph_text.h"
#include "graph/model_error.h"
#include "graph/simplify.h"
#include "harness.h"
#include "onnx/onnx_loader.h"
#include "test_onnx_support.h"

namespace onda {
namespace {

namespace fs = std::filesystem;

struct ConformanceCase {
  Graph graph;
  std::vector<std::pair<std::string, HostTensor>> inputs;  // graph input name -> data
  std::vector<HostTensor> outputs;                         // in graph output order
};

// A node test whose model loads and whose data files are all tensors of supported dtypes.
std::optional<ConformanceCase> load_case(const fs::path& dir) {
  OnnxLoadOptions options;
  options.minimum_ir_version = 3;
  ConformanceCase c;
  try {
    c.graph = load_onnx_model(dir / "model.onnx", options);
    for (size_t i = 0;; ++i) {
      const fs::path file = dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb");
      if (!fs::exists(file)) break;
      std::string name;
      HostTensor tensor = read_tensor_proto_file(file, &name);
      if (name.empty() ||
          std::find(c.graph.inputs.begin(), c.graph.inputs.end(), name) == c.graph.inputs.end()) {
        if (i >= c.graph.inputs.size()) return std::nullopt;
        name = c.graph.inputs[i];
      }
      c.inputs.emplace_back(name, std::move(tensor));
    }
    for (size_t i = 0; i < c.graph.outputs.size(); ++i)
      c.outputs.push_back(
          read_tensor_proto_file(dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb")));
  } catch (const ModelError&) {
    return std::nullopt;  // unsupported types or data (sequences, doubles, ...): not this test's subject
  }
  if (c.inputs.size() != c.graph.inputs.size()) return std::nullopt;
  return c;
}

bool same_values(const HostTensor& actual, const HostTensor& expected) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) return false;
  if (!is_float(expected.dtype())) return actual.to_int64() == expected.to_int64();
  const std::vector<double> a = actual.to_double(), e = expected.to_double();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(e[i]) && std::isnan(a[i])) continue;
    if (!(std::fabs(a[i] - e[i]) <= 1e-5 * std::max(1.0, std::fabs(e[i])))) return false;
  }
  return true;
}

TEST(GraphSimplify, ConformanceShapesAndFoldedValues) {
  const std::optional<fs::path> root = test::onnx_node_tests_dir();
  if (!root) GTEST_SKIP() << "no ONNX node tests (apt-get install libonnx-testdata)";
  int cases = 0, shapes_checked = 0, values_checked = 0, unknown = 0;
  std::map<std::string, int> unknown_ops, runtime_unknown_ops;
  for (const fs::directory_entry& entry : fs::directory_iterator(*root)) {
    std::optional<ConformanceCase> c = load_case(entry.path());
    if (!c) continue;
    ++cases;
    const std::string name = entry.path().filename().string();
    // Forget the declared types of everything but the inputs, so what is compared is inferred.
    for (auto& [value_name, info] : c->graph.values)
      if (std::find(c->graph.inputs.begin(), c->graph.inputs.end(), value_name) == c->graph.inputs.end() &&
          !c->graph.is_initializer(value_name)) {
        info.dtype.reset();
        info.shape.reset();
        info.dim_params.clear();
      }

    // A: inputs at run time with their shapes bound: the inferred output types.
    {
      Graph graph = c->graph;
      std::map<std::string, Shape> shapes;
      for (const auto& [input, tensor] : c->inputs) shapes[input] = tensor.shape();
      SimplifyOptions options;
      options.fold_constants = false;
      options.remove_dead_nodes = false;
      try {
        simplify_graph(graph, shapes, options);
      } catch (const ModelError& error) {
        ADD_FAILURE() << name << ": " << error.what();
        continue;
      }
      for (size_t i = 0; i < graph.outputs.size(); ++i) {
        const ValueInfo* info = graph.find_value(graph.outputs[i]);
        if (!info || !info->dtype || !info->has_static_shape()) {
          for (const Node& node : graph.nodes) runtime_unknown_ops[node.op_type]++;
          continue;
        }
        ++shapes_checked;
        EXPECT_EQ(*info->shape, c->outputs[i].shape()) << name << " output " << i;
        EXPECT_EQ(*info->dtype, c->outputs[i].dtype()) << name << " output " << i;
      }
    }
    // B: every input a constant: folded outputs must equal the reference values.
    {
      Graph graph = c->graph;
      for (const auto& [input, tensor] : c->inputs) {
        graph.set_initializer(input, tensor);
        graph.inputs.erase(std::find(graph.inputs.begin(), graph.inputs.end(), input));
      }
      SimplifyOptions options;
      options.max_folded_elements = int64_t{1} << 20;
      options.remove_dead_nodes = false;
      try {
        simplify_graph(graph, {}, options);
      } catch (const ModelError& error) {
        ADD_FAILURE() << name << " (constant inputs): " << error.what();
        continue;
      }
      for (size_t i = 0; i < graph.outputs.size(); ++i) {
        if (const HostTensor* folded = graph.find_initializer(graph.outputs[i])) {
          ++values_checked;
          EXPECT_TRUE(same_values(*folded, c->outputs[i]))
              << name << " output " << i << ": folded " << dtype_name(folded->dtype()) << " "
              << shape_to_string(folded->shape()) << ", reference " << dtype_name(c->outputs[i].dtype())
              << " " << shape_to_string(c->outputs[i].shape());
          continue;
        }
        const ValueInfo* info = graph.find_value(graph.outputs[i]);
        if (info && info->dtype && info->has_static_shape()) {
          ++shapes_checked;
          EXPECT_EQ(*info->shape, c->outputs[i].shape()) << name << " (constant inputs) output " << i;
        } else {
          ++unknown;
          for (const Node& node : graph.nodes) unknown_ops[node.op_type]++;
        }
      }
    }
  }
  std::printf(
      "conformance cases: %d; output shapes checked: %d; folded values checked: %d; outputs not inferred: "
      "%d\n",
      cases, shapes_checked, values_checked, unknown);
  std::string ops;
  for (const auto& [op, count] : unknown_ops) ops += op + " ";
  std::printf("ops with outputs not inferred (constant inputs): %s\n", ops.c_str());
  ops.clear();
  for (const auto& [op, count] : runtime_unknown_ops) ops += op + " ";
  std::printf("ops in graphs with outputs not inferred (run-time inputs): %s\n", ops.c_str());
  EXPECT_GT(shapes_checked, 500);
  EXPECT_GT(values_checked, 100);
}

// Exported models compute shapes at run time: Shape -> Gather -> Unsqueeze -> Concat -> Reshape,
// Range/ConstantOfShape from a dimension, Slice of a shape. With random concrete input shapes,
// every shape node folds, the Reshape gets the expected static shape, and an unused branch is removed.
TEST(GraphSimplify, FoldsShapeChainsForRandomInputShapes) {
  const uint64_t seed = test::test_seed();
  std::mt19937_64 engine(seed);
  auto node = [](std::string op, std::vector<std::string> in, std::vector<std::string> out) {
    Node n;
    n.op_type = std::move(op);
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    n.name = n.outputs[0] + "_node";
    return n;
  };
  for (int trial = 0; trial < 10; ++trial) {
    const int64_t batch = 1 + engine() % 3, channels = 1 + engine() % 8, frames = 1 + engine() % 50;
    Graph graph;
    graph.inputs = {"x"};
    graph.value("x").dtype = DType::f32;
    graph.value("x").shape = Shape{-1, channels, -1};
    graph.value("x").dim_params = {"batch", "", "time"};
    graph.set_initializer("two", HostTensor::from_values<int64_t>({}, {2}));
    graph.set_initializer("minus_one", HostTensor::from_values<int64_t>({1}, {-1}));
    graph.set_initializer("zero_axis", HostTensor::from_values<int64_t>({1}, {0}));
    graph.set_initializer("start", HostTensor::from_values<int64_t>({1}, {2}));
    graph.set_initializer("end", HostTensor::from_values<int64_t>({1}, {3}));
    graph.nodes.push_back(node("Shape", {"x"}, {"shape"}));
    graph.nodes.push_back(node("Gather", {"shape", "two"}, {"time"}));             // scalar: frames
    graph.nodes.push_back(node("Unsqueeze", {"time", "zero_axis"}, {"time_1d"}));  // [frames]
    graph.nodes.push_back(node("Concat", {"minus_one", "time_1d"}, {"target"}));   // [-1, frames]
    graph.nodes.back().attributes.push_back({"axis", int64_t{0}});
    graph.nodes.push_back(node("Reshape", {"x", "target"}, {"flat"}));          // [batch*channels, frames]
    graph.nodes.push_back(node("Slice", {"shape", "start", "end"}, {"tail"}));  // [frames]
    graph.nodes.push_back(node("ConstantOfShape", {"tail"}, {"zeros"}));        // float [frames]
    graph.nodes.push_back(node("Add", {"flat", "zeros"}, {"sum"}));             // broadcast
    graph.nodes.push_back(node("Cast", {"time"}, {"time_float"}));
    graph.nodes.back().attributes.push_back({"to", int64_t{1}});
    graph.nodes.push_back(node("Relu", {"x"}, {"unused"}));  // dead
    graph.outputs = {"sum", "time_float"};
    ASSERT_NO_THROW(graph.validate());

    const SimplifyReport report = simplify_graph(graph, {{"x", {batch, channels, frames}}});
    // Reshape of a run-time tensor and the Add stay; Relu is dead; the rest is folded.
    ASSERT_EQ(graph.nodes.size(), 2u) << "seed " << seed;
    EXPECT_EQ(graph.nodes[0].op_type, "Reshape");
    EXPECT_EQ(graph.nodes[1].op_type, "Add");
    EXPECT_EQ(report.folded_nodes, 7u);
    EXPECT_EQ(report.removed_dead_nodes, 1u);
    EXPECT_EQ(graph.find_initializer("target")->to_int64(), (std::vector<int64_t>{-1, frames}));
    EXPECT_EQ(graph.find_initializer("time_float")->to_double(),
              std::vector<double>{static_cast<double>(frames)});
    EXPECT_EQ(graph.find_initializer("zeros")->shape(), (Shape{frames}));
    EXPECT_EQ(graph.find_initializer("zeros")->to_double(), std::vector<double>(frames, 0.0));
    const ValueInfo* sum = graph.find_value("sum");
    ASSERT_TRUE(sum && sum->has_static_shape());
    EXPECT_EQ(*sum->shape, (Shape{batch * channels, frames}));
    EXPECT_EQ(*graph.find_value("flat")->shape, (Shape{batch * channels, frames}));
    if (trial == 0) std::printf("%s", graph_to_text(graph).c_str());
    // One line per node: typed outputs, op, inputs ($ = initializer), attributes, name.
    const std::string text = graph_to_text(graph);
    EXPECT_NE(text.find("%flat: float32[" + std::to_string(batch * channels) + ", " + std::to_string(frames) +
                        "] = Reshape(%x, $target)   # flat_node"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("inputs: %x: float32[" + std::to_string(batch) + ", " + std::to_string(channels)),
              std::string::npos)
        << text;
    // Initializers only the folded nodes read are gone.
    EXPECT_FALSE(graph.is_initializer("two"));
    EXPECT_FALSE(graph.is_initializer("unused"));
  }
}

// "if frames % 4 != 0: pad, else: identity"-style code: the condition folds from the input shape,
// the If is replaced by the taken branch (with its initializers), and the output shape is known.
TEST(GraphSimplify, ConstantIfTakesItsBranch) {
  const uint64_t seed = test::test_seed();
  std::mt19937_64 engine(seed);
  auto node = [](std::string op, std::vector<std::string> in, std::vector<std::string> out) {
    Node n;
    n.op_type = std::move(op);
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    n.name = n.outputs[0] + "_node";
    return n;
  };
  for (int trial = 0; trial < 8; ++trial) {
    const int64_t frames = 1 + engine() % 20;
    Graph graph;
    graph.inputs = {"x"};
    graph.value("x").dtype = DType::f32;
    graph.set_initializer("last", HostTensor::from_values<int64_t>({}, {-1}));
    graph.set_initializer("four", HostTensor::from_values<int64_t>({}, {4}));
    graph.set_initializer("zero", HostTensor::from_values<int64_t>({}, {0}));
    graph.nodes.push_back(node("Shape", {"x"}, {"shape"}));
    graph.nodes.push_back(node("Gather", {"shape", "last"}, {"frames"}));
    graph.nodes.push_back(node("Mod", {"frames", "four"}, {"remainder"}));
    graph.nodes.push_back(node("Equal", {"remainder", "zero"}, {"aligned"}));

    auto then_branch = std::make_shared<Graph>();  // aligned: Relu(x)
    then_branch->nodes = {node("Relu", {"x"}, {"relu_out"})};
    then_branch->outputs = {"relu_out"};
    auto else_branch = std::make_shared<Graph>();  // not aligned: pad the time axis to a multiple of 4
    const int64_t padding = (4 - frames % 4) % 4;
    else_branch->set_initializer("pads", HostTensor::from_values<int64_t>({4}, {0, 0, 0, padding}));
    else_branch->nodes = {node("Pad", {"x", "pads"}, {"pad_out"})};
    else_branch->outputs = {"pad_out"};
    Node branch = node("If", {"aligned"}, {"y"});
    branch.attributes.push_back({"then_branch", std::shared_ptr<const Graph>(then_branch)});
    branch.attributes.push_back({"else_branch", std::shared_ptr<const Graph>(else_branch)});
    graph.nodes.push_back(branch);
    graph.outputs = {"y"};

    const SimplifyReport report = simplify_graph(graph, {{"x", {2, frames}}});
    EXPECT_EQ(report.inlined_branches, 1u) << "seed " << seed;
    ASSERT_EQ(graph.nodes.size(), 2u) << graph_to_text(graph);
    EXPECT_EQ(graph.nodes[0].op_type, frames % 4 == 0 ? "Relu" : "Pad") << "frames " << frames;
    EXPECT_EQ(graph.nodes[1].op_type, "Identity");
    EXPECT_EQ(*graph.find_value("y")->shape, (Shape{2, frames + padding}));
    EXPECT_EQ(graph.is_initializer("pads"), frames % 4 != 0);
    EXPECT_NO_THROW(graph.validate());
  }
}

// A graph of one node `op_type` named `name` on float32 graph inputs `inputs`, its one output `output`
// the graph's output.
Graph one_node_graph(const char* op_type, const char* name, const std::vector<std::string>& inputs,
                     const char* output) {
  Graph graph;
  graph.inputs = inputs;
  for (const std::string& input : inputs) graph.value(input).dtype = DType::f32;
  Node node;
  node.op_type = op_type;
  node.name = name;
  node.inputs = inputs;
  node.outputs = {output};
  graph.nodes.push_back(node);
  graph.outputs = {output};
  return graph;
}

TEST(GraphSimplify, ContradictionsAreNamed) {
  Graph graph = one_node_graph("Add", "adder", {"a", "b"}, "c");
  try {
    simplify_graph(graph, {{"a", {2, 3}}, {"b", {4, 3}}});
    ADD_FAILURE() << "shapes that do not broadcast were accepted";
  } catch (const ModelError& error) {
    EXPECT_NE(std::string(error.what()).find("adder"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("do not broadcast"), std::string::npos) << error.what();
  }
  EXPECT_THROW(simplify_graph(graph, {{"nope", {1}}}), ModelError);
  graph.value("a").shape = Shape{2, 3};
  EXPECT_THROW(simplify_graph(graph, {{"a", {2, 4}}, {"b", {2, 3}}}), ModelError);
}

// A Conv whose weight has a rank below 2 (a fuzzer finding, fuzz/regressions/conv_weight_rank_0.onnx:
// the default kernel_shape was read from W's dims 2.. before W's rank was checked).
TEST(GraphSimplify, ConvWeightOfTheWrongRankIsNamed) {
  for (const Shape& w : {Shape{}, Shape{3}, Shape{1, 1, 3}}) {
    Graph graph = one_node_graph("Conv", "conv", {"x", "w"}, "y");
    try {
      simplify_graph(graph, {{"x", {1, 1, 5, 5}}, {"w", w}});
      ADD_FAILURE() << "a weight of rank " << w.size() << " was accepted";
    } catch (const ModelError& error) {
      EXPECT_NE(std::string(error.what()).find("weight rank differs"), std::string::npos) << error.what();
    }
  }
}

// The four reference models with their recipe input shapes: every graph output gets the recipe's
// static shape, and the shape arithmetic folds away.
TEST(GraphSimplify, ReferenceModelsInferTheirOutputShapes) {
  const std::optional<fs::path> models = test::reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  test::TemporaryFolder folder;
  for (const char* model : {"htdemucs6", "scnetlargestarrytong", "vr_hp_wind_inst", "mpsenet"}) {
    const std::string name = model;
    const nlohmann::json recipe =
        nlohmann::json::parse(test::read_file_bytes(*models / (name + ".recipe.json")));
    fs::copy_file(*models / (name + ".onnx"), folder.path() / (name + ".onnx"));
    const fs::path weights = folder.path() / recipe["weights"].get<std::string>();
    test::write_file(weights, "");
    fs::resize_file(weights, recipe["total_bytes"].get<uint64_t>());  // sparse: structure only
    Graph graph = load_onnx_model(folder.path() / (name + ".onnx"));
    const size_t nodes_before = graph.nodes.size();
    std::map<std::string, Shape> shapes;
    for (const nlohmann::json& input : recipe["inputs"]) shapes[input["name"]] = input["shape"].get<Shape>();

    const auto start = std::chrono::steady_clock::now();
    const SimplifyReport report = simplify_graph(graph, shapes);
    const double milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::string unknown;
    for (const auto& [op, count] : report.unknown_by_op) unknown += " " + op + " x" + std::to_string(count);
    std::printf("%-22s %4zu -> %4zu nodes (%zu folded, %zu dead) in %.0f ms; outputs not inferred:%s\n",
                model, nodes_before, graph.nodes.size(), report.folded_nodes, report.removed_dead_nodes,
                milliseconds, unknown.empty() ? " none" : unknown.c_str());
    EXPECT_NO_THROW(graph.validate()) << name;
    for (size_t i = 0; i < recipe["outputs"].size(); ++i) {
      const ValueInfo* info = graph.find_value(recipe["outputs"][i]["name"].get<std::string>());
      ASSERT_TRUE(info && info->has_static_shape()) << name << " output " << i;
      EXPECT_EQ(*info->shape, recipe["outputs"][i]["shape"].get<Shape>()) << name;
    }
    // Shape always folds once shapes are static; a ConstantOfShape stays only when its result is
    // larger than max_folded_elements (then its shape input is a constant).
    size_t large_constants = 0;
    for (const Node& node : graph.nodes) {
      EXPECT_NE(node.op_type, "Shape") << name << ": " << node.describe();
      if (node.op_type == "ConstantOfShape") {
        EXPECT_TRUE(graph.is_initializer(node.inputs[0])) << name << ": " << node.describe();
        ++large_constants;
      }
    }
    std::map<std::string, int> remaining;
    for (const Node& node : graph.nodes) remaining[node.op_type]++;
    std::string histogram;
    for (const auto& [op, count] : remaining) histogram += " " + op + " " + std::to_string(count);
    std::printf("    %zu large ConstantOfShape kept as nodes; remaining ops:%s\n", large_constants,
                histogram.c_str());
    EXPECT_EQ(report.nodes_with_unknown_outputs, 0u) << name << ":" << unknown;
  }
}

}  // namespace
}  // namespace onda
