// The profile's roofline: the cost model (graph/node_cost.h) against FLOPs and bytes worked out by
// hand for each op family, the device peak probe (kernels/probe/device_peak.h: positive finite
// figures, measured once per process), and a profiled run where every node gets a floor and the
// model's floor is their sum (runtime/roofline.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "gpu/context.h"
#include "gpu/pipeline_cache.h"
#include "graph/node_cost.h"
#include "harness.h"
#include "kernels/probe/device_peak.h"
#include "ops/op_registry.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

using Types = std::vector<std::optional<TensorType>>;

std::optional<TensorType> f32(Shape shape) {
  return TensorType{DType::f32, std::move(shape)};
}

Node make_node(const std::string& op_type, size_t inputs, std::vector<Attribute> attributes = {}) {
  Node node;
  node.op_type = op_type;
  node.name = op_type;
  for (size_t i = 0; i < inputs; ++i) node.inputs.push_back("in" + std::to_string(i));
  node.outputs = {"out"};
  node.attributes = std::move(attributes);
  return node;
}

NodeCost cost_of(const Node& node, const Types& in, const Types& out) {
  return node_cost(node, in, out);
}

TEST(RooflineCost, MatMulIsTwoMknFlopsAndEachMatrixOnce) {
  const double m = 37, k = 64, n = 96;
  const NodeCost c = cost_of(make_node("MatMul", 2), {f32({37, 64}), f32({64, 96})}, {f32({37, 96})});
  EXPECT_EQ(c.flops, 2 * m * k * n);
  EXPECT_EQ(c.bytes, 4 * (m * k + k * n + m * n));
  EXPECT_TRUE(c.modeled);
  // Batched: every output element is a K-long dot product.
  const NodeCost b = cost_of(make_node("MatMul", 2), {f32({3, 8, 5}), f32({5, 7})}, {f32({3, 8, 7})});
  EXPECT_EQ(b.flops, 2.0 * 3 * 8 * 5 * 7);
  EXPECT_EQ(b.bytes, 4.0 * (3 * 8 * 5 + 5 * 7 + 3 * 8 * 7));
}

// A MatMul with a bias fused in (input 2), a Tanh and an epilogue of one Mul: 1 + 4 + 1 FLOPs per
// output element besides the product; the bias read once.
TEST(RooflineCost, MatMulCountsItsFusedBiasAndEpilogue) {
  auto body = std::make_shared<Graph>();
  body->inputs = {"v"};
  Node mul;
  mul.op_type = "Mul";
  mul.inputs = {"v", "k"};
  mul.outputs = {"w"};
  body->nodes.push_back(mul);
  body->outputs = {"w"};
  Attribute epilogue;
  epilogue.name = "onda.epilogue";
  epilogue.value = std::shared_ptr<const Graph>(body);
  const NodeCost c = cost_of(make_node("MatMul", 3, {{"onda.activation", std::string("tanh")}, epilogue}),
                             {f32({3, 8, 5}), f32({5, 7}), f32({7})}, {f32({3, 8, 7})});
  const double y = 3.0 * 8 * 7;
  EXPECT_EQ(c.flops, 2.0 * y * 5 + y + 4 * y + y);
  EXPECT_EQ(c.bytes, 4.0 * (3 * 8 * 5 + 5 * 7 + 7 + y));
}

// A product stored in column parts (graph/split_gemm_columns.h) has one output per part: the FLOPs
// and bytes of the whole product.
TEST(RooflineCost, MatMulInColumnPartsCountsEveryPart) {
  Node node = make_node("MatMul", 2, {{"onda.column_parts", int64_t{3}}});
  node.outputs = {"q", "k", "v"};
  const NodeCost c = cost_of(node, {f32({100, 64}), f32({64, 192})}, {f32({100, 64}), f32({100, 64}), f32({100, 64})});
  EXPECT_EQ(c.flops, 2.0 * 100 * 64 * 192);
  EXPECT_EQ(c.bytes, 4.0 * (100 * 64 + 64 * 192 + 100 * 192));
}

TEST(RooflineCost, GemmCountsTransposedAAndBias) {
  // transA: A is [K, M]. C adds one FLOP per output element.
  const NodeCost c = cost_of(make_node("Gemm", 3, {{"transA", int64_t{1}}}),
                             {f32({20, 10}), f32({20, 30}), f32({30})}, {f32({10, 30})});
  EXPECT_EQ(c.flops, 2.0 * 10 * 20 * 30 + 10 * 30);
  EXPECT_EQ(c.bytes, 4.0 * (200 + 600 + 30 + 300));
}

TEST(RooflineCost, ConvFromKernelAndOutputShapes) {
  // x [2, 8, 32, 32], W [16, 4, 3, 3] with group 2, y [2, 16, 30, 30], bias [16]:
  // 2 * |y| * (C/group * 3 * 3) + |y|.
  const double y = 2.0 * 16 * 30 * 30;
  const NodeCost c = cost_of(make_node("Conv", 3, {{"group", int64_t{2}}}),
                             {f32({2, 8, 32, 32}), f32({16, 4, 3, 3}), f32({16})}, {f32({2, 16, 30, 30})});
  EXPECT_EQ(c.flops, 2 * y * 4 * 9 + y);
  EXPECT_EQ(c.bytes, 4.0 * (2 * 8 * 32 * 32 + 16 * 4 * 9 + 16) + 4 * y);
  // A fused Relu adds one FLOP per output element.
  const NodeCost fused = cost_of(make_node("Conv", 2, {{"onda.activation", std::string("relu")}}),
                                 {f32({2, 8, 32, 32}), f32({16, 8, 3, 3})}, {f32({2, 16, 30, 30})});
  EXPECT_EQ(fused.flops, 2 * y * 8 * 9 + y);
}

TEST(RooflineCost, ConvTransposeFromInputAndKernel) {
  // x [1, 6, 10], W [6, 4, 5] (C_in, C_out / group, k), stride 2: y [1, 4, 23]; each input element
  // meets 4 * 5 taps.
  const NodeCost c = cost_of(make_node("ConvTranspose", 2, {{"strides", std::vector<int64_t>{2}}}),
                             {f32({1, 6, 10}), f32({6, 4, 5})}, {f32({1, 4, 23})});
  EXPECT_EQ(c.flops, 2.0 * 60 * 4 * 5);
  EXPECT_EQ(c.bytes, 4.0 * (60 + 120 + 92));
}

TEST(RooflineCost, RecurrentLayersPerStep) {
  // LSTM, bidirectional: X [seq 50, batch 2, I 16], W [2, 4H, 16], R [2, 4H, H], H 32.
  const double seq = 50, batch = 2, in = 16, h = 32;
  const NodeCost lstm =
      cost_of(make_node("LSTM", 3, {{"hidden_size", int64_t{32}}}),
              {f32({50, 2, 16}), f32({2, 128, 16}), f32({2, 128, 32})}, {f32({50, 2, 2, 32})});
  EXPECT_EQ(lstm.flops, 2 * seq * (2 * batch * 4 * h * (in + h) + batch * 4 * h * 6));
  EXPECT_EQ(lstm.sequential_steps, 50);
  EXPECT_EQ(lstm.bytes, 4.0 * (50 * 2 * 16 + 2 * 128 * 16 + 2 * 128 * 32 + 50 * 2 * 2 * 32));
  // GRU, batch-first layout: X [batch 3, seq 7, I 5], 3 gates, one direction, H 8.
  const NodeCost gru = cost_of(make_node("GRU", 3, {{"layout", int64_t{1}}}),
                               {f32({3, 7, 5}), f32({1, 24, 5}), f32({1, 24, 8})}, {f32({3, 7, 1, 8})});
  EXPECT_EQ(gru.flops, 7 * (2.0 * 3 * 3 * 8 * (5 + 8) + 3.0 * 3 * 8 * 6));
  EXPECT_EQ(gru.sequential_steps, 7);
}

TEST(RooflineCost, SpectralIsFiveNLogNPerTransform) {
  // DFT over axis 1 of [4, 256, 1], onesided: y [4, 129, 2]: four transforms of 256.
  const NodeCost dft = cost_of(make_node("DFT", 1, {{"onesided", int64_t{1}}, {"axis", int64_t{1}}}),
                               {f32({4, 256, 1})}, {f32({4, 129, 2})});
  EXPECT_EQ(dft.flops, 4 * 5 * 256 * 8.0);
  EXPECT_EQ(dft.bytes, 4.0 * (4 * 256 + 4 * 129 * 2));
  // STFT: signal [1, 4096, 1], step 256, window [1024]: y [1, 13, 513, 2]: 13 frames of 1024,
  // each also windowed (N multiplies).
  const NodeCost stft =
      cost_of(make_node("STFT", 3), {f32({1, 4096, 1}), TensorType{DType::i64, {}}, f32({1024})},
              {f32({1, 13, 513, 2})});
  EXPECT_EQ(stft.flops, 13 * (5 * 1024 * 10.0 + 1024));
  EXPECT_EQ(stft.bytes, 4.0 * (4096 + 1 + 1024 + 13 * 513 * 2));
}

TEST(RooflineCost, ElementwiseReductionsNormalizationsSoftmax) {
  // Broadcast Add: one FLOP per output element; each input read once at its own size.
  const NodeCost add = cost_of(make_node("Add", 2), {f32({8, 100}), f32({100})}, {f32({8, 100})});
  EXPECT_EQ(add.flops, 800);
  EXPECT_EQ(add.bytes, 4.0 * (800 + 100 + 800));
  EXPECT_EQ(cost_of(make_node("Tanh", 1), {f32({10})}, {f32({10})}).flops, 40);  // transcendental: 4
  EXPECT_EQ(cost_of(make_node("Sum", 3), {f32({10}), f32({10}), f32({10})}, {f32({10})}).flops, 20);
  EXPECT_EQ(cost_of(make_node("ReduceMean", 1), {f32({6, 50})}, {f32({6, 1})}).flops, 300);
  EXPECT_EQ(
      cost_of(make_node("LayerNormalization", 3), {f32({4, 64}), f32({64}), f32({64})}, {f32({4, 64})}).flops,
      5 * 256);
  EXPECT_EQ(cost_of(make_node("Softmax", 1), {f32({3, 40})}, {f32({3, 40})}).flops, 5 * 120);
  // f16 tensors move two bytes per element.
  const NodeCost half =
      node_cost(make_node("Relu", 1), {TensorType{DType::f16, {64}}}, {TensorType{DType::f16, {64}}});
  EXPECT_EQ(half.bytes, 2.0 * 128);
}

TEST(RooflineCost, FusedAttentionCountsBothProducts) {
  // onda's fused attention (graph/fuse_attention.h), as BS-RoFormer's time transformer runs it:
  // 2 Lq Lk (D + Dv) per batch row plus the softmax's few per score; its tensors read / written once.
  Node fused = make_node("Attention", 3);
  fused.domain = "onda";
  const double rows = 62 * 8 * 801.0, keys = 801, d = 64;
  const NodeCost c = cost_of(fused, {f32({62, 8, 801, 64}), f32({62, 8, 801, 64}), f32({62, 8, 801, 64})},
                             {f32({62, 8, 801, 64})});
  EXPECT_TRUE(c.modeled);
  EXPECT_EQ(c.flops, rows * keys * (2 * (d + d) + 5));
  EXPECT_EQ(c.bytes, 4.0 * 4 * rows * d);
  // K given transposed ([.., D, Lk]): the keys are V's rows.
  const NodeCost t = cost_of(fused, {f32({2, 10, 16}), f32({2, 16, 30}), f32({2, 30, 8})}, {f32({2, 10, 8})});
  EXPECT_EQ(t.flops, 2 * 10 * 30.0 * (2 * (16 + 8) + 5));
}

TEST(RooflineCost, LayoutOpsMoveDataOnly) {
  const NodeCost transpose = cost_of(make_node("Transpose", 1), {f32({16, 32})}, {f32({32, 16})});
  EXPECT_EQ(transpose.flops, 0);
  EXPECT_EQ(transpose.bytes, 4.0 * 2 * 512);
  EXPECT_TRUE(transpose.modeled);
  // Slice reads only what it keeps (the starts/ends inputs are a few int64 numbers, on the GPU as i32).
  const NodeCost slice =
      cost_of(make_node("Slice", 3),
              {f32({100, 100}), TensorType{DType::i64, {1}}, TensorType{DType::i64, {1}}}, {f32({10, 100})});
  EXPECT_EQ(slice.flops, 0);
  EXPECT_EQ(slice.bytes, 4.0 * (2 * 1000 + 1 + 1));
  // An op the model does not know: its bytes, no FLOPs, and marked so.
  const NodeCost unknown = cost_of(make_node("SomethingNew", 1), {f32({10})}, {f32({10})});
  EXPECT_FALSE(unknown.modeled);
  EXPECT_EQ(unknown.bytes, 80);
}

// Every op onda runs has a cost rule (a new op needs one, or its floor would silently count bytes
// only); If, Loop and Scan dispatch nothing of their own (their subgraphs' nodes are costed).
TEST(RooflineCost, EveryRegisteredOpIsModeled) {
  for (const ops::OpEntry& entry : ops::all_ops()) {
    if (!canonical_domain(entry.domain).empty()) continue;
    if (entry.op_type == "If" || entry.op_type == "Loop" || entry.op_type == "Scan") continue;
    const NodeCost c = cost_of(make_node(entry.op_type, 3), {f32({2, 4, 3}), f32({1, 8, 3}), f32({1, 8, 2})},
                               {f32({2, 4, 3})});
    EXPECT_TRUE(c.modeled) << entry.op_type << " has no rule in graph/node_cost.cpp";
    EXPECT_GE(c.flops, 0) << entry.op_type;
    EXPECT_GT(c.bytes, 0) << entry.op_type;
  }
}

TEST(RooflineProbe, PositiveFiniteAndMeasuredOncePerProcess) {
  gpu::Context context;
  gpu::PipelineCache pipelines(context);
  const uint64_t probes_before = kernels::device_peak_probes_run();
  const auto start = std::chrono::steady_clock::now();
  const kernels::DevicePeak& peak = kernels::device_peak({context, pipelines});
  const double first_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t probes_after = kernels::device_peak_probes_run();
  EXPECT_LE(probes_after - probes_before, 1u);  // 0 when an earlier test of this process probed
  for (double figure : {peak.flops_per_second, peak.bytes_per_second, peak.dependent_dispatch_ms}) {
    EXPECT_TRUE(std::isfinite(figure) && figure > 0) << figure;
  }
  // Read + written bytes per second of the vec4 copy kernel: above 100 MB/s (a CPU adapter reaches
  // GB/s) and below 100 TB/s (no GPU memory is that fast): a probe that copied nothing, or timed
  // nothing, falls outside.
  EXPECT_GT(peak.bytes_per_second, 1e8);
  EXPECT_LT(peak.bytes_per_second, 1e14);
  std::printf(
      "device peaks (%s): FP32 %.3g FLOP/s, copy %.3g B/s, dependent dispatch %.4f ms; probe %.2f s\n",
      context.adapter_description().name.c_str(), peak.flops_per_second, peak.bytes_per_second,
      peak.dependent_dispatch_ms, first_s);
  // A second call, even from another context on the same adapter, reuses the figures.
  gpu::Context other;
  gpu::PipelineCache other_pipelines(other);
  const kernels::DevicePeak& again = kernels::device_peak({other, other_pipelines});
  EXPECT_EQ(&again, &peak);
  EXPECT_EQ(kernels::device_peak_probes_run(), probes_after);
}

// x [4, 32] -> MatMul W [32, 48] -> Add b [4, 1] -> Tanh -> Transpose: a floor for every profiled
// node, FLOPs as worked out by hand, and the model's floor the sum of the nodes'. Add and Tanh run
// as one fused node (graph/fuse_elementwise.h): 1 + 4 FLOPs per element. (A bias of one value per
// column would go into the MatMul instead: RooflineCost.MatMulCountsItsFusedBiasAndEpilogue; so would
// an addend of the product's shape, graph/fuse_residual_add.h.)
TEST(RooflineSession, ProfiledRunHasAFloorPerNodeAndTheirSum) {
  Random r(test_seed());
  TemporaryFolder folder;
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {4, 32});
  add_float_initializer(graph, "w", {32, 48}, r.normal(32 * 48));
  add_float_initializer(graph, "b", {4, 1}, r.normal(4));
  add_node(graph, "MatMul", {"x", "w"}, {"xw"}, "matmul");
  add_node(graph, "Add", {"xw", "b"}, {"biased"}, "add");
  add_node(graph, "Tanh", {"biased"}, {"t"}, "tanh");
  add_ints_attribute(add_node(graph, "Transpose", {"t"}, {"y"}, "transpose"), "perm", {1, 0});
  add_float_output(graph, "y");
  write_file(folder.path() / "model.onnx", model.SerializeAsString());
  SessionOptions options;
  options.profile = true;
  auto session = Session::open(folder.path() / "model.onnx", options);
  const std::vector<float> x = r.normal(4 * 32);
  session->run({{"x", HostTensor::from_values<float>({4, 32}, x)}});
  const RunStats& stats = session->last_run();
  ASSERT_FALSE(stats.profile.empty());
  EXPECT_GT(stats.peak_flops_per_second, 0);
  EXPECT_GT(stats.peak_bytes_per_second, 0);
  const std::map<std::string, double> expected_flops{
      {"MatMul", 2.0 * 4 * 32 * 48}, {"FusedElementwise", (1 + 4) * 4.0 * 48}, {"Transpose", 0}};
  double sum = 0;
  std::set<std::string> seen;
  for (const ProfileLine& line : stats.profile) {
    SCOPED_TRACE(line.op_type + " " + line.node);
    seen.insert(line.op_type);
    EXPECT_TRUE(line.cost_modeled);
    EXPECT_GT(line.bytes, 0);
    EXPECT_GT(line.floor_ms, 0);
    EXPECT_TRUE(std::isfinite(line.floor_ms));
    ASSERT_TRUE(expected_flops.count(line.op_type));
    EXPECT_EQ(line.flops, expected_flops.at(line.op_type));
    // The floor is the larger of the compute and the memory bound.
    const double floor =
        1e3 * std::max(line.flops / stats.peak_flops_per_second, line.bytes / stats.peak_bytes_per_second);
    EXPECT_NEAR(line.floor_ms, floor, 1e-12 + 1e-9 * floor);
    sum += line.floor_ms;
  }
  EXPECT_EQ(seen.size(), expected_flops.size());
  EXPECT_NEAR(stats.profile_floor_ms, sum, 1e-12 * std::max(1.0, sum));
  const auto matmul = std::find_if(stats.profile.begin(), stats.profile.end(),
                                   [](const ProfileLine& l) { return l.op_type == "MatMul"; });
  ASSERT_NE(matmul, stats.profile.end());
  EXPECT_EQ(matmul->bytes, 4.0 * (4 * 32 + 32 * 48 + 4 * 48));
  const auto fused = std::find_if(stats.profile.begin(), stats.profile.end(),
                                  [](const ProfileLine& l) { return l.op_type == "FusedElementwise"; });
  ASSERT_NE(fused, stats.profile.end());
  EXPECT_EQ(fused->bytes, 4.0 * (4 * 48 + 4 + 4 * 48));  // xw and b read, t written, once
}

// An LSTM over 6 steps gets a latency floor of 6 dependent dispatches.
TEST(RooflineSession, RecurrentLayerHasAStepLatencyFloor) {
  Random r(test_seed());
  TemporaryFolder folder;
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {6, 1, 3});
  add_float_initializer(graph, "w", {1, 16, 3}, r.normal(48));
  add_float_initializer(graph, "r", {1, 16, 4}, r.normal(64));
  add_int_attribute(add_node(graph, "LSTM", {"x", "w", "r"}, {"y"}, "lstm"), "hidden_size", 4);
  add_float_output(graph, "y");
  write_file(folder.path() / "model.onnx", model.SerializeAsString());
  SessionOptions options;
  options.profile = true;
  auto session = Session::open(folder.path() / "model.onnx", options);
  session->run({{"x", HostTensor::from_values<float>({6, 1, 3}, r.normal(18))}});
  const RunStats& stats = session->last_run();
  ASSERT_FALSE(stats.profile.empty());
  for (const ProfileLine& line : stats.profile) {
    ASSERT_EQ(line.op_type, "LSTM");
    EXPECT_EQ(line.sequential_steps, 6);
    EXPECT_DOUBLE_EQ(line.latency_floor_ms, 6 * stats.dependent_dispatch_ms);
    EXPECT_GE(line.floor_ms, line.latency_floor_ms);
    EXPECT_GT(line.latency_floor_ms, 0);
  }
}

// A Loop runs its body's nodes once per iteration under one profile name: their costs add up,
// like their GPU times. Body: s = Tanh(s * 0.9), 5 iterations over s [8]; the Mul and the Tanh run
// as one fused node (graph/fuse_elementwise.h, named after its exit), the constant folded.
TEST(RooflineSession, LoopBodyCostsAddUpOverIterations) {
  TemporaryFolder folder;
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "steps", onnx::TensorProto::INT64, {});
  add_tensor_value(graph->mutable_input(), "s0", onnx::TensorProto::FLOAT, {8});
  add_float_initializer(graph, "decay", {}, {0.9f});
  onnx::TensorProto* always = graph->add_initializer();
  always->set_name("always");
  always->set_data_type(onnx::TensorProto::BOOL);
  always->add_int32_data(1);
  onnx::NodeProto* loop = add_node(graph, "Loop", {"steps", "always", "s0"}, {"s_final"}, "recurrence");
  onnx::AttributeProto* attribute = loop->add_attribute();
  attribute->set_name("body");
  attribute->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = attribute->mutable_g();
  body->set_name("body");
  add_tensor_value(body->mutable_input(), "i", onnx::TensorProto::INT64, {});
  add_tensor_value(body->mutable_input(), "keep_going", onnx::TensorProto::BOOL, {});
  add_tensor_value(body->mutable_input(), "s", onnx::TensorProto::FLOAT, {8});
  add_node(body, "Mul", {"s", "decay"}, {"decayed"}, "decay");
  add_node(body, "Tanh", {"decayed"}, {"s_next"}, "squash");
  add_node(body, "Identity", {"keep_going"}, {"keep_going_out"}, "pass_condition");
  add_tensor_value(body->mutable_output(), "keep_going_out", onnx::TensorProto::BOOL, {});
  add_float_output(body, "s_next");
  add_float_output(graph, "s_final");
  write_file(folder.path() / "model.onnx", model.SerializeAsString());
  SessionOptions options;
  options.profile = true;
  auto session = Session::open(folder.path() / "model.onnx", options);
  Random r(test_seed());
  session->run({{"steps", HostTensor::from_values<int64_t>({}, {5})},
                {"s0", HostTensor::from_values<float>({8}, r.normal(8))}});
  const RunStats& stats = session->last_run();
  std::map<std::string, const ProfileLine*> by_node;
  for (const ProfileLine& line : stats.profile) by_node[line.node] = &line;
  const std::string fused = "squash/onda_fused_elementwise";
  ASSERT_TRUE(by_node.count(fused));
  EXPECT_EQ(by_node[fused]->dispatches, 5u);
  EXPECT_EQ(by_node[fused]->flops, 5 * (1 + 4) * 8.0);
  EXPECT_EQ(by_node[fused]->bytes, 5 * 4.0 * (8 + 8));
}

}  // namespace
}  // namespace onda::test
