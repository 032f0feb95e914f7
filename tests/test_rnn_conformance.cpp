// ONNX's recurrent node tests (test_lstm_*, test_gru_*, test_rnn_*, test_simple_rnn_*) through the
// public Session API, each named with its rel L2 (the general conformance runner runs them too,
// silently): asserts that every one of them is found, runs and matches.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

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

}  // namespace
}  // namespace onda::test
