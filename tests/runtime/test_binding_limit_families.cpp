// The convolution and recurrent families under a storage binding limit below their tensors' sizes
// (SessionOptions::max_storage_binding_bytes = 64 KiB, the smallest cap onda accepts), as
// test_binding_limit.cpp does for the other families: the same inputs run in a session with the
// adapter's own limit and in one with the cap, whose kernels must split their work (conv: slices of
// positions, groups, windows of W and of the overlap-add's weight; RNN: chains of time chunks)
// instead of refusing. Every output is compared with the unsplit run and with a float64 reference.
// Poisoning: the capped session first runs on NaN inputs, so its pooled buffers (reused by the real
// run) hold that run's results (NaN for the convs; the RNNs' activations may turn NaN into numbers,
// still not the right ones) wherever a split would fail to write, far from the float64 reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "harness.h"
#include "kernels/conv/conv_geometry.h"
#include "test_conv_reference.h"
#include "test_rnn_reference.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

constexpr uint64_t kFamilySmallBinding = 64 << 10;

double rel_l2_to(std::span<const float> got, std::span<const double> want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

struct Checked {
  std::string name;
  std::vector<double> reference;  // float64, in the output's layout
  bool over_cap = true;           // the output itself exceeds the cap (a state output does not)
};

std::map<std::string, HostTensor> run_with(const onnx::ModelProto& model, const TemporaryFolder& folder,
                                           uint64_t max_binding_bytes,
                                           const std::map<std::string, HostTensor>& inputs,
                                           bool poison_first) {
  const auto path = folder.path() / "families.onnx";
  write_file(path, model.SerializeAsString());
  SessionOptions options;
  options.max_storage_binding_bytes = max_binding_bytes;
  auto session = Session::open(path, options);
  if (poison_first) {
    std::map<std::string, HostTensor> nan_inputs;
    for (const auto& [name, t] : inputs) {
      nan_inputs.emplace(name, HostTensor::from_values<float>(t.shape(), std::vector<float>(t.numel(), NAN)));
    }
    session->run(nan_inputs);
  }
  return session->run(inputs);
}

// Runs `model` uncapped and capped; every checked output must agree with the unsplit run within
// `split_bound` and with its float64 reference within `reference_bound`.
void expect_split_matches(const onnx::ModelProto& model, const std::map<std::string, HostTensor>& inputs,
                          const std::vector<Checked>& outputs, double split_bound, double reference_bound) {
  TemporaryFolder folder;
  const auto normal = run_with(model, folder, 0, inputs, false);
  const auto capped = run_with(model, folder, kFamilySmallBinding, inputs, true);
  for (const Checked& o : outputs) {
    ASSERT_EQ(capped.at(o.name).shape(), normal.at(o.name).shape()) << o.name;
    const auto got = capped.at(o.name).values<float>();
    const auto want = normal.at(o.name).values<float>();
    ASSERT_EQ(got.size(), o.reference.size()) << o.name;
    // The output must exceed the cap, or nothing was split.
    if (o.over_cap) {
      EXPECT_GT(got.size() * sizeof(float), kFamilySmallBinding) << o.name << " fits the cap";
    }
    const std::vector<double> unsplit(want.begin(), want.end());
    const double to_unsplit = rel_l2_to(got, unsplit), to_reference = rel_l2_to(got, o.reference);
    std::printf("%-22s %8zu elements  rel L2 to the unsplit run %.2e, to float64 %.2e (unsplit %.2e)\n",
                o.name.c_str(), got.size(), to_unsplit, to_reference, rel_l2_to(want, o.reference));
    EXPECT_LE(to_unsplit, split_bound) << o.name;
    EXPECT_LE(to_reference, reference_bound) << o.name;
  }
}

// ---- convolutions --------------------------------------------------------------------------------

struct ConvNode {
  std::string name;
  bool transpose = false;
  Shape x, w;
  kernels::conv::ConvAttributes attributes;
  std::vector<float> weight;  // empty: random
};

TEST(BindingLimitFamilies, ConvolutionsSplitTheirWorkUnderASmallBindingLimit) {
  Random random(test_seed());
  std::vector<ConvNode> nodes;
  // Direct path, one group of one batch over the cap: slices of output positions.
  nodes.push_back({"depthwise_1d", false, {1, 4, 20000}, {4, 1, 3}, {}, {}});
  nodes.back().attributes.group = 4;
  nodes.back().attributes.pads = {1, 1};
  nodes.push_back({"grouped_2d", false, {2, 4, 96, 128}, {6, 2, 3, 3}, {}, {}});
  nodes.back().attributes.group = 2;
  nodes.back().attributes.strides = {1, 2};
  nodes.back().attributes.pads = {1, 0, 2, 1};
  // A weight over the cap (W 288 KiB): the GEMM's A in row blocks.
  nodes.push_back({"large_weight", false, {1, 64, 12, 12}, {128, 64, 3, 3}, {}, {}});
  nodes.back().attributes.pads = {1, 1, 1, 1};
  // ConvTranspose with X, W and Y over the cap (implicit / gemm paths fall back to windowed gemm).
  nodes.push_back({"transpose_2d", true, {1, 64, 16, 40}, {64, 96, 2, 2}, {}, {}});
  nodes.back().attributes.strides = {2, 2};
  // ConvTranspose direct (groups) over the cap.
  nodes.push_back({"transpose_grouped", true, {1, 4, 90, 100}, {4, 2, 3, 3}, {}, {}});
  nodes.back().attributes.group = 2;
  nodes.back().attributes.pads = {1, 1, 1, 1};
  // The iSTFT overlap-add with a 1 MiB windowed identity (device-only: checked on the GPU in
  // windows), and the same geometry with a dense [C, 1, C] weight (the check's flag: dense sum).
  constexpr int64_t kFft = 512;
  std::vector<float> identity(kFft * kFft, 0.0f);
  for (int64_t c = 0; c < kFft; ++c) identity[c * kFft + c] = 0.5f - 0.5f * std::cos(2 * M_PI * c / kFft);
  nodes.push_back({"istft_identity", true, {2, kFft, 24}, {kFft, 1, kFft}, {}, identity});
  nodes.back().attributes.strides = {128};
  nodes.back().attributes.pads = {kFft / 2, kFft / 2};
  nodes.push_back({"istft_dense", true, {1, kFft, 6}, {kFft, 1, kFft}, {}, {}});
  nodes.back().attributes.strides = {128};

  onnx::ModelProto model = empty_model();
  onnx::GraphProto* g = model.mutable_graph();
  std::map<std::string, HostTensor> inputs;
  std::vector<Checked> checked;
  for (ConvNode& n : nodes) {
    const auto geometry = n.transpose ? kernels::conv::resolve_conv_transpose(n.x, n.w, n.attributes)
                                      : kernels::conv::resolve_conv(n.x, n.w, n.attributes);
    const std::vector<float> x = random.normal(shape_numel(n.x));
    if (n.weight.empty()) n.weight = random.uniform(shape_numel(n.w), -0.3, 0.3);
    const std::vector<float> bias = random.uniform(geometry.out_channels, -0.5, 0.5);
    add_tensor_value(g->mutable_input(), n.name + "_x", onnx::TensorProto::FLOAT, n.x);
    inputs.emplace(n.name + "_x", HostTensor::from_values<float>(n.x, x));
    add_float_initializer(g, n.name + "_w", n.w, n.weight);
    add_float_initializer(g, n.name + "_b", {geometry.out_channels}, bias);
    auto* node = add_node(g, n.transpose ? "ConvTranspose" : "Conv",
                          {n.name + "_x", n.name + "_w", n.name + "_b"}, {n.name});
    const auto& a = n.attributes;
    if (a.group != 1) add_int_attribute(node, "group", a.group);
    if (!a.strides.empty()) add_ints_attribute(node, "strides", a.strides);
    if (!a.pads.empty()) add_ints_attribute(node, "pads", a.pads);
    add_float_output(g, n.name);
    // The iSTFT nodes' outputs are small: their weight is what exceeds the cap.
    const bool weight_over_cap = n.name.rfind("istft", 0) == 0;
    checked.push_back({n.name, reference_conv(geometry, x, n.weight, bias), !weight_over_cap});
  }
  // The split paths sum in another order than the unsplit ones (another path, K cut in parts): within
  // float rounding of each other, not bit-identical.
  expect_split_matches(model, inputs, checked, 5e-6, 1e-5);
}

// ---- recurrent layers ----------------------------------------------------------------------------

struct RnnNode {
  std::string name;
  kernels::rnn::RnnSpec spec;
  int64_t seq, batch, input;
  bool initial_state = false;
  // Y read only by Transpose(0, 2, 1, 3) -> Reshape [S, B, D x H] -> LeakyRelu, as PyTorch exports a
  // layer and its activation: both folded into the layer (graph/fold_rnn_output_transposes.h,
  // graph/fuse_activations.h), which writes the activated [S, B, D, H].
  bool transpose_y = false;
};

const char* op_of(kernels::rnn::CellType cell) {
  return cell == kernels::rnn::CellType::lstm ? "LSTM" : cell == kernels::rnn::CellType::gru ? "GRU" : "RNN";
}

TEST(BindingLimitFamilies, RecurrentLayersRunInTimeChunksUnderASmallBindingLimit) {
  using kernels::rnn::CellType;
  using kernels::rnn::Direction;
  Random random(test_seed());
  std::vector<RnnNode> nodes(5);
  nodes[0] = {"gru_bidirectional", {}, 24, 16, 16};  // MP-SENet's feed-forward GRUs, smaller
  nodes[0].spec.cell = CellType::gru;
  nodes[0].spec.direction = Direction::bidirectional;
  nodes[0].spec.linear_before_reset = true;
  nodes[1] = {"gru_reverse", {}, 30, 24, 12, true};
  nodes[1].spec.cell = CellType::gru;
  nodes[1].spec.direction = Direction::reverse;
  nodes[2] = {"lstm_layout1", {}, 20, 16, 8, true};
  nodes[2].spec.cell = CellType::lstm;
  nodes[2].spec.direction = Direction::bidirectional;
  nodes[2].spec.layout = 1;
  nodes[3] = {"rnn_forward", {}, 40, 16, 10};
  nodes[3].spec.cell = CellType::rnn;
  nodes[0].spec.hidden_size = 32, nodes[1].spec.hidden_size = 32, nodes[2].spec.hidden_size = 32;
  nodes[3].spec.hidden_size = 32;
  nodes[4] = {"gru_y_transposed", {}, 24, 16, 16, true, true};
  nodes[4].spec = nodes[0].spec;

  onnx::ModelProto model = empty_model();
  onnx::GraphProto* g = model.mutable_graph();
  std::map<std::string, HostTensor> inputs;
  std::vector<Checked> checked;
  for (const RnnNode& n : nodes) {
    const auto& spec = n.spec;
    const int64_t D = spec.num_directions(), H = spec.hidden_size, G = kernels::rnn::gate_count(spec.cell);
    RnnReferenceInputs in;
    in.seq = n.seq, in.batch = n.batch, in.input = n.input;
    const Shape x_shape = spec.layout == 0 ? Shape{n.seq, n.batch, n.input} : Shape{n.batch, n.seq, n.input};
    const Shape state_shape = spec.layout == 0 ? Shape{D, n.batch, H} : Shape{n.batch, D, H};
    in.x = random.normal(shape_numel(x_shape));
    const double bound = 1.0 / std::sqrt(static_cast<double>(H));
    in.w = random.uniform(D * G * H * n.input, -bound, bound);
    in.r = random.uniform(D * G * H * H, -bound, bound);
    in.b = random.uniform(D * 2 * G * H, -bound, bound);
    add_tensor_value(g->mutable_input(), n.name + "_x", onnx::TensorProto::FLOAT, x_shape);
    inputs.emplace(n.name + "_x", HostTensor::from_values<float>(x_shape, in.x));
    add_float_initializer(g, n.name + "_w", {D, G * H, n.input}, in.w);
    add_float_initializer(g, n.name + "_r", {D, G * H, H}, in.r);
    add_float_initializer(g, n.name + "_b", {D, 2 * G * H}, in.b);
    std::vector<std::string> node_inputs = {n.name + "_x", n.name + "_w", n.name + "_r", n.name + "_b"};
    if (n.initial_state) {
      in.h0 = random.uniform(shape_numel(state_shape), -0.5, 0.5);
      add_float_initializer(g, n.name + "_h0", state_shape, in.h0);
      node_inputs.insert(node_inputs.end(), {"", n.name + "_h0"});
      if (spec.cell == CellType::lstm) {
        in.c0 = random.uniform(shape_numel(state_shape), -0.5, 0.5);
        add_float_initializer(g, n.name + "_c0", state_shape, in.c0);
        node_inputs.push_back(n.name + "_c0");
      }
    }
    std::vector<std::string> outputs = {n.name + "_y", n.name + "_y_h"};
    if (spec.cell == CellType::lstm) outputs.push_back(n.name + "_y_c");
    auto* node = add_node(g, op_of(spec.cell), node_inputs, outputs);
    add_int_attribute(node, "hidden_size", H);
    if (spec.layout != 0) add_int_attribute(node, "layout", spec.layout);
    if (spec.linear_before_reset) add_int_attribute(node, "linear_before_reset", 1);
    if (spec.direction != Direction::forward) {
      onnx::AttributeProto* direction = node->add_attribute();
      direction->set_name("direction");
      direction->set_type(onnx::AttributeProto::STRING);
      direction->set_s(spec.direction == Direction::reverse ? "reverse" : "bidirectional");
    }
    const RnnReferenceOutputs ref = rnn_reference(spec, in);
    if (n.transpose_y) {
      add_ints_attribute(add_node(g, "Transpose", {n.name + "_y"}, {n.name + "_yt"}), "perm", {0, 2, 1, 3});
      add_int64_initializer(g, n.name + "_flat_shape", {3}, {n.seq, n.batch, D * H});
      add_node(g, "Reshape", {n.name + "_yt", n.name + "_flat_shape"}, {n.name + "_flat"});
      add_float_attribute(add_node(g, "LeakyRelu", {n.name + "_flat"}, {n.name + "_act"}), "alpha", 0.2f);
      add_float_output(g, n.name + "_act");
      std::vector<double> act(ref.y.size());  // [S, D, B, H] -> [S, B, D, H], then LeakyRelu
      for (int64_t s = 0; s < n.seq; ++s)
        for (int64_t d = 0; d < D; ++d)
          for (int64_t b = 0; b < n.batch; ++b)
            for (int64_t j = 0; j < H; ++j) {
              const double v = ref.y[((s * D + d) * n.batch + b) * H + j];
              act[((s * n.batch + b) * D + d) * H + j] = v >= 0 ? v : 0.2 * v;
            }
      checked.push_back({n.name + "_act", act});
    } else {
      add_float_output(g, n.name + "_y");
      checked.push_back({n.name + "_y", ref.y});
    }
    // Y_h and Y_c (one state each, below the cap): the state the last chunk ended with.
    add_float_output(g, n.name + "_y_h");
    checked.push_back({n.name + "_y_h", ref.y_h, false});
    if (spec.cell == CellType::lstm) {
      add_float_output(g, n.name + "_y_c");
      checked.push_back({n.name + "_y_c", ref.y_c, false});
    }
  }
  expect_split_matches(model, inputs, checked, 1e-6, 1e-5);
}

}  // namespace
}  // namespace onda::test
