// A zero Pad in front of convolutions goes into their `pads` (graph/fuse_pad_conv.h): the outputs
// equal the float64 convolution of the padded input, and the Pad stays wherever it is not a zero
// padding of the spatial axes that only Convs read.
#include <gtest/gtest.h>

#include <cstdio>

#include "graph/fuse_pad_conv.h"
#include "graph/simplify.h"
#include "harness.h"
#include "onnx/onnx_loader.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

constexpr int64_t kPadChannels = 3, kPadHeight = 9, kPadWidth = 11, kPadOut = 4;

struct PadCase {
  const char* name;
  std::vector<int64_t> pads;  // ONNX layout over [N, C, H, W]: begins, then ends
  float value = 0.0f;
  std::vector<int64_t> conv_pads;  // the Conv's own (H begin, W begin, H end, W end)
  std::vector<int64_t> dilations{1, 1};
  bool second_conv = false;  // another Conv (3 x 1 kernel) reads the Pad too
  bool expose_pad = false;   // the padded value is also a graph output
  bool fuses = true;
};

// float64 Conv2d (no bias) of x padded by `pads` with `value`, then by the conv's own zero pads.
std::vector<double> reference(const PadCase& c, const std::vector<float>& x, const std::vector<float>& w, int64_t kh,
                              int64_t kw, Shape* out_shape) {
  const int64_t top = c.pads[2] + c.conv_pads[0], left = c.pads[3] + c.conv_pads[1];
  const int64_t ph = kPadHeight + c.pads[2] + c.pads[6], pw = kPadWidth + c.pads[3] + c.pads[7];
  const int64_t hh = ph + c.conv_pads[0] + c.conv_pads[2], ww = pw + c.conv_pads[1] + c.conv_pads[3];
  const int64_t oh = hh - c.dilations[0] * (kh - 1), ow = ww - c.dilations[1] * (kw - 1);
  *out_shape = {1, kPadOut, oh, ow};
  auto at = [&](int64_t ch, int64_t i, int64_t j) -> double {
    // (i, j) in the conv's padded frame: outside the Pad's frame is the conv's zero, inside the Pad's
    // frame but outside x is the Pad's value.
    const int64_t pi = i - c.conv_pads[0], pj = j - c.conv_pads[1];
    if (pi < 0 || pj < 0 || pi >= ph || pj >= pw) return 0.0;
    const int64_t xi = i - top, xj = j - left;
    if (xi < 0 || xj < 0 || xi >= kPadHeight || xj >= kPadWidth) return c.value;
    return x[static_cast<size_t>((ch * kPadHeight + xi) * kPadWidth + xj)];
  };
  std::vector<double> y(static_cast<size_t>(kPadOut * oh * ow));
  for (int64_t o = 0; o < kPadOut; ++o)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double sum = 0;
        for (int64_t ch = 0; ch < kPadChannels; ++ch)
          for (int64_t a = 0; a < kh; ++a)
            for (int64_t b = 0; b < kw; ++b)
              sum += at(ch, i + a * c.dilations[0], j + b * c.dilations[1]) *
                     w[static_cast<size_t>(((o * kPadChannels + ch) * kh + a) * kw + b)];
        y[static_cast<size_t>((o * oh + i) * ow + j)] = sum;
      }
  return y;
}

onnx::ModelProto pad_conv_model(const PadCase& c, const std::vector<float>& w, const std::vector<float>& w2) {
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, kPadChannels, kPadHeight, kPadWidth});
  add_int64_initializer(graph, "pads", {8}, c.pads);
  add_float_initializer(graph, "value", {}, {c.value});
  add_node(graph, "Pad", {"x", "pads", "value"}, {"padded"}, "pad");
  add_float_initializer(graph, "w", {kPadOut, kPadChannels, 2, 3}, w);
  auto* conv = add_node(graph, "Conv", {"padded", "w"}, {"y"}, "conv");
  add_ints_attribute(conv, "pads", c.conv_pads);
  add_ints_attribute(conv, "dilations", c.dilations);
  add_float_output(graph, "y");
  if (c.second_conv) {
    add_float_initializer(graph, "w2", {kPadOut, kPadChannels, 3, 1}, w2);
    add_node(graph, "Conv", {"padded", "w2"}, {"y2"}, "conv2");
    add_float_output(graph, "y2");
  }
  if (c.expose_pad) add_float_output(graph, "padded");
  return model;
}

TEST(FusePadConv, MatchesFloat64AndFusesOnlyZeroSpatialPads) {
  Random r(test_seed());
  const PadCase cases[] = {
      {"causal time pad, dilated", {0, 0, 8, 1, 0, 0, 0, 1}, 0.0f, {0, 0, 0, 0}, {4, 1}},
      {"pad on top of the conv's own", {0, 0, 1, 0, 0, 0, 2, 3}, 0.0f, {1, 1, 0, 2}},
      {"read by two convs", {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, {0, 0, 0, 0}, {1, 1}, true},
      {"non-zero value", {0, 0, 1, 1, 0, 0, 1, 1}, 0.5f, {0, 0, 0, 0}, {1, 1}, false, false, false},
      {"channel padding", {0, 1, 1, 1, 0, 0, 1, 1}, 0.0f, {0, 0, 0, 0}, {1, 1}, false, false, false},
      {"padded value is an output", {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, {0, 0, 0, 0}, {1, 1}, false, true, false},
  };
  for (const PadCase& c : cases) {
    const auto x = r.normal(static_cast<size_t>(kPadChannels * kPadHeight * kPadWidth));
    const auto w = r.normal(static_cast<size_t>(kPadOut * kPadChannels * 6)), w2 = r.normal(static_cast<size_t>(kPadOut * kPadChannels * 3));
    const onnx::ModelProto model = pad_conv_model(c, w, w2);

    Graph graph = parse_onnx_model(model.SerializeAsString(), ".", "pad conv test model");
    simplify_graph(graph, {});
    EXPECT_EQ(fuse_pad_into_conv(graph), c.fuses ? 1u : 0u) << c.name;
    size_t pads_left = 0;
    for (const Node& node : graph.nodes) pads_left += node.op_type == "Pad";
    EXPECT_EQ(pads_left, c.fuses ? 0u : 1u) << c.name;
    if (c.pads[1] != 0) continue;  // channel padding: only that it stays

    TemporaryFolder folder;
    auto session = open_session(model, folder);
    auto outputs = session->run({{"x", HostTensor::from_values<float>({1, kPadChannels, kPadHeight, kPadWidth}, x)}});
    Shape shape;
    const auto expected = reference(c, x, w, 2, 3, &shape);
    EXPECT_EQ(outputs.at("y").shape(), shape) << c.name;
    const auto y = outputs.at("y").to_double();
    const double error = rel_l2(std::vector<float>(y.begin(), y.end()), expected);
    std::printf("  %s: rel L2 %.2e%s\n", c.name, error, c.fuses ? " (fused)" : "");
    EXPECT_LE(error, 1e-6) << c.name;
    if (c.second_conv) {
      PadCase second = c;
      second.dilations = {1, 1};
      Shape shape2;
      const auto expected2 = reference(second, x, w2, 3, 1, &shape2);
      const auto y2 = outputs.at("y2").to_double();
      EXPECT_EQ(outputs.at("y2").shape(), shape2);
      EXPECT_LE(rel_l2(std::vector<float>(y2.begin(), y2.end()), expected2), 1e-6) << c.name << ", second conv";
    }
  }
}

// Opset 10's Pad holds its amounts and value as attributes.
TEST(FusePadConv, Opset10AttributesFuseToo) {
  Random r(test_seed());
  const PadCase c{"opset 10", {0, 0, 2, 1, 0, 0, 0, 1}, 0.0f, {0, 0, 0, 0}};
  const auto x = r.normal(static_cast<size_t>(kPadChannels * kPadHeight * kPadWidth));
  const auto w = r.normal(static_cast<size_t>(kPadOut * kPadChannels * 6));
  onnx::ModelProto model = empty_model();
  model.mutable_opset_import(0)->set_version(10);
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, kPadChannels, kPadHeight, kPadWidth});
  add_ints_attribute(add_node(graph, "Pad", {"x"}, {"padded"}, "pad"), "pads", c.pads);
  add_float_initializer(graph, "w", {kPadOut, kPadChannels, 2, 3}, w);
  add_node(graph, "Conv", {"padded", "w"}, {"y"}, "conv");
  add_float_output(graph, "y");
  Graph parsed = parse_onnx_model(model.SerializeAsString(), ".", "opset 10 pad conv");
  simplify_graph(parsed, {});
  EXPECT_EQ(fuse_pad_into_conv(parsed), 1u);
  TemporaryFolder folder;
  auto session = open_session(model, folder);
  const auto y = session->run({{"x", HostTensor::from_values<float>({1, kPadChannels, kPadHeight, kPadWidth}, x)}}).at("y").to_double();
  Shape shape;
  EXPECT_LE(rel_l2(std::vector<float>(y.begin(), y.end()), reference(c, x, w, 2, 3, &shape)), 1e-6);
}

}  // namespace
}  // namespace onda::test
