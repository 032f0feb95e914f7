// Shape inference, constant folding and dead-node removal: against ONNX's node conformance data
// (inferred output shapes and folded output values must equal the reference outputs), on a
// synthetic shape-arithmetic chain with random input shapes, and on the four reference models
// (every output's inferred shape must be the recipe's).
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <map>

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
  std::vector<HostTensor> outputs;                          // in graph output order
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
      if (name.empty() || std::find(c.graph.inputs.begin(), c.graph.inputs.end(), name) == c.graph.inputs.end()) {
        if (i >= c.graph.inputs.size()) return std::nullopt;
        name = c.graph.inputs[i];
      }
      c.inputs.emplace_back(name, std::move(tensor));
    }
    for (size_t i = 0; i < c.graph.outputs.size(); ++i)
      c.outputs.push_back(read_tensor_proto_file(dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb")));
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
              << shape_to_string(folded->shape()) << ", reference " << dtype_name(c->outputs[i].dtype()) << " "
              << shape_to_string(c->outputs[i].shape());
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
  std::printf("conformance cases: %d; output shapes checked: %d; folded values checked: %d; outputs not inferred: %d\n",
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

}  // namespace
}  // namespace onda
