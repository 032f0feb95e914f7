// A PRelu after an InstanceNormalization runs at the normalization's store (graph/fuse_norm_prelu.h):
// the same values as float64, and the PRelu stays where its slope is not per channel or the
// normalized value is read elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "graph/fuse_norm_prelu.h"
#include "graph/simplify.h"
#include "harness.h"
#include "onnx/onnx_loader.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

constexpr int64_t kPreluChannels = 4, kPreluHeight = 5, kPreluWidth = 300;  // 1500 values a row: the short-row kernel

struct PreluCase {
  const char* name;
  std::vector<int64_t> slope_shape;
  bool expose_norm = false;  // the normalized value is also a graph output
  bool fuses = true;
};

// float64 InstanceNorm of x [1, C, H, W] with per-channel scale and bias, then PRelu with `slope`
// broadcast against [1, C, H, W].
std::vector<double> reference(const std::vector<float>& x, const std::vector<float>& scale, const std::vector<float>& bias,
                              const std::vector<float>& slope, const Shape& slope_shape, std::vector<double>* normed) {
  const int64_t plane = kPreluHeight * kPreluWidth;
  std::vector<double> y(x.size());
  normed->resize(x.size());
  for (int64_t c = 0; c < kPreluChannels; ++c) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < plane; ++i) mean += x[c * plane + i];
    mean /= plane;
    for (int64_t i = 0; i < plane; ++i) var += std::pow(x[c * plane + i] - mean, 2);
    var /= plane;
    for (int64_t i = 0; i < plane; ++i) {
      const double v = (x[c * plane + i] - mean) / std::sqrt(var + 1e-5) * scale[c] + bias[c];
      // The slope's index under broadcasting (its dims right-aligned against [1, C, H, W]).
      const int64_t h = i / kPreluWidth, w = i % kPreluWidth;
      const int64_t full[4] = {0, c, h, w}, dims[4] = {1, kPreluChannels, kPreluHeight, kPreluWidth};
      int64_t index = 0;
      const size_t offset = 4 - slope_shape.size();
      for (size_t d = 0; d < slope_shape.size(); ++d)
        index = index * slope_shape[d] + (slope_shape[d] == 1 ? 0 : full[d + offset] % dims[d + offset]);
      (*normed)[c * plane + i] = v;
      y[c * plane + i] = v >= 0 ? v : v * slope[index];
    }
  }
  return y;
}

TEST(FuseNormPrelu, MatchesFloat64AndFusesPerChannelSlopesOnly) {
  Random r(test_seed());
  const PreluCase cases[] = {
      {"per-channel slope [C, 1, 1]", {kPreluChannels, 1, 1}},
      {"one slope [1]", {1}},
      {"per-channel slope [1, C, 1, 1]", {1, kPreluChannels, 1, 1}},
      {"per-width slope [W]", {kPreluWidth}, false, false},
      {"normalized value also an output", {kPreluChannels, 1, 1}, true, false},
  };
  for (const PreluCase& c : cases) {
    const Shape x_shape = {1, kPreluChannels, kPreluHeight, kPreluWidth};
    const auto x = r.normal(static_cast<size_t>(shape_numel(x_shape)), 1.0, 2.0);
    const auto scale = r.uniform(kPreluChannels, 0.5, 1.5), bias = r.uniform(kPreluChannels, -1, 1);
    const auto slope = r.uniform(static_cast<size_t>(shape_numel(c.slope_shape)), -0.5, 0.8);
    onnx::ModelProto model = empty_model();
    auto* graph = model.mutable_graph();
    add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, x_shape);
    add_float_initializer(graph, "scale", {kPreluChannels}, scale);
    add_float_initializer(graph, "bias", {kPreluChannels}, bias);
    add_float_initializer(graph, "slope", c.slope_shape, slope);
    add_node(graph, "InstanceNormalization", {"x", "scale", "bias"}, {"normed"}, "norm");
    add_node(graph, "PRelu", {"normed", "slope"}, {"y"}, "prelu");
    add_float_output(graph, "y");
    if (c.expose_norm) add_float_output(graph, "normed");

    Graph parsed = parse_onnx_model(model.SerializeAsString(), ".", "norm prelu test model");
    simplify_graph(parsed, {});
    EXPECT_EQ(fuse_norm_prelu(parsed), c.fuses ? 1u : 0u) << c.name;

    TemporaryFolder folder;
    auto session = open_session(model, folder);
    auto outputs = session->run({{"x", HostTensor::from_values<float>(x_shape, x)}});
    std::vector<double> normed;
    const auto expected = reference(x, scale, bias, slope, c.slope_shape, &normed);
    const auto y = outputs.at("y").to_double();
    const double error = rel_l2(std::vector<float>(y.begin(), y.end()), expected);
    std::printf("  %s: rel L2 %.2e, %llu dispatches%s\n", c.name, error,
                static_cast<unsigned long long>(session->last_run().dispatches), c.fuses ? " (fused)" : "");
    EXPECT_LE(error, 1e-6) << c.name;
    if (c.fuses) {
      EXPECT_EQ(session->last_run().dispatches, 1u) << c.name << ": one normalization";
    }
    if (c.expose_norm) {
      const auto n = outputs.at("normed").to_double();
      EXPECT_LE(rel_l2(std::vector<float>(n.begin(), n.end()), normed), 1e-6);
    }
  }
}

}  // namespace
}  // namespace onda::test
