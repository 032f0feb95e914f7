// The four reference audio models (shared/models, weight-stripped): without their weights file the
// loader names the missing file; with a weights file of the recipe's size every graph loads with the
// node and initializer counts of the README; with mpsenet's weights materialized by materialize.py,
// every external tensor is the recipe's slice of the file.
#include <chrono>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "graph/model_error.h"
#include "graph/op_coverage.h"
#include "harness.h"
#include "onnx/onnx_loader.h"
#include "test_onnx_support.h"

namespace onda {
namespace {

namespace fs = std::filesystem;

struct ReferenceModel {
  const char* name;
  size_t nodes_in_file;   // README "nodes", Constant nodes included
  size_t constant_nodes;  // README "Constant"
  size_t inline_initializers;
  size_t external_tensors;
};

// From shared/models/README.md.
const ReferenceModel kReferenceModels[] = {
    {"htdemucs6", 3464, 1020, 181, 113},
    {"scnetlargestarrytong", 2461, 847, 145, 91},
    {"vr_hp_wind_inst", 636, 125, 37, 105},
    {"mpsenet", 1624, 508, 52, 47},
};

nlohmann::json read_recipe(const fs::path& path) {
  return nlohmann::json::parse(test::read_file_bytes(path));
}

DType recipe_dtype(const std::string& name) {
  for (DType dtype : {DType::f32, DType::f16, DType::i32, DType::i64, DType::u8, DType::boolean})
    if (dtype_name(dtype) == name) return dtype;
  throw std::runtime_error("recipe dtype " + name);
}

// Every recipe tensor is an initializer of the recipe's dtype and shape.
void expect_recipe_tensors(const Graph& graph, const nlohmann::json& recipe, const std::string& model) {
  for (const nlohmann::json& entry : recipe["tensors"]) {
    const std::string name = entry["name"];
    const HostTensor* tensor = graph.find_initializer(name);
    ASSERT_TRUE(tensor) << model << ": no initializer " << name;
    EXPECT_EQ(tensor->dtype(), recipe_dtype(entry["dtype"])) << model << ": " << name;
    EXPECT_EQ(tensor->shape(), entry["shape"].get<Shape>()) << model << ": " << name;
    EXPECT_EQ(tensor->byte_size(), entry["length"].get<size_t>()) << model << ": " << name;
  }
}

TEST(OnnxReferenceModels, MissingWeightsNameTheFile) {
  const std::optional<fs::path> models = test::reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  test::TemporaryFolder folder;
  for (const ReferenceModel& model : kReferenceModels) {
    const fs::path copy = folder.path() / (std::string(model.name) + ".onnx");
    fs::copy_file(*models / copy.filename(), copy);
    try {
      load_onnx_model(copy);
      ADD_FAILURE() << model.name << " loaded without its weights";
    } catch (const ModelError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("missing external data"), std::string::npos) << message;
      EXPECT_NE(message.find(std::string(model.name) + ".weights.bin"), std::string::npos) << message;
      if (&model == &kReferenceModels[3]) std::printf("%s\n", message.c_str());
    }
  }
}

// A sparse zero-filled weights file of the recipe's size: structure and counts, no real weights.
TEST(OnnxReferenceModels, EveryGraphLoadsWithCounts) {
  const std::optional<fs::path> models = test::reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  test::TemporaryFolder folder;
  for (const ReferenceModel& model : kReferenceModels) {
    const std::string name = model.name;
    const nlohmann::json recipe = read_recipe(*models / (name + ".recipe.json"));
    fs::copy_file(*models / (name + ".onnx"), folder.path() / (name + ".onnx"));
    const fs::path weights = folder.path() / recipe["weights"].get<std::string>();
    test::write_file(weights, "");
    fs::resize_file(weights, recipe["total_bytes"].get<uint64_t>());

    const auto start = std::chrono::steady_clock::now();
    const Graph graph = load_onnx_model(folder.path() / (name + ".onnx"));
    const double milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-22s %5zu nodes, %4zu initializers, %.1f MB, opset %lld, loaded in %.0f ms\n", model.name,
                graph.nodes.size(), graph.initializers.size(), graph.initializer_bytes() / 1e6,
                static_cast<long long>(graph.opset_version("")), milliseconds);
    EXPECT_EQ(graph.nodes.size(), model.nodes_in_file - model.constant_nodes) << name;
    EXPECT_EQ(graph.initializers.size(),
              model.inline_initializers + model.external_tensors + model.constant_nodes)
        << name;
    EXPECT_EQ(recipe["tensors"].size(), model.external_tensors) << name;
    EXPECT_EQ(graph.opset_version(""), 17) << name;
    expect_recipe_tensors(graph, recipe, name);
    ASSERT_EQ(graph.inputs.size(), recipe["inputs"].size()) << name;
    for (size_t i = 0; i < graph.inputs.size(); ++i) {
      EXPECT_EQ(graph.inputs[i], recipe["inputs"][i]["name"]) << name;
      EXPECT_EQ(graph.find_value(graph.inputs[i])->shape, recipe["inputs"][i]["shape"].get<Shape>()) << name;
    }
    ASSERT_EQ(graph.outputs.size(), recipe["outputs"].size()) << name;
    for (size_t i = 0; i < graph.outputs.size(); ++i)
      EXPECT_EQ(graph.outputs[i], recipe["outputs"][i]["name"]);
  }
}

TEST(OnnxReferenceModels, MpsenetMaterializedWeights) {
  const std::optional<fs::path> models = test::reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  const std::optional<std::string> python = test::python_with_numpy();
  if (!python) GTEST_SKIP() << "no python3 with numpy to run materialize.py (apt-get install python3-numpy)";
  test::TemporaryFolder folder;
  for (const char* file : {"mpsenet.onnx", "mpsenet.recipe.json"})
    fs::copy_file(*models / file, folder.path() / file);
  const std::string command = *python + " " + (*models / "materialize.py").string() + " " +
                              (folder.path() / "mpsenet.recipe.json").string() + " >/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  const Graph graph = load_onnx_model(folder.path() / "mpsenet.onnx");
  const nlohmann::json recipe = read_recipe(folder.path() / "mpsenet.recipe.json");
  expect_recipe_tensors(graph, recipe, "mpsenet");
  // Each external tensor holds its recipe slice of the weights file.
  const std::string weights = test::read_file_bytes(folder.path() / "mpsenet.weights.bin");
  ASSERT_EQ(weights.size(), recipe["total_bytes"].get<size_t>());
  size_t external_bytes = 0;
  for (const nlohmann::json& entry : recipe["tensors"]) {
    const HostTensor& tensor = *graph.find_initializer(entry["name"]);
    const size_t offset = entry["offset"], length = entry["length"];
    ASSERT_LE(offset + length, weights.size());
    EXPECT_EQ(std::memcmp(tensor.data(), weights.data() + offset, length), 0) << entry["name"];
    // Uniform tensors stay inside the recipe's bounds: the bytes are floats of the right tensor.
    if (entry["init"]["kind"] == "uniform") {
      const std::vector<double> values = tensor.to_double();
      const double low = entry["init"]["low"], high = entry["init"]["high"];
      for (double v : values) ASSERT_TRUE(v >= low - 1e-6 && v <= high + 1e-6) << entry["name"] << " " << v;
    }
    external_bytes += length;
  }
  EXPECT_EQ(external_bytes, recipe["total_bytes"].get<size_t>());

  // The README's op counts, and the unsupported-op report for a runtime without GRU and Atan.
  std::map<std::string, int> histogram;
  std::set<std::pair<std::string, std::string>> supported;
  for (const Node& node : graph.nodes) {
    histogram[node.op_type]++;
    if (node.op_type != "GRU" && node.op_type != "Atan") supported.emplace(node.domain, node.op_type);
  }
  EXPECT_EQ(histogram["GRU"], 8);
  EXPECT_EQ(histogram["Conv"], 19);
  EXPECT_EQ(histogram["MatMul"], 32);
  EXPECT_EQ(histogram["LayerNormalization"], 24);
  EXPECT_EQ(histogram["Constant"], 0);
  const std::vector<UnsupportedOp> missing = find_unsupported_ops(graph, supported);
  EXPECT_EQ(missing.size(), 9u);
  std::printf("%s\n", describe_unsupported_ops(missing, 3).c_str());
}

}  // namespace
}  // namespace onda
