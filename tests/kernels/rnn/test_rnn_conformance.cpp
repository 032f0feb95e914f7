// ONNX's recurrent node tests (test_lstm_*, test_gru_*, test_rnn_*, test_simple_rnn_*) through the
// public Session API, each named with its rel L2 (the general conformance runner runs them too,
// silently): asserts that every one of them is found, runs and matches.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "graph/model_error.h"
#include "onda/session.h"
#include "onnx/onnx_loader.h"
#include "test_onnx_support.h"

namespace onda::test {
namespace {

double rel_l2_of(const HostTensor& got, const HostTensor& want) {
  if (got.shape() != want.shape()) return INFINITY;
  const auto g = got.to_double(), w = want.to_double();
  double num = 0, den = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    num += (g[i] - w[i]) * (g[i] - w[i]);
    den += w[i] * w[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

TEST(RnnConformance, OnnxRecurrentNodeTests) {
  const auto root = onnx_node_tests_dir();
  if (!root) GTEST_SKIP() << "libonnx-testdata not installed";
  int ran = 0;
  for (const auto& entry : std::filesystem::directory_iterator(*root)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("test_lstm", 0) != 0 && name.rfind("test_gru", 0) != 0 && name.rfind("test_rnn", 0) != 0 &&
        name.rfind("test_simple_rnn", 0) != 0) {
      continue;
    }
    ++ran;
    auto session = Session::open(entry.path() / "model.onnx");
    const auto data = entry.path() / "test_data_set_0";
    std::map<std::string, HostTensor> inputs;
    for (size_t i = 0; i < session->inputs().size(); ++i) {
      inputs[session->inputs()[i].name] = read_tensor_proto_file(data / fmt::format("input_{}.pb", i));
    }
    const auto outputs = session->run(inputs);
    std::string report;
    for (size_t i = 0; i < session->outputs().size(); ++i) {
      const auto path = data / fmt::format("output_{}.pb", i);
      if (!std::filesystem::exists(path)) continue;
      const double e = rel_l2_of(outputs.at(session->outputs()[i].name), read_tensor_proto_file(path));
      report += fmt::format(" out{}={:.2e}", i, e);
      EXPECT_LE(e, 1e-5) << name << " output " << i;
    }
    std::printf("  %s:%s\n", name.c_str(), report.c_str());
  }
  EXPECT_GE(ran, 12);
}

// An LSTM node "lstm_node" with X [2, 1, 3], W [1, 8, 3], R [1, 8, r_hidden] as graph inputs; running
// it must throw a ModelError that names the node and `what`.
void expect_model_error(const std::string& attribute, const std::string& value, int64_t r_hidden,
                        const std::string& what) {
  TemporaryFolder folder;
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "X", onnx::TensorProto::FLOAT, {2, 1, 3});
  add_tensor_value(graph->mutable_input(), "W", onnx::TensorProto::FLOAT, {1, 8, 3});
  add_tensor_value(graph->mutable_input(), "R", onnx::TensorProto::FLOAT, {1, 8, r_hidden});
  add_tensor_value(graph->mutable_output(), "Y", onnx::TensorProto::FLOAT, {2, 1, 1, 2});
  auto* node = add_node(graph, "LSTM", {"X", "W", "R"}, {"Y"}, "lstm_node");
  auto* hidden = node->add_attribute();
  hidden->set_name("hidden_size");
  hidden->set_type(onnx::AttributeProto::INT);
  hidden->set_i(2);
  if (!attribute.empty()) {
    auto* a = node->add_attribute();
    a->set_name(attribute);
    if (attribute == "activations") {
      a->set_type(onnx::AttributeProto::STRINGS);
      for (int i = 0; i < 3; ++i) a->add_strings(value);
    } else {
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(value);
    }
  }
  const auto path = folder.path() / "lstm.onnx";
  write_file(path, model.SerializeAsString());
  std::map<std::string, HostTensor> inputs;
  inputs["X"] = HostTensor::from_double(DType::f32, {2, 1, 3}, std::vector<double>(6, 0.5));
  inputs["W"] = HostTensor::from_double(DType::f32, {1, 8, 3}, std::vector<double>(24, 0.1));
  inputs["R"] = HostTensor::from_double(DType::f32, {1, 8, r_hidden}, std::vector<double>(8 * r_hidden, 0.1));
  try {
    Session::open(path)->run(inputs);
    ADD_FAILURE() << "no error for " << what;
  } catch (const ModelError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("lstm_node"), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
    std::printf("  %s\n", message.c_str());
  }
}

TEST(RnnConformance, InvalidNodesNameTheNode) {
  expect_model_error("direction", "sideways", 2, "direction");
  expect_model_error("activations", "Swish", 2, "Swish");
  expect_model_error("", "", 3, "R");  // R [1, 8, 3] against hidden_size 2
}

}  // namespace
}  // namespace onda::test
