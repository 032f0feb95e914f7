// Conv / ConvTranspose through the public Session: each node plans once (conv::ConvPlan, no plan
// constructed in the second run) and prepares constant weights once (uploaded, prepacked for the
// GEMM, the windowed identity's diagonal extracted), so a second run records fewer dispatches (no
// pack, no GPU identity check) and gives identical outputs, both matching a float64 reference; and
// the ONNX conformance cases (IR 3-6 files) run by Session.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "harness.h"
#include "kernels/conv/conv_geometry.h"
#include "kernels/conv/conv_plan.h"
#include "onda/session.h"
#include "onnx/onnx_loader.h"
#include "test_conv_reference.h"
#include "test_onnx_support.h"

namespace onda::test {
namespace {

// An initializer of `dtype` (f32 or f16, rounded to nearest even) holding `values`; returns the
// values it really holds.
std::vector<float> add_initializer(onnx::GraphProto* graph, const std::string& name, const Shape& shape,
                                   const std::vector<float>& values, DType dtype) {
  const HostTensor t = HostTensor::from_double(dtype, shape, std::vector<double>(values.begin(), values.end()));
  auto* proto = graph->add_initializer();
  proto->set_name(name);
  proto->set_data_type(dtype == DType::f16 ? onnx::TensorProto::FLOAT16 : onnx::TensorProto::FLOAT);
  for (int64_t d : shape) proto->add_dims(d);
  proto->set_raw_data(std::string(reinterpret_cast<const char*>(t.data()), t.numel() * host_element_size(dtype)));
  const auto held = t.to_double();
  return {held.begin(), held.end()};
}

void add_ints(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

struct SessionCase {
  std::string what;
  bool transpose;
  Shape x, w;
  int64_t stride;
  bool bias;
  bool identity;           // ConvTranspose weight [C, 1, C] = diag(window)
  int64_t extra_dispatches;  // recorded in the first run only (pack, GPU identity check)
};

// One Conv / ConvTranspose node with initializer weights, run twice through a Session.
void run_case(const SessionCase& c, DType dtype) {
  Random r(test_seed());
  const HostTensor x_host = HostTensor::from_double(dtype, c.x, [&] {
    const auto v = r.normal(element_count(c.x));
    return std::vector<double>(v.begin(), v.end());
  }());
  const auto x_held = x_host.to_double();
  const std::vector<float> x(x_held.begin(), x_held.end());
  std::vector<float> w;
  if (c.identity) {
    const int64_t n = c.w[0];
    w.assign(n * n, 0.0f);
    const auto window = r.uniform(n, 0.1, 1.0);
    for (int64_t k = 0; k < n; ++k) w[k * n + k] = window[k];
  } else {
    w = r.uniform(element_count(c.w), -0.5, 0.5);
  }
  kernels::conv::ConvAttributes a;
  a.strides = std::vector<int64_t>(c.x.size() - 2, c.stride);
  const auto g = c.transpose ? kernels::conv::resolve_conv_transpose(c.x, c.w, a)
                             : kernels::conv::resolve_conv(c.x, c.w, a);
  std::vector<float> bias = c.bias ? r.normal(g.out_channels) : std::vector<float>{};

  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  const int elem_type = dtype == DType::f16 ? onnx::TensorProto::FLOAT16 : onnx::TensorProto::FLOAT;
  add_tensor_value(graph->mutable_input(), "x", elem_type, c.x);
  add_tensor_value(graph->mutable_output(), "y", elem_type, g.output_shape());
  w = add_initializer(graph, "w", c.w, w, dtype);
  std::vector<std::string> inputs = {"x", "w"};
  if (c.bias) {
    bias = add_initializer(graph, "b", {g.out_channels}, bias, dtype);
    inputs.push_back("b");
  }
  auto* node = add_node(graph, c.transpose ? "ConvTranspose" : "Conv", inputs, {"y"}, "conv_node");
  add_ints(node, "strides", a.strides);
  TemporaryFolder folder;
  write_file(folder.path() / "model.onnx", model.SerializeAsString());
  auto session = Session::open(folder.path() / "model.onnx");

  const std::vector<double> ref = reference_conv(g, x, w, bias);
  const std::map<std::string, HostTensor> feeds = {{"x", x_host}};
  const double bound = dtype == DType::f16 ? 1e-3 : 1e-6;
  std::vector<float> outputs[2];
  uint64_t dispatches[2] = {};
  int64_t plans[2] = {};
  for (int run = 0; run < 2; ++run) {
    const int64_t plans_before = kernels::conv::ConvPlan::constructed();
    const HostTensor y = session->run(feeds).at("y");
    plans[run] = kernels::conv::ConvPlan::constructed() - plans_before;
    ASSERT_EQ(y.shape(), g.output_shape()) << c.what;
    const auto values = y.to_double();
    outputs[run].assign(values.begin(), values.end());
    dispatches[run] = session->last_run().dispatches;
    const double e = rel_l2(outputs[run], ref);
    std::printf("  %-52s %s run %d: %3llu dispatches, rel L2 %.3g\n", c.what.c_str(), dtype_name(dtype).data(),
                run + 1, static_cast<unsigned long long>(dispatches[run]), e);
    EXPECT_LE(e, bound) << c.what << " " << dtype_name(dtype) << " run " << run + 1;
  }
  EXPECT_EQ(std::memcmp(outputs[0].data(), outputs[1].data(), outputs[0].size() * sizeof(float)), 0)
      << c.what << ": the second run differs from the first";
  EXPECT_EQ(dispatches[0], dispatches[1] + c.extra_dispatches) << c.what;
  // The node plans in its first run and records that plan again in the second.
  EXPECT_GE(plans[0], 1) << c.what;
  EXPECT_EQ(plans[1], 0) << c.what << ": the second run planned the conv again";
}

TEST(ConvSession, ConstantWeightsPreparedOnce) {
  const SessionCase cases[] = {
      // Dense ConvTranspose: on the per-phase implicit GEMM (8 or more output channels) or on GEMM +
      // col2im (fewer); either way the weight is packed in the first run only.
      {"ConvTranspose 1-D dense (host weight, implicit, packed once)", true, {2, 24, 9}, {24, 8, 4}, 2, true, false,
       1},
      {"ConvTranspose 2-D dense (GPU weight, implicit, packed once)", true, {1, 64, 5, 6}, {64, 40, 6, 5}, 2, false,
       false, 1},
      {"ConvTranspose 1-D dense (host weight, gemm, packed once)", true, {2, 24, 9}, {24, 4, 4}, 2, true, false, 1},
      // The iSTFT overlap-add: a host weight's diagonal is found on the host (no dispatch); a GPU
      // weight's is checked on the GPU in the first run only.
      {"ConvTranspose windowed identity (host weight)", true, {2, 64, 7}, {64, 1, 64}, 16, false, true, 0},
      {"ConvTranspose windowed identity (GPU weight, checked)", true, {2, 512, 5}, {512, 1, 512}, 128, true, true,
       1},
      // Conv: weights uploaded once; the implicit GEMM repacks W in the first run only, the direct
      // path reads it as it is.
      {"Conv 1-D (implicit gemm, packed once)", false, {2, 16, 40}, {32, 16, 3}, 2, true, false, 1},
      {"Conv 2-D (direct)", false, {1, 3, 12, 10}, {4, 3, 3, 3}, 1, true, false, 0},
  };
  for (DType dtype : {DType::f32, DType::f16})
    for (const auto& c : cases) run_case(c, dtype);
}

// A Conv whose large initializer weight (uploaded by the walk, not a host constant) the implicit GEMM
// packs in the first run: the walk then drops the upload (the packed form is all the node reads), so
// the weights held from then on are the packed form alone, and later runs (planned, replayed) pass
// the weight without uploading it and give the first run's outputs bit for bit; an input of another
// length (a new plan, whose node packs W again from a new upload) still matches the reference.
TEST(ConvSession, PackedWeightReplacesItsUpload) {
  Random r(test_seed());
  const Shape x_shape = {1, 64, 40}, w_shape = {64, 64, 17};  // 69632 weights: above the host limit
  const auto x = r.normal(element_count(x_shape));
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  auto* x_info = add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, x_shape);
  x_info->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2)->set_dim_param("T");
  const std::vector<float> w =
      add_initializer(graph, "w", w_shape, r.uniform(element_count(w_shape), -0.2, 0.2), DType::f32);
  add_node(graph, "Conv", {"x", "w"}, {"y"}, "conv_node");
  const auto g = kernels::conv::resolve_conv(x_shape, w_shape, {});
  auto* y_info = add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, g.output_shape());
  y_info->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2)->set_dim_param("T'");
  TemporaryFolder folder;
  write_file(folder.path() / "model.onnx", model.SerializeAsString());
  auto session = Session::open(folder.path() / "model.onnx");
  ASSERT_TRUE(kernels::conv::automatic_takes_implicit(g));
  const std::vector<double> ref = reference_conv(g, x, w, {});
  const uint64_t w_bytes = element_count(w_shape) * sizeof(float);
  std::vector<float> first;
  for (int run = 0; run < 4; ++run) {
    const HostTensor y = session->run({{"x", HostTensor::from_values<float>(x_shape, x)}}).at("y");
    const auto values = y.to_double();
    const std::vector<float> out(values.begin(), values.end());
    const uint64_t weights = session->last_run().weight_bytes;
    std::printf("  run %d: weights held %llu bytes (W %llu), rel L2 %.3g\n", run + 1,
                static_cast<unsigned long long>(weights), static_cast<unsigned long long>(w_bytes),
                rel_l2(out, ref));
    EXPECT_LE(rel_l2(out, ref), 1e-6) << "run " << run + 1;
    // The packed form (C_in and C_out padded) is at least W's size: W's upload is gone besides it.
    EXPECT_GE(weights, w_bytes) << "run " << run + 1;
    EXPECT_LT(weights, 2 * w_bytes) << "run " << run + 1
                                    << ": W's upload is still held next to its packed form";
    if (run == 0) first = out;
    EXPECT_EQ(std::memcmp(first.data(), out.data(), out.size() * sizeof(float)), 0) << "run " << run + 1;
  }
  const Shape longer = {1, 64, 52};
  const auto x2 = r.normal(element_count(longer));
  const auto g2 = kernels::conv::resolve_conv(longer, w_shape, {});
  const std::vector<double> ref2 = reference_conv(g2, x2, w, {});
  for (int run = 0; run < 2; ++run) {
    const auto values = session->run({{"x", HostTensor::from_values<float>(longer, x2)}}).at("y").to_double();
    const double e = rel_l2(std::vector<float>(values.begin(), values.end()), ref2);
    std::printf("  input %s run %d: weights held %llu bytes, rel L2 %.3g\n", shape_string(longer).c_str(),
                run + 1, static_cast<unsigned long long>(session->last_run().weight_bytes), e);
    EXPECT_LE(e, 1e-6) << "input " << shape_string(longer) << " run " << run + 1;
  }
}

// A chain of Conv / ConvTranspose layers, each followed by an activation (or none), through a
// Session; against float64 (each layer's reference, then the activation).
struct ConvLayer {
  bool transpose;
  Shape w;
  int64_t stride;
  std::string activation;  // ONNX op type, "" for none
  float alpha;
};

double activate(const std::string& op, double v, double alpha) {
  if (op == "Relu") return std::max(v, 0.0);
  if (op == "LeakyRelu") return v < 0 ? alpha * v : v;
  if (op == "Sigmoid") return 1.0 / (1.0 + std::exp(-v));
  if (op == "Tanh") return std::tanh(v);
  return v;
}

struct ChainRun {
  std::vector<float> y;
  std::vector<double> ref;
  uint64_t dispatches;
};

ChainRun run_chain(const Shape& x_shape, const std::vector<ConvLayer>& layers, bool with_activations) {
  Random r(test_seed());
  const std::vector<float> x = r.normal(element_count(x_shape));
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, x_shape);
  std::vector<double> ref(x.begin(), x.end());
  Shape shape = x_shape;
  std::string value = "x";
  for (size_t i = 0; i < layers.size(); ++i) {
    const ConvLayer& l = layers[i];
    const std::vector<float> w = r.uniform(element_count(l.w), -0.4, 0.4);
    kernels::conv::ConvAttributes a;
    a.strides = std::vector<int64_t>(shape.size() - 2, l.stride);
    const auto g = l.transpose ? kernels::conv::resolve_conv_transpose(shape, l.w, a)
                               : kernels::conv::resolve_conv(shape, l.w, a);
    const std::vector<float> bias = r.normal(g.out_channels, 0.0, 0.3);
    const std::string n = std::to_string(i);
    add_initializer(graph, "w" + n, l.w, w, DType::f32);
    add_initializer(graph, "b" + n, {g.out_channels}, bias, DType::f32);
    add_ints(add_node(graph, l.transpose ? "ConvTranspose" : "Conv", {value, "w" + n, "b" + n}, {"c" + n}, "conv" + n),
             "strides", a.strides);
    value = "c" + n;
    // The float64 chain rounds to f32 between layers as the GPU stores them.
    const std::vector<float> in(ref.begin(), ref.end());
    ref = reference_conv(g, in, w, bias);
    if (with_activations && !l.activation.empty()) {
      auto* act = add_node(graph, l.activation, {value}, {"a" + n}, "act" + n);
      if (l.activation == "LeakyRelu") {
        auto* alpha = act->add_attribute();
        alpha->set_name("alpha");
        alpha->set_type(onnx::AttributeProto::FLOAT);
        alpha->set_f(l.alpha);
      }
      value = "a" + n;
      for (double& v : ref) v = activate(l.activation, v, l.alpha);
    }
    shape = g.output_shape();
  }
  add_node(graph, "Identity", {value}, {"y"});
  add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, shape);
  TemporaryFolder folder;
  write_file(folder.path() / "model.onnx", model.SerializeAsString());
  auto session = Session::open(folder.path() / "model.onnx");
  const HostTensor y = session->run({{"x", HostTensor::from_values<float>(x_shape, x)}}).at("y");
  EXPECT_EQ(y.shape(), shape);
  const auto values = y.to_double();
  return {std::vector<float>(values.begin(), values.end()), ref, session->last_run().dispatches};
}

// Conv -> Relu, ConvTranspose -> LeakyRelu, Conv -> Sigmoid, Conv -> Tanh (1-D and 2-D, GEMM and
// direct paths) fused at plan time: as many dispatches as the chain without activations, and the
// activated outputs match float64.
TEST(ConvSession, ActivationsFusedIntoConv) {
  const std::vector<std::pair<Shape, std::vector<ConvLayer>>> chains = {
      {{2, 16, 24},
       {{false, {32, 16, 3}, 1, "Relu", 0}, {true, {32, 16, 4}, 2, "LeakyRelu", 0.2f},
        {false, {4, 16, 3}, 1, "Sigmoid", 0}, {false, {24, 4, 1}, 1, "Tanh", 0}}},
      {{1, 3, 10, 12}, {{false, {20, 3, 3, 3}, 1, "LeakyRelu", 0.1f}, {true, {20, 2, 2, 2}, 2, "Relu", 0}}},
  };
  for (const auto& [x_shape, layers] : chains) {
    const ChainRun fused = run_chain(x_shape, layers, true);
    const ChainRun plain = run_chain(x_shape, layers, false);
    const double e = rel_l2(fused.y, fused.ref);
    std::printf("  chain of %zu conv + activation on %s: %llu dispatches (without activations %llu), rel L2 %.3g\n",
                layers.size(), shape_string(x_shape).c_str(), static_cast<unsigned long long>(fused.dispatches),
                static_cast<unsigned long long>(plain.dispatches), e);
    EXPECT_LE(e, 1e-6);
    EXPECT_LE(rel_l2(plain.y, plain.ref), 1e-6);
    EXPECT_EQ(fused.dispatches, plain.dispatches) << "an activation was not fused";
  }
}

// A conv output that is also read elsewhere (here: a graph output) keeps its own activation node.
TEST(ConvSession, ActivationNotFusedWhenOutputIsShared) {
  Random r(test_seed());
  const Shape x_shape = {1, 4, 9}, w_shape = {6, 4, 3};
  const auto x = r.normal(element_count(x_shape)), w = r.uniform(element_count(w_shape), -0.5, 0.5);
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, x_shape);
  add_initializer(graph, "w", w_shape, w, DType::f32);
  add_node(graph, "Conv", {"x", "w"}, {"c"}, "conv");
  add_node(graph, "Relu", {"c"}, {"y"}, "relu");
  add_tensor_value(graph->mutable_output(), "c", onnx::TensorProto::FLOAT, {1, 6, 7});
  add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {1, 6, 7});
  TemporaryFolder folder;
  write_file(folder.path() / "model.onnx", model.SerializeAsString());
  auto outputs = Session::open(folder.path() / "model.onnx")->run({{"x", HostTensor::from_values<float>(x_shape, x)}});
  const auto g = kernels::conv::resolve_conv(x_shape, w_shape, {});
  std::vector<double> ref = reference_conv(g, x, w, {});
  const auto c = outputs.at("c").to_double(), y = outputs.at("y").to_double();
  const double ec = rel_l2(std::vector<float>(c.begin(), c.end()), ref);
  for (double& v : ref) v = std::max(v, 0.0);
  const double ey = rel_l2(std::vector<float>(y.begin(), y.end()), ref);
  std::printf("  shared conv output: conv rel L2 %.3g, relu rel L2 %.3g\n", ec, ey);
  EXPECT_LE(ec, 1e-6);
  EXPECT_LE(ey, 1e-6);
}

// ONNX's Conv / ConvTranspose node tests (IR 3-6 files with no initializers), every case of the family
// that exists, opened and run by Session as they are.
TEST(ConvSession, OnnxConformanceThroughSession) {
  const auto root = onnx_node_tests_dir();
  if (!root) GTEST_SKIP() << "libonnx-testdata not installed";
  int ran = 0;
  for (const auto& entry : fs::directory_iterator(*root)) {
    const std::string name = entry.path().filename().string();
    const bool family = name.rfind("test_conv", 0) == 0 || name.rfind("test_basic_conv", 0) == 0;
    if (!family || name.find("convinteger") != std::string::npos) continue;  // ConvInteger: another op
    onnx::ModelProto model;
    ASSERT_TRUE(model.ParseFromString(read_file_bytes(entry.path() / "model.onnx"))) << name;
    EXPECT_EQ(model.graph().initializer_size(), 0) << name;
    const int64_t ir = model.ir_version();
    try {
      auto session = Session::open(entry.path() / "model.onnx");
      const auto data = entry.path() / "test_data_set_0";
      std::map<std::string, HostTensor> feeds;
      for (size_t i = 0; i < session->inputs().size(); ++i) {
        feeds[session->inputs()[i].name] = read_tensor_proto_file(data / fmt::format("input_{}.pb", i));
      }
      const auto outputs = session->run(feeds);
      const HostTensor want = read_tensor_proto_file(data / "output_0.pb");
      const HostTensor& got = outputs.at(session->outputs().at(0).name);
      ASSERT_EQ(got.shape(), want.shape()) << name;
      const auto gv = got.to_double(), wv = want.to_double();
      const double e = rel_l2(std::vector<float>(gv.begin(), gv.end()), wv);
      std::printf("  %-46s (IR %lld file) rel L2 %.3g\n", name.c_str(), static_cast<long long>(ir), e);
      EXPECT_LE(e, 1e-6) << name;
      ++ran;
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what();
    }
  }
  EXPECT_GE(ran, 16);
}

}  // namespace
}  // namespace onda::test
