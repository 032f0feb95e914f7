// Inputs the model-loader fuzz target (fuzz/fuzz_model_loader.cpp) found crashing, kept in
// fuzz/regressions/ once fixed: each must now load or fail with a ModelError, through the same path
// the fuzzer takes. Each fix also has a test on a model built for it, with the expected message.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "../../fuzz/load_and_plan.h"
#include "graph/model_error.h"
#include "test_onnx_support.h"
#include "test_paths.h"

namespace onda::test {
namespace {

// fuzz/regressions: ONDA_FUZZ_REGRESSIONS when set, else in the checkout above the test binary
// (test_paths.h), so that a build copied to another machine with its checkout finds its own; empty
// when neither exists.
fs::path regressions_dir() {
  if (const char* env = std::getenv("ONDA_FUZZ_REGRESSIONS"); env && *env) return env;
  const fs::path checkout = checkout_dir();
  std::error_code ignored;
  if (!checkout.empty() && fs::is_directory(checkout / "fuzz/regressions", ignored))
    return checkout / "fuzz/regressions";
  return {};
}

TEST(FuzzRegressions, EveryFindingLoadsOrIsAModelError) {
  const fs::path dir = regressions_dir();
  ASSERT_FALSE(dir.empty()) << "fuzz/regressions not found above the test binary; set ONDA_FUZZ_REGRESSIONS";
  int replayed = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string bytes = read_file_bytes(entry.path());
    try {
      fuzz::load_and_plan(bytes);
      std::printf("%s: loads\n", entry.path().filename().c_str());
    } catch (const ModelError& error) {
      std::printf("%s: %s\n", entry.path().filename().c_str(), error.what());
    }
    ++replayed;
  }
  EXPECT_GT(replayed, 0);
}

std::string load_and_plan_error(const onnx::ModelProto& model) {
  try {
    fuzz::load_and_plan(model.SerializeAsString());
  } catch (const ModelError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no ModelError";
  return "";
}

// Found by the fuzzer: a Shape node whose only output is omitted indexed it while folding.
TEST(FuzzRegressions, ShapeWithoutOutputIsNamed) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  add_node(graph, "Shape", {"x"}, {""}, "lost_shape");
  add_node(graph, "Relu", {"x"}, {"y"}, "relu");
  add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {2, 3});
  const std::string message = load_and_plan_error(model);
  EXPECT_NE(message.find("Shape 'lost_shape' must have one output"), std::string::npos) << message;
}

// Found by the fuzzer: shape rules wrote output 0 of a node that has no outputs at all.
TEST(FuzzRegressions, NodeWithoutOutputsIsNamed) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  add_node(graph, "Clip", {"x"}, {}, "silent_clip");
  add_node(graph, "Relu", {"x"}, {"y"}, "relu");
  add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {2, 3});
  const std::string message = load_and_plan_error(model);
  EXPECT_NE(message.find("Clip 'silent_clip' has no outputs"), std::string::npos) << message;
}

// Found by the fuzzer: folding a Mod of an empty int64 constant whose dims multiply past int64
// overflowed the source strides of the broadcast (undefined behaviour) before it noticed nothing was
// there.
TEST(FuzzRegressions, EmptyConstantWithOverflowingDimsIsNamed) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  for (const auto& [name, dims] : {std::pair<const char*, std::vector<int64_t>>{"a", {0, int64_t{1} << 61, 121}},
                                   std::pair<const char*, std::vector<int64_t>>{"b", {1}}}) {
    onnx::TensorProto* t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    if (dims.size() == 1) t->add_int64_data(3);
  }
  add_node(graph, "Mod", {"a", "b"}, {"y"}, "mod");
  add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::INT64, {0, int64_t{1} << 61, 121});
  const std::string message = load_and_plan_error(model);
  EXPECT_NE(message.find("overflows"), std::string::npos) << message;
  EXPECT_NE(message.find("Mod 'mod'"), std::string::npos) << message;
}

}  // namespace
}  // namespace onda::test
