// The ONNX Conv / ConvTranspose node conformance cases (libonnx-testdata) through the op registry,
// by name, with each case's rel L2 printed. Also checks that a bad attribute surfaces as a ModelError
// naming the node.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "gpu/command_recorder.h"
#include "graph/model_error.h"
#include "harness.h"
#include "kernels/conv/conv.h"
#include "onnx/onnx_loader.h"
#include "ops/op_registry.h"
#include "test_conv_reference.h"

namespace onda::test {
namespace {

const std::filesystem::path kConvNodeTests = "/usr/share/libonnx-testdata/data/node";

double rel_l2_host(const HostTensor& got, const HostTensor& want) {
  if (got.shape() != want.shape()) return INFINITY;
  const auto g = got.to_double(), w = want.to_double();
  double num = 0, den = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (!std::isfinite(g[i])) return INFINITY;
    num += (g[i] - w[i]) * (g[i] - w[i]);
    den += w[i] * w[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

// Runs the node of a single-node conformance model through the op registry, the weights (inputs
// after X) given as host values (small initializers) or as GPU tensors (large ones).
HostTensor run_node(const Graph& graph, const std::map<std::string, HostTensor>& feeds,
                    bool weights_on_host) {
  auto& g = gpu();
  const Node& node = graph.nodes.at(0);
  gpu::CommandRecorder recorder(g.context);
  ops::OpContext context{
      {g.context, g.pipelines}, recorder, g.pool, g.pool, graph.opset_version(node.domain), nullptr};
  context.to_device = [&](const ops::Value& v) {
    return v.device.defined()
               ? v.device
               : Tensor::upload(recorder, g.pool, v.host.dtype(), v.host.shape(), v.host.data());
  };
  std::vector<ops::Value> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    ops::Value v;
    if (!node.inputs[i].empty()) {
      v.host = feeds.at(node.inputs[i]);
      if (i == 0 || !weights_on_host) {
        v.device = context.to_device(v);
        v.host = HostTensor();
      }
    }
    inputs.push_back(v);
  }
  const ops::OpEntry* entry = ops::find_op(node.domain, node.op_type, context.opset);
  if (!entry) throw std::runtime_error("not registered: " + node.op_type);
  const auto outputs = entry->record(node, context, inputs);
  recorder.submit_and_wait();
  const Tensor& y = outputs.at(0).device;
  const auto bytes = y.download_bytes(g.context);
  return HostTensor::copy_of(y.dtype(), y.shape(), bytes.data(), bytes.size());
}

// The official cases (IR 3-6 files), loaded and their node recorded through the registry, as Session
// does (ConvSession.OnnxConformanceThroughSession runs them through Session itself).
TEST(ConvOnnx, ConformanceCases) {
  if (!std::filesystem::exists(kConvNodeTests)) GTEST_SKIP() << "libonnx-testdata not installed";
  const char* cases[] = {"test_basic_conv_with_padding",
                         "test_basic_conv_without_padding",
                         "test_conv_with_autopad_same",
                         "test_conv_with_strides_and_asymmetric_padding",
                         "test_conv_with_strides_no_padding",
                         "test_conv_with_strides_padding",
                         "test_convtranspose",
                         "test_convtranspose_1d",
                         "test_convtranspose_3d",
                         "test_convtranspose_autopad_same",
                         "test_convtranspose_dilations",
                         "test_convtranspose_kernel_shape",
                         "test_convtranspose_output_shape",
                         "test_convtranspose_pad",
                         "test_convtranspose_pads",
                         "test_convtranspose_with_kernel"};
  int ran = 0;
  for (const char* name : cases) {
    const auto dir = kConvNodeTests / name;
    if (!std::filesystem::exists(dir / "model.onnx")) continue;
    try {
      const Graph graph = load_onnx_model(dir / "model.onnx");
      std::map<std::string, HostTensor> feeds = graph.initializers;
      for (size_t i = 0; i < graph.inputs.size(); ++i) {
        feeds[graph.inputs[i]] =
            read_tensor_proto_file(dir / "test_data_set_0" / fmt::format("input_{}.pb", i));
      }
      const HostTensor want = read_tensor_proto_file(dir / "test_data_set_0" / "output_0.pb");
      for (const bool host : {true, false}) {
        const double e = rel_l2_host(run_node(graph, feeds, host), want);
        std::printf("  %-46s weights %-6s rel L2 %.3g\n", name, host ? "host" : "device", e);
        EXPECT_LE(e, 1e-6) << name;
      }
      ++ran;
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what();
    }
  }
  EXPECT_EQ(ran, 16);
}

TEST(ConvOnnx, BadAttributeNamesTheNode) {
  auto& g = gpu();
  Node node;
  node.op_type = "Conv";
  node.name = "my_conv";
  node.inputs = {"x", "w"};
  node.outputs = {"y"};
  Attribute group;
  group.name = "group";
  group.value = int64_t{2};
  node.attributes.push_back(group);
  gpu::CommandRecorder recorder(g.context);
  ops::OpContext context{{g.context, g.pipelines}, recorder, g.pool, g.pool, 11, nullptr};
  context.to_device = [&](const ops::Value& v) { return v.device; };
  ops::Value x, w;
  x.device = Tensor::empty(g.pool, DType::f32, {1, 3, 8});
  w.device = Tensor::empty(g.pool, DType::f32, {4, 1, 3});
  const ops::OpEntry* entry = ops::find_op("", "Conv", 11);
  ASSERT_NE(entry, nullptr);
  try {
    entry->record(node, context, {x, w});
    ADD_FAILURE() << "3 channels in 2 groups accepted";
  } catch (const ModelError& e) {
    std::printf("  %s\n", e.what());
    EXPECT_NE(std::string(e.what()).find("my_conv"), std::string::npos) << e.what();
  }
}

// The iSTFT overlap-add as exported: ConvTranspose(frames, windowed identity [n_fft, 1, n_fft],
// strides=[hop]) with the weight a host value (detected by the op) or a GPU tensor (checked by the
// overlap-add path on the GPU); against the dense float64 reference.
TEST(ConvOnnx, WindowedIdentityWeight) {
  Random r(test_seed());
  const int64_t n_fft = 32, hop = 8, frames = 6;
  Node node;
  node.op_type = "ConvTranspose";
  node.name = "istft_ola";
  node.inputs = {"x", "w"};
  node.outputs = {"y"};
  Attribute strides;
  strides.name = "strides";
  strides.value = std::vector<int64_t>{hop};
  node.attributes.push_back(strides);
  const auto x = r.normal(2 * n_fft * frames);
  std::vector<float> w(n_fft * n_fft, 0.0f);
  const auto window = r.uniform(n_fft, 0.0, 1.0);
  for (int64_t k = 0; k < n_fft; ++k) w[k * n_fft + k] = window[k];
  std::map<std::string, HostTensor> feeds = {{"x", HostTensor::from_values<float>({2, n_fft, frames}, x)},
                                             {"w", HostTensor::from_values<float>({n_fft, 1, n_fft}, w)}};
  Graph graph;
  graph.opset_imports.push_back({"", 17});
  graph.nodes.push_back(node);
  kernels::conv::ConvAttributes attributes;
  attributes.strides = {hop};
  const auto geometry =
      kernels::conv::resolve_conv_transpose({2, n_fft, frames}, {n_fft, 1, n_fft}, attributes);
  ASSERT_EQ(kernels::conv::choose_conv_path(geometry, true), kernels::conv::ConvPath::overlap_add);
  const auto ref = reference_conv(geometry, x, w, {});
  for (const bool host : {true, false}) {
    const HostTensor y = run_node(graph, feeds, host);
    const auto got = y.to_double();
    const double err = rel_l2(std::vector<float>(got.begin(), got.end()), ref);
    std::printf("  ConvTranspose windowed identity (%s weight, overlap-add%s): rel L2 %.3g\n",
                host ? "host" : "GPU", host ? "" : " checked on the GPU", err);
    EXPECT_EQ(y.shape(), geometry.output_shape());
    EXPECT_LE(err, 1e-6);
  }
}

}  // namespace
}  // namespace onda::test
