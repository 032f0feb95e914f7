// Control flow decided at run time (runtime/control_flow.h) and sequences (ops/sequence_ops.cpp),
// on models built here, against float64 references computed in the test:
// - a voice-activity-style sample-rate switch on an int64 input (host condition), alternating
//   between runs of one Session: the first run of each branch plans it ("(plan)" in RunStats), the
//   second plans nothing and allocates no buffer, later ones replay a captured run per branch;
// - a condition computed on the GPU (sign of a sum), read back per run;
// - an If nested in a branch, both conditions at run time (one host, one GPU);
// - a guard on an input's length against an int64 input (Shape/Gather/Less);
// - Loop with carried state and scan outputs (trip count an input), Scan in reverse over axis 1;
// - SplitToSequence / SequenceAt / SequenceInsert / SequenceErase / SequenceLength /
//   ConcatFromSequence;
// - malformed conditions, trip counts and sequence positions as ModelErrors naming the node.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/model_error.h"
#include "harness.h"
#include "test_rnn_reference.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

onnx::GraphProto* add_graph_attribute(onnx::NodeProto* node, const std::string& attribute_name) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(attribute_name);
  attribute->set_type(onnx::AttributeProto::GRAPH);
  attribute->mutable_g()->set_name(node->name() + "_" + attribute_name);
  return attribute->mutable_g();
}

// y = x @ w as float64, x [rows, inner], w [inner, cols].
std::vector<double> matmul(const std::vector<float>& x, const std::vector<float>& w, int64_t rows,
                           int64_t inner, int64_t cols) {
  std::vector<double> y(rows * cols, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t k = 0; k < inner; ++k) y[r * cols + c] += double(x[r * inner + k]) * w[k * cols + c];
  return y;
}

bool has_key(const RunStats& stats, const char* key) {
  return stats.record_ms_by_op.count(key) != 0;
}

constexpr int64_t kFlowRows = 4, kFlowInner = 32, kFlowCols = 8;  // x has 128 elements: a GPU-only input

// x [4, 32] float, sr int64 scalar:
//   if sr == 16000: y = Tanh(x @ w16)      else: y = Relu(x @ w8) * 2
onnx::ModelProto sample_rate_switch(const std::vector<float>& w16, const std::vector<float>& w8) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {kFlowRows, kFlowInner});
  add_tensor_value(graph->mutable_input(), "sr", onnx::TensorProto::INT64, {});
  add_int64_initializer(graph, "rate_16k", {}, {16000});
  add_float_initializer(graph, "w16", {kFlowInner, kFlowCols}, w16);
  add_float_initializer(graph, "w8", {kFlowInner, kFlowCols}, w8);
  add_float_initializer(graph, "two", {}, {2.0f});
  add_node(graph, "Equal", {"sr", "rate_16k"}, {"is_16k"}, "rate_check");
  onnx::NodeProto* branch = add_node(graph, "If", {"is_16k"}, {"y"}, "rate_switch");
  onnx::GraphProto* at_16k = add_graph_attribute(branch, "then_branch");
  add_node(at_16k, "MatMul", {"x", "w16"}, {"projected"}, "project_16k");
  add_node(at_16k, "Tanh", {"projected"}, {"y16"}, "tanh_16k");
  add_float_output(at_16k, "y16");
  onnx::GraphProto* at_8k = add_graph_attribute(branch, "else_branch");
  add_node(at_8k, "MatMul", {"x", "w8"}, {"projected"}, "project_8k");  // same local name as at_16k
  add_node(at_8k, "Relu", {"projected"}, {"rectified"}, "relu_8k");
  add_node(at_8k, "Mul", {"rectified", "two"}, {"y8"}, "double_8k");
  add_float_output(at_8k, "y8");
  add_float_output(graph, "y");
  return model;
}

TEST(RuntimeControlFlow, SampleRateSwitchAlternatesBranchesAndPlansEachOnce) {
  Random random(test_seed());
  const std::vector<float> w16 = random.normal(kFlowInner * kFlowCols), w8 = random.normal(kFlowInner * kFlowCols);
  TemporaryFolder folder;
  auto session = open_session(sample_rate_switch(w16, w8), folder);
  const int64_t rates[] = {16000, 8000, 16000, 8000, 16000, 8000, 16000};
  for (int run = 0; run < 7; ++run) {
    const int64_t sr = rates[run];
    const std::vector<float> x = random.normal(kFlowRows * kFlowInner);
    auto outputs = session->run({{"x", HostTensor::from_values<float>({kFlowRows, kFlowInner}, x)},
                                 {"sr", HostTensor::from_values<int64_t>({}, {sr})}});
    std::vector<double> reference = matmul(x, sr == 16000 ? w16 : w8, kFlowRows, kFlowInner, kFlowCols);
    for (double& v : reference) v = sr == 16000 ? std::tanh(v) : 2.0 * std::max(v, 0.0);
    ASSERT_EQ(outputs.at("y").shape(), (Shape{kFlowRows, kFlowCols}));
    const double error = rel_l2(values_of(outputs.at("y")), reference);
    const RunStats& stats = session->last_run();
    std::printf("run %d, sr %lld: rel L2 %.2e, planned %d, replayed %d, buffers allocated %llu\n", run,
                static_cast<long long>(sr), error, has_key(stats, "(plan)"), has_key(stats, "(replay)"),
                static_cast<unsigned long long>(stats.buffers_allocated));
    EXPECT_LT(error, 1e-5) << "run " << run;
    EXPECT_FALSE(has_key(stats, "(read back)")) << "a host condition needs no read back";
    // Runs 0 and 1 plan their branch; every later run plans nothing.
    EXPECT_EQ(has_key(stats, "(plan)"), run < 2) << "run " << run;
    // Run 3 allocates the buffers that run 2's capture claimed for its tape (BufferPool::claim).
    if (run >= 2 && run != 3) {
      EXPECT_EQ(stats.buffers_allocated, 0u) << "run " << run;
    }
    // Runs 2 and 3 are captured, one per branch; from run 4 on each branch replays its own.
    EXPECT_EQ(has_key(stats, "(replay)"), run >= 4) << "run " << run;
  }
}

// The voice-activity shape: x [seq 6, batch 1, 4] float, sr int64; each branch runs its own LSTM
// (hidden 3, weights per rate, the same local value names in both) and returns its last hidden state.
constexpr int64_t kSeq = 6, kFeatures = 4, kHidden = 3;

struct LstmWeights {
  std::vector<float> w, r, b;  // [1, 4H, I], [1, 4H, H], [1, 8H]
};

void add_lstm_branch(onnx::GraphProto* branch, const std::string& prefix, const LstmWeights& weights) {
  add_float_initializer(branch, prefix + "_w", {1, 4 * kHidden, kFeatures}, weights.w);
  add_float_initializer(branch, prefix + "_r", {1, 4 * kHidden, kHidden}, weights.r);
  add_float_initializer(branch, prefix + "_b", {1, 8 * kHidden}, weights.b);
  onnx::NodeProto* lstm = add_node(branch, "LSTM", {"x", prefix + "_w", prefix + "_r", prefix + "_b"},
                                   {"y", "y_h"}, prefix + "_lstm");
  add_int_attribute(lstm, "hidden_size", kHidden);
  add_float_output(branch, "y_h");
}

onnx::ModelProto lstm_rate_switch(const LstmWeights& at_16k, const LstmWeights& at_8k) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {kSeq, 1, kFeatures});
  add_tensor_value(graph->mutable_input(), "sr", onnx::TensorProto::INT64, {});
  add_int64_initializer(graph, "rate_16k", {}, {16000});
  add_node(graph, "Equal", {"sr", "rate_16k"}, {"is_16k"}, "rate_check");
  onnx::NodeProto* branch = add_node(graph, "If", {"is_16k"}, {"state"}, "rate_switch");
  add_lstm_branch(add_graph_attribute(branch, "then_branch"), "rate16", at_16k);
  add_lstm_branch(add_graph_attribute(branch, "else_branch"), "rate8", at_8k);
  add_float_output(graph, "state");
  return model;
}

TEST(RuntimeControlFlow, LstmPerSampleRateBranch) {
  Random random(test_seed());
  auto weights = [&] {
    return LstmWeights{random.normal(4 * kHidden * kFeatures), random.normal(4 * kHidden * kHidden),
                       random.normal(8 * kHidden)};
  };
  const LstmWeights at_16k = weights(), at_8k = weights();
  TemporaryFolder folder;
  auto session = open_session(lstm_rate_switch(at_16k, at_8k), folder);
  kernels::rnn::RnnSpec spec;
  spec.hidden_size = kHidden;
  for (int64_t sr : {8000, 16000, 8000, 16000}) {
    const std::vector<float> x = random.normal(kSeq * kFeatures);
    auto outputs = session->run({{"x", HostTensor::from_values<float>({kSeq, 1, kFeatures}, x)},
                                 {"sr", HostTensor::from_values<int64_t>({}, {sr})}});
    const LstmWeights& used = sr == 16000 ? at_16k : at_8k;
    RnnReferenceInputs in;
    in.seq = kSeq;
    in.batch = 1;
    in.input = kFeatures;
    in.x = x;
    in.w = used.w;
    in.r = used.r;
    in.b = used.b;
    const RnnReferenceOutputs reference = rnn_reference(spec, in);
    ASSERT_EQ(outputs.at("state").shape(), (Shape{1, 1, kHidden}));
    const double error = rel_l2(values_of(outputs.at("state")), reference.y_h);
    std::printf("sr %lld: LSTM state rel L2 %.2e\n", static_cast<long long>(sr), error);
    EXPECT_LT(error, 1e-5) << "sr " << sr;
  }
}

// Conv + Relu inside a branch (fused in the branch's plan as in the main graph's): x [1, 2, 16],
// w [3, 2, 3]; if on: y = Relu(Conv(x, w, pads 1)) else y = Conv(x, w, pads 1).
onnx::ModelProto conv_switch(const std::vector<float>& w) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 2, 16});
  add_tensor_value(graph->mutable_input(), "on", onnx::TensorProto::BOOL, {});
  add_float_initializer(graph, "w", {3, 2, 3}, w);
  onnx::NodeProto* branch = add_node(graph, "If", {"on"}, {"y"}, "activation_switch");
  onnx::GraphProto* rectified = add_graph_attribute(branch, "then_branch");
  add_ints_attribute(add_node(rectified, "Conv", {"x", "w"}, {"convolved"}, "conv_relu"), "pads", {1, 1});
  add_node(rectified, "Relu", {"convolved"}, {"rectified"}, "relu");
  add_float_output(rectified, "rectified");
  onnx::GraphProto* linear = add_graph_attribute(branch, "else_branch");
  add_ints_attribute(add_node(linear, "Conv", {"x", "w"}, {"linear"}, "conv"), "pads", {1, 1});
  add_float_output(linear, "linear");
  add_float_output(graph, "y");
  return model;
}

TEST(RuntimeControlFlow, ConvReluInABranch) {
  Random random(test_seed());
  const std::vector<float> w = random.normal(18);
  TemporaryFolder folder;
  auto session = open_session(conv_switch(w), folder);
  for (bool on : {true, false, true}) {
    const std::vector<float> x = random.normal(32);
    auto outputs = session->run({{"x", HostTensor::from_values<float>({1, 2, 16}, x)},
                                 {"on", HostTensor::from_int64(DType::boolean, {}, {on ? 1 : 0})}});
    std::vector<double> reference;
    for (int64_t o = 0; o < 3; ++o)
      for (int64_t t = 0; t < 16; ++t) {
        double sum = 0;
        for (int64_t c = 0; c < 2; ++c)
          for (int64_t k = 0; k < 3; ++k) {
            const int64_t at = t + k - 1;
            if (at >= 0 && at < 16) sum += double(w[(o * 2 + c) * 3 + k]) * x[c * 16 + at];
          }
        reference.push_back(on ? std::max(sum, 0.0) : sum);
      }
    ASSERT_EQ(outputs.at("y").shape(), (Shape{1, 3, 16}));
    EXPECT_LT(rel_l2(values_of(outputs.at("y")), reference), 1e-6) << "on " << on;
    const RunStats& stats = session->last_run();
    if (!has_key(stats, "(replay)")) {
      EXPECT_EQ(stats.record_ms_by_op.count("Relu"), 0u) << "the Relu is fused into the Conv";
    }
  }
}

// x [4, 32]: if ReduceSum(x) > 0 (computed on the GPU, read back): y = x * 3, else y = -x.
onnx::ModelProto sign_switch() {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {kFlowRows, kFlowInner});
  add_float_initializer(graph, "zero", {}, {0.0f});
  add_float_initializer(graph, "three", {}, {3.0f});
  add_int_attribute(add_node(graph, "ReduceSum", {"x"}, {"total"}, "sum"), "keepdims", 0);
  add_node(graph, "Greater", {"total", "zero"}, {"positive"}, "sign");
  onnx::NodeProto* branch = add_node(graph, "If", {"positive"}, {"y"}, "sign_switch");
  add_node(add_graph_attribute(branch, "then_branch"), "Mul", {"x", "three"}, {"tripled"}, "triple");
  add_float_output(branch->mutable_attribute(0)->mutable_g(), "tripled");
  add_node(add_graph_attribute(branch, "else_branch"), "Neg", {"x"}, {"negated"}, "negate");
  add_float_output(branch->mutable_attribute(1)->mutable_g(), "negated");
  add_float_output(graph, "y");
  return model;
}

TEST(RuntimeControlFlow, ConditionOnTheGpuIsReadBack) {
  Random random(test_seed());
  TemporaryFolder folder;
  auto session = open_session(sign_switch(), folder);
  for (int run = 0; run < 4; ++run) {
    std::vector<float> x = random.normal(kFlowRows * kFlowInner);
    double sum = 0;
    for (float v : x) sum += v;
    const bool want_positive = run % 2 == 0;
    if ((sum > 0) != want_positive)
      for (float& v : x) v = -v;
    sum = 0;
    for (float v : x) sum += v;
    auto outputs = session->run({{"x", HostTensor::from_values<float>({kFlowRows, kFlowInner}, x)}});
    std::vector<double> reference;
    for (float v : x) reference.push_back(sum > 0 ? 3.0 * v : -double(v));
    const double error = rel_l2(values_of(outputs.at("y")), reference);
    std::printf("run %d (sum %.3f): rel L2 %.2e\n", run, sum, error);
    EXPECT_LT(error, 1e-6) << "run " << run;
    EXPECT_TRUE(has_key(session->last_run(), "(read back)"));
    EXPECT_EQ(has_key(session->last_run(), "(plan)"), run < 2) << "run " << run;
  }
  // Pipelined: a run recorded (with its read back) while the one before is still in flight.
  std::vector<std::vector<float>> inputs{random.normal(kFlowRows * kFlowInner), random.normal(kFlowRows * kFlowInner)};
  for (float& v : inputs[1]) v = -v;
  for (const auto& input : inputs)
    session->submit({{"x", HostTensor::from_values<float>({kFlowRows, kFlowInner}, input)}});
  for (const auto& input : inputs) {
    auto outputs = session->collect();
    double sum = 0;
    for (float v : input) sum += v;
    std::vector<double> reference;
    for (float v : input) reference.push_back(sum > 0 ? 3.0 * v : -double(v));
    EXPECT_LT(rel_l2(values_of(outputs.at("y")), reference), 1e-6) << "pipelined";
  }
  // Profiled: the read back submits mid-run, the profile still has the branch's dispatch.
  session->set_profiling(true);
  const std::vector<float> x = random.normal(kFlowRows * kFlowInner);
  auto outputs = session->run({{"x", HostTensor::from_values<float>({kFlowRows, kFlowInner}, x)}});
  double sum = 0;
  for (float v : x) sum += v;
  std::vector<double> reference;
  for (float v : x) reference.push_back(sum > 0 ? 3.0 * v : -double(v));
  EXPECT_LT(rel_l2(values_of(outputs.at("y")), reference), 1e-6);
  bool profiled_branch = false;
  for (const ProfileLine& line : session->last_run().profile)
    profiled_branch = profiled_branch || line.op_type == (sum > 0 ? "Mul" : "Neg");
  EXPECT_TRUE(profiled_branch);
}

// x [4, 32] float, use_gain bool scalar (a host value):
//   if use_gain: (if ReduceSum(x) > 0: y = x * 3 else y = -x) + 1     else: y = x - 5
onnx::ModelProto nested_switch() {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {kFlowRows, kFlowInner});
  add_tensor_value(graph->mutable_input(), "use_gain", onnx::TensorProto::BOOL, {});
  add_float_initializer(graph, "zero", {}, {0.0f});
  add_float_initializer(graph, "one", {}, {1.0f});
  add_float_initializer(graph, "three", {}, {3.0f});
  add_float_initializer(graph, "five", {}, {5.0f});
  onnx::NodeProto* outer = add_node(graph, "If", {"use_gain"}, {"y"}, "gain_switch");
  onnx::GraphProto* gained = add_graph_attribute(outer, "then_branch");
  add_int_attribute(add_node(gained, "ReduceSum", {"x"}, {"total"}, "sum"), "keepdims", 0);
  add_node(gained, "Greater", {"total", "zero"}, {"positive"}, "sign");
  onnx::NodeProto* inner = add_node(gained, "If", {"positive"}, {"signed"}, "sign_switch");
  add_node(add_graph_attribute(inner, "then_branch"), "Mul", {"x", "three"}, {"tripled"}, "triple");
  add_float_output(inner->mutable_attribute(0)->mutable_g(), "tripled");
  add_node(add_graph_attribute(inner, "else_branch"), "Neg", {"x"}, {"negated"}, "negate");
  add_float_output(inner->mutable_attribute(1)->mutable_g(), "negated");
  add_node(gained, "Add", {"signed", "one"}, {"plus_one"}, "add_one");
  add_float_output(gained, "plus_one");
  onnx::GraphProto* plain = add_graph_attribute(outer, "else_branch");
  add_node(plain, "Sub", {"x", "five"}, {"shifted"}, "shift");
  add_float_output(plain, "shifted");
  add_float_output(graph, "y");
  return model;
}

TEST(RuntimeControlFlow, NestedIfsTakeEveryPath) {
  Random random(test_seed());
  TemporaryFolder folder;
  auto session = open_session(nested_switch(), folder);
  for (int round = 0; round < 2; ++round) {
    for (int path = 0; path < 4; ++path) {
      const bool use_gain = path < 2, want_positive = path % 2 == 0;
      std::vector<float> x = random.normal(kFlowRows * kFlowInner);
      double sum = 0;
      for (float v : x) sum += v;
      if ((sum > 0) != want_positive)
        for (float& v : x) v = -v;
      HostTensor flag = HostTensor::from_int64(DType::boolean, {}, {use_gain ? 1 : 0});
      auto outputs =
          session->run({{"x", HostTensor::from_values<float>({kFlowRows, kFlowInner}, x)}, {"use_gain", flag}});
      std::vector<double> reference;
      for (float v : x)
        reference.push_back(!use_gain ? double(v) - 5.0 : (want_positive ? 3.0 * v : -double(v)) + 1.0);
      const double error = rel_l2(values_of(outputs.at("y")), reference);
      std::printf("round %d, use_gain %d, positive %d: rel L2 %.2e, planned %d\n", round, use_gain,
                  want_positive, error, has_key(session->last_run(), "(plan)"));
      EXPECT_LT(error, 1e-6) << "round " << round << " path " << path;
      if (round > 0) {
        EXPECT_FALSE(has_key(session->last_run(), "(plan)")) << "path " << path;
      }
    }
  }
}

// x [2, T] float, limit int64 scalar: if T < limit: y = Pad-free copy x * 2, else y = x[:, :limit]
// (Slice by the input): a shape guard whose condition needs an input value.
onnx::ModelProto length_guard() {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::ValueInfoProto* x = add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 1});
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("T");
  add_tensor_value(graph->mutable_input(), "limit", onnx::TensorProto::INT64, {});
  add_int64_initializer(graph, "one", {}, {1});
  add_int64_initializer(graph, "axes", {1}, {1});
  add_int64_initializer(graph, "starts", {1}, {0});
  add_float_initializer(graph, "two", {}, {2.0f});
  add_node(graph, "Shape", {"x"}, {"shape"}, "shape");
  add_node(graph, "Gather", {"shape", "one"}, {"frames"}, "frames");
  add_node(graph, "Less", {"frames", "limit"}, {"short"}, "guard");
  onnx::NodeProto* branch = add_node(graph, "If", {"short"}, {"y"}, "length_switch");
  add_node(add_graph_attribute(branch, "then_branch"), "Mul", {"x", "two"}, {"doubled"}, "double");
  add_float_output(branch->mutable_attribute(0)->mutable_g(), "doubled");
  onnx::GraphProto* cut = add_graph_attribute(branch, "else_branch");
  add_node(cut, "Unsqueeze", {"limit", "starts"}, {"ends"}, "ends");
  add_node(cut, "Slice", {"x", "starts", "ends", "axes"}, {"cut"}, "cut");
  add_float_output(cut, "cut");
  add_float_output(graph, "y");
  return model;
}

TEST(RuntimeControlFlow, ShapeGuardAgainstAnInputValue) {
  Random random(test_seed());
  TemporaryFolder folder;
  auto session = open_session(length_guard(), folder);
  for (auto [frames, limit] : {std::pair<int64_t, int64_t>{6, 8}, {6, 4}, {6, 8}, {9, 3}, {9, 12}}) {
    const std::vector<float> x = random.normal(2 * frames);
    auto outputs = session->run({{"x", HostTensor::from_values<float>({2, frames}, x)},
                                 {"limit", HostTensor::from_values<int64_t>({}, {limit})}});
    const int64_t kept = frames < limit ? frames : limit;
    std::vector<double> reference;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t t = 0; t < kept; ++t)
        reference.push_back(frames < limit ? 2.0 * x[r * frames + t] : x[r * frames + t]);
    ASSERT_EQ(outputs.at("y").shape(), (Shape{2, kept})) << frames << " frames, limit " << limit;
    EXPECT_LT(rel_l2(values_of(outputs.at("y")), reference), 1e-6) << frames << " frames, limit " << limit;
  }
}

// Loop over an int64 trip count: state s [8] (initial s0), each iteration
//   s = Tanh(s * 0.9 + x[i] + i)   (x [N, 8] a GPU input, x[i] by Gather at the iteration number)
// scan output: s after each iteration; outputs: final s and the [M, 8] stack.
onnx::ModelProto recurrent_loop() {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "steps", onnx::TensorProto::INT64, {});
  add_tensor_value(graph->mutable_input(), "s0", onnx::TensorProto::FLOAT, {8});
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {12, 8});
  add_float_initializer(graph, "decay", {}, {0.9f});
  onnx::TensorProto* always = graph->add_initializer();
  always->set_name("always");
  always->set_data_type(onnx::TensorProto::BOOL);
  always->add_int32_data(1);
  onnx::NodeProto* loop =
      add_node(graph, "Loop", {"steps", "always", "s0"}, {"s_final", "s_all"}, "recurrence");
  onnx::GraphProto* body = add_graph_attribute(loop, "body");
  add_tensor_value(body->mutable_input(), "i", onnx::TensorProto::INT64, {});
  add_tensor_value(body->mutable_input(), "keep_going", onnx::TensorProto::BOOL, {});
  add_tensor_value(body->mutable_input(), "s", onnx::TensorProto::FLOAT, {8});
  add_node(body, "Gather", {"x", "i"}, {"x_i"}, "row");
  add_node(body, "Mul", {"s", "decay"}, {"decayed"}, "decay");
  add_node(body, "Add", {"decayed", "x_i"}, {"driven"}, "drive");
  add_int_attribute(add_node(body, "Cast", {"i"}, {"i_float"}, "iteration"), "to", onnx::TensorProto::FLOAT);
  add_node(body, "Add", {"driven", "i_float"}, {"shifted"}, "shift");
  add_node(body, "Tanh", {"shifted"}, {"s_next"}, "squash");
  add_node(body, "Identity", {"keep_going"}, {"keep_going_out"}, "pass_condition");
  add_tensor_value(body->mutable_output(), "keep_going_out", onnx::TensorProto::BOOL, {});
  add_float_output(body, "s_next");
  add_node(body, "Identity", {"s_next"}, {"s_scan"}, "scan_copy");
  add_float_output(body, "s_scan");
  add_float_output(graph, "s_final");
  add_float_output(graph, "s_all");
  return model;
}

TEST(RuntimeControlFlow, LoopCarriesStateAndStacksScanOutputs) {
  Random random(test_seed());
  TemporaryFolder folder;
  auto session = open_session(recurrent_loop(), folder);
  for (int64_t steps : {5, 3, 5}) {
    const std::vector<float> s0 = random.normal(8), x = random.normal(12 * 8);
    auto outputs = session->run({{"steps", HostTensor::from_values<int64_t>({}, {steps})},
                                 {"s0", HostTensor::from_values<float>({8}, s0)},
                                 {"x", HostTensor::from_values<float>({12, 8}, x)}});
    std::vector<double> s(s0.begin(), s0.end()), all;
    for (int64_t i = 0; i < steps; ++i) {
      for (int64_t k = 0; k < 8; ++k) s[k] = std::tanh(s[k] * double(0.9f) + x[i * 8 + k] + double(i));
      all.insert(all.end(), s.begin(), s.end());
    }
    ASSERT_EQ(outputs.at("s_all").shape(), (Shape{steps, 8}));
    const double final_error = rel_l2(values_of(outputs.at("s_final")), s);
    const double all_error = rel_l2(values_of(outputs.at("s_all")), all);
    std::printf("%lld steps: rel L2 final %.2e, stacked %.2e\n", static_cast<long long>(steps), final_error,
                all_error);
    EXPECT_LT(final_error, 1e-5);
    EXPECT_LT(all_error, 1e-5);
  }
}

// A while loop whose condition is computed on the GPU (read back each iteration), carrying a tensor
// and a sequence: v = x; do { v = v * 0.5; rows += [ReduceSum(v, axis 1)] } while sum(|v|) > 10;
// outputs: the last v and the rows stacked by ConcatFromSequence(new_axis) [iterations, 4].
onnx::ModelProto halving_while_loop(const char* condition = "start") {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {kFlowRows, kFlowInner});
  add_float_initializer(graph, "half", {}, {0.5f});
  add_float_initializer(graph, "threshold", {}, {10.0f});
  add_float_initializer(graph, "not_a_bool", {}, {1.0f});
  add_int64_initializer(graph, "row_axes", {1}, {1});
  onnx::TensorProto* start = graph->add_initializer();
  start->set_name("start");
  start->set_data_type(onnx::TensorProto::BOOL);
  start->add_int32_data(1);
  add_int_attribute(add_node(graph, "SequenceEmpty", {}, {"no_rows"}, "no_rows"), "dtype",
                    onnx::TensorProto::FLOAT);
  add_node(graph, "Loop", {"", condition, "x", "no_rows"}, {"v_final", "rows_final"}, "halving");
  onnx::GraphProto* body = add_graph_attribute(graph->mutable_node(1), "body");
  body->add_input()->set_name("i");
  body->add_input()->set_name("keep_going");
  body->add_input()->set_name("v");
  body->add_input()->set_name("rows");
  add_node(body, "Mul", {"v", "half"}, {"v_next"}, "halve");
  add_int_attribute(add_node(body, "ReduceSum", {"v_next", "row_axes"}, {"row_sums"}, "row_sums"), "keepdims",
                    0);
  add_node(body, "SequenceInsert", {"rows", "row_sums"}, {"rows_next"}, "append");
  add_node(body, "Abs", {"v_next"}, {"magnitude"}, "abs");
  add_int_attribute(add_node(body, "ReduceSum", {"magnitude"}, {"total"}, "total"), "keepdims", 0);
  add_node(body, "Greater", {"total", "threshold"}, {"again"}, "again");
  body->add_output()->set_name("again");
  add_float_output(body, "v_next");
  body->add_output()->set_name("rows_next");
  add_int_attribute(add_node(graph, "ConcatFromSequence", {"rows_final"}, {"rows"}, "stack"), "axis", 0);
  add_int_attribute(graph->mutable_node(2), "new_axis", 1);
  add_float_output(graph, "v_final");
  add_float_output(graph, "rows");
  return model;
}

TEST(RuntimeControlFlow, WhileLoopWithGpuConditionCarriesASequence) {
  Random random(test_seed());
  TemporaryFolder folder;
  auto session = open_session(halving_while_loop(), folder);
  for (int run = 0; run < 2; ++run) {
    std::vector<float> x = random.normal(kFlowRows * kFlowInner);
    if (run == 1)
      for (float& v : x) v *= 8.0f;  // more iterations
    std::vector<double> v(x.begin(), x.end()), rows;
    int iterations = 0;
    double total = 0;
    do {
      ++iterations;
      total = 0;
      for (double& e : v) {
        e *= 0.5;
        total += std::abs(e);
      }
      for (int64_t r = 0; r < kFlowRows; ++r) {
        double sum = 0;
        for (int64_t c = 0; c < kFlowInner; ++c) sum += v[r * kFlowInner + c];
        rows.push_back(sum);
      }
    } while (total > 10.0);
    auto outputs = session->run({{"x", HostTensor::from_values<float>({kFlowRows, kFlowInner}, x)}});
    ASSERT_EQ(outputs.at("rows").shape(), (Shape{iterations, kFlowRows})) << "run " << run;
    const double v_error = rel_l2(values_of(outputs.at("v_final")), v);
    const double rows_error = rel_l2(values_of(outputs.at("rows")), rows);
    std::printf("run %d: %d iterations, rel L2 v %.2e, rows %.2e\n", run, iterations, v_error, rows_error);
    EXPECT_LT(v_error, 1e-6);
    EXPECT_LT(rows_error, 1e-5);
    EXPECT_TRUE(has_key(session->last_run(), "(read back)"));
  }
}

// Scan (opset 17) over x [3, T] along axis 1, in reverse: state s [3] (s0), each step
//   s = s + x[:, t];  out_t = s * 2   stacked along axis 0 in forward order of the steps taken.
onnx::ModelProto reverse_scan() {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "s0", onnx::TensorProto::FLOAT, {3});
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {3, 5});
  add_float_initializer(graph, "two", {}, {2.0f});
  onnx::NodeProto* scan = add_node(graph, "Scan", {"s0", "x"}, {"s_final", "outs"}, "accumulate");
  add_int_attribute(scan, "num_scan_inputs", 1);
  add_ints_attribute(scan, "scan_input_axes", {1});
  add_ints_attribute(scan, "scan_input_directions", {1});
  onnx::GraphProto* body = add_graph_attribute(scan, "body");
  add_tensor_value(body->mutable_input(), "s", onnx::TensorProto::FLOAT, {3});
  add_tensor_value(body->mutable_input(), "x_t", onnx::TensorProto::FLOAT, {3});
  add_node(body, "Add", {"s", "x_t"}, {"s_next"}, "accumulate");
  add_node(body, "Mul", {"s_next", "two"}, {"out"}, "double");
  add_float_output(body, "s_next");
  add_float_output(body, "out");
  add_float_output(graph, "s_final");
  add_float_output(graph, "outs");
  return model;
}

TEST(RuntimeControlFlow, ScanInReverseAlongAxisOne) {
  Random random(test_seed());
  TemporaryFolder folder;
  auto session = open_session(reverse_scan(), folder);
  const std::vector<float> s0 = random.normal(3), x = random.normal(15);
  auto outputs = session->run(
      {{"s0", HostTensor::from_values<float>({3}, s0)}, {"x", HostTensor::from_values<float>({3, 5}, x)}});
  std::vector<double> s(s0.begin(), s0.end()), outs;
  for (int64_t t = 4; t >= 0; --t) {
    for (int64_t k = 0; k < 3; ++k) s[k] += x[k * 5 + t];
    for (int64_t k = 0; k < 3; ++k) outs.push_back(2.0 * s[k]);
  }
  ASSERT_EQ(outputs.at("outs").shape(), (Shape{5, 3}));
  EXPECT_LT(rel_l2(values_of(outputs.at("s_final")), s), 1e-6);
  EXPECT_LT(rel_l2(values_of(outputs.at("outs")), outs), 1e-6);
}

// x [6, 4]: seq = SplitToSequence(x, split 2, axis 0) -> 3 parts [2, 4];
// seq = SequenceInsert(seq, last part * 10, at 0); seq = SequenceErase(seq, 1) (the first part);
// y = ConcatFromSequence(seq, axis 1) [2, 12]; n = SequenceLength(seq); z = SequenceAt(seq, -1).
onnx::ModelProto sequence_model() {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {6, 4});
  add_int64_initializer(graph, "two", {}, {2});
  add_int64_initializer(graph, "zero", {}, {0});
  add_int64_initializer(graph, "one", {}, {1});
  add_int64_initializer(graph, "minus_one", {}, {-1});
  add_float_initializer(graph, "ten", {}, {10.0f});
  add_node(graph, "SplitToSequence", {"x", "two"}, {"parts"}, "split");
  add_node(graph, "SequenceAt", {"parts", "minus_one"}, {"last"}, "last");
  add_node(graph, "Mul", {"last", "ten"}, {"last_scaled"}, "scale");
  add_node(graph, "SequenceInsert", {"parts", "last_scaled", "zero"}, {"inserted"}, "insert");
  add_node(graph, "SequenceErase", {"inserted", "one"}, {"erased"}, "erase");
  add_int_attribute(add_node(graph, "ConcatFromSequence", {"erased"}, {"y"}, "concat"), "axis", 1);
  add_node(graph, "SequenceLength", {"erased"}, {"n"}, "length");
  add_node(graph, "SequenceAt", {"erased", "minus_one"}, {"z"}, "at");
  add_float_output(graph, "y");
  add_tensor_value(graph->mutable_output(), "n", onnx::TensorProto::INT64, {});
  add_float_output(graph, "z");
  return model;
}

TEST(RuntimeControlFlow, SequencesSplitInsertEraseConcat) {
  Random random(test_seed());
  TemporaryFolder folder;
  auto session = open_session(sequence_model(), folder);
  const std::vector<float> x = random.normal(24);
  auto outputs = session->run({{"x", HostTensor::from_values<float>({6, 4}, x)}});
  // Parts p0 = rows 0-1, p1 = rows 2-3, p2 = rows 4-5; sequence after the edits: [p2 * 10, p1, p2].
  auto part = [&](int p, int64_t r, int64_t c) { return double(x[(2 * p + r) * 4 + c]); };
  std::vector<double> y;
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t c = 0; c < 4; ++c) y.push_back(double(float(part(2, r, c) * 10.0f)));
    for (int64_t c = 0; c < 4; ++c) y.push_back(part(1, r, c));
    for (int64_t c = 0; c < 4; ++c) y.push_back(part(2, r, c));
  }
  std::vector<double> z;
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 4; ++c) z.push_back(part(2, r, c));
  ASSERT_EQ(outputs.at("y").shape(), (Shape{2, 12}));
  EXPECT_LT(rel_l2(values_of(outputs.at("y")), y), 1e-6);
  EXPECT_EQ(outputs.at("n").to_int64(), (std::vector<int64_t>{3}));
  EXPECT_LT(rel_l2(values_of(outputs.at("z")), z), 1e-6);
}

// x [3, 5]: columns = SplitToSequence(x, axis 1, keepdims 0) (5 x [3]); c = SequenceAt(columns, 2);
// pair = SequenceConstruct(c, c * 10); stacked = ConcatFromSequence(pair, axis 0, new_axis 1) [2, 3];
// then through Optional / OptionalHasElement / OptionalGetElement; n = SequenceLength(columns).
onnx::ModelProto column_sequence_model() {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {3, 5});
  add_int64_initializer(graph, "two", {}, {2});
  add_float_initializer(graph, "ten", {}, {10.0f});
  onnx::NodeProto* split = add_node(graph, "SplitToSequence", {"x"}, {"columns"}, "columns");
  add_int_attribute(split, "axis", 1);
  add_int_attribute(split, "keepdims", 0);
  add_node(graph, "SequenceAt", {"columns", "two"}, {"column"}, "column");
  add_node(graph, "Mul", {"column", "ten"}, {"scaled"}, "scale");
  add_node(graph, "SequenceConstruct", {"column", "scaled"}, {"pair"}, "pair");
  onnx::NodeProto* stack = add_node(graph, "ConcatFromSequence", {"pair"}, {"stacked"}, "stack");
  add_int_attribute(stack, "axis", 0);
  add_int_attribute(stack, "new_axis", 1);
  add_node(graph, "Optional", {"stacked"}, {"maybe"}, "wrap");
  add_node(graph, "OptionalHasElement", {"maybe"}, {"has"}, "has");
  add_node(graph, "OptionalGetElement", {"maybe"}, {"got"}, "unwrap");
  add_node(graph, "SequenceLength", {"columns"}, {"n"}, "length");
  add_float_output(graph, "got");
  add_tensor_value(graph->mutable_output(), "has", onnx::TensorProto::BOOL, {});
  add_tensor_value(graph->mutable_output(), "n", onnx::TensorProto::INT64, {});
  return model;
}

TEST(RuntimeControlFlow, SequenceOfColumnsAndOptionals) {
  Random random(test_seed());
  TemporaryFolder folder;
  auto session = open_session(column_sequence_model(), folder);
  const std::vector<float> x = random.normal(15);
  auto outputs = session->run({{"x", HostTensor::from_values<float>({3, 5}, x)}});
  std::vector<double> reference;
  for (int64_t r = 0; r < 3; ++r) reference.push_back(x[r * 5 + 2]);
  for (int64_t r = 0; r < 3; ++r) reference.push_back(double(x[r * 5 + 2] * 10.0f));
  ASSERT_EQ(outputs.at("got").shape(), (Shape{2, 3}));
  EXPECT_LT(rel_l2(values_of(outputs.at("got")), reference), 1e-6);
  EXPECT_EQ(outputs.at("has").to_int64(), (std::vector<int64_t>{1}));
  EXPECT_EQ(outputs.at("n").to_int64(), (std::vector<int64_t>{5}));
}

template <typename Build>
std::string error_of(Build build, const std::map<std::string, HostTensor>& inputs) {
  TemporaryFolder folder;
  try {
    auto session = open_session(build(), folder);
    session->run(inputs);
  } catch (const ModelError& error) {
    std::printf("%s\n", error.what());
    return error.what();
  }
  return "(no error)";
}

TEST(RuntimeControlFlow, MalformedInputsAreNamedModelErrors) {
  const std::vector<float> x(kFlowRows * kFlowInner, 1.0f);
  // A float condition (If needs a single bool).
  std::string message = error_of(
      [] {
        onnx::ModelProto model = sign_switch();
        model.mutable_graph()->mutable_node(2)->set_input(0, "total");  // the float sum itself
        return model;
      },
      {{"x", HostTensor::from_values<float>({kFlowRows, kFlowInner}, x)}});
  EXPECT_NE(message.find("If 'sign_switch'"), std::string::npos) << message;
  EXPECT_NE(message.find("single bool"), std::string::npos) << message;

  // A trip count of two elements.
  message = error_of(
      [] {
        onnx::ModelProto model = recurrent_loop();
        model.mutable_graph()
            ->mutable_input(0)
            ->mutable_type()
            ->mutable_tensor_type()
            ->mutable_shape()
            ->add_dim()
            ->set_dim_value(2);
        return model;
      },
      {{"steps", HostTensor::from_values<int64_t>({2}, {1, 2})},
       {"s0", HostTensor::from_values<float>({8}, std::vector<float>(8, 0.0f))},
       {"x", HostTensor::from_values<float>({12, 8}, std::vector<float>(96, 0.0f))}});
  EXPECT_NE(message.find("Loop 'recurrence'"), std::string::npos) << message;
  EXPECT_NE(message.find("trip count"), std::string::npos) << message;

  // A Loop condition that is a float.
  message = error_of([] { return halving_while_loop("not_a_bool"); },
                     {{"x", HostTensor::from_values<float>({kFlowRows, kFlowInner}, x)}});
  EXPECT_NE(message.find("Loop 'halving'"), std::string::npos) << message;
  EXPECT_NE(message.find("condition"), std::string::npos) << message;

  // A loop that would never end: no trip count, its body passes its (true) condition on.
  message = error_of(
      [] {
        onnx::ModelProto model = halving_while_loop();
        onnx::GraphProto* body = model.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_g();
        body->mutable_output(0)->set_name("keep_going");
        return model;
      },
      {{"x", HostTensor::from_values<float>({kFlowRows, kFlowInner}, x)}});
  EXPECT_NE(message.find("Loop 'halving'"), std::string::npos) << message;
  EXPECT_NE(message.find("never end"), std::string::npos) << message;

  // A sequence where a tensor belongs.
  message = error_of(
      [] {
        onnx::ModelProto model = sequence_model();
        for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node())
          if (node.name() == "scale") node.set_input(0, "parts");
        return model;
      },
      {{"x", HostTensor::from_values<float>({6, 4}, std::vector<float>(24, 0.0f))}});
  EXPECT_NE(message.find("Mul 'scale'"), std::string::npos) << message;
  EXPECT_NE(message.find("is a sequence"), std::string::npos) << message;

  // A sequence position out of range.
  message = error_of(
      [] {
        onnx::ModelProto model = sequence_model();
        for (onnx::TensorProto& init : *model.mutable_graph()->mutable_initializer())
          if (init.name() == "minus_one") init.set_int64_data(0, -5);
        return model;
      },
      {{"x", HostTensor::from_values<float>({6, 4}, std::vector<float>(24, 0.0f))}});
  EXPECT_NE(message.find("SequenceAt 'last'"), std::string::npos) << message;
  EXPECT_NE(message.find("out of range"), std::string::npos) << message;
}

}  // namespace
}  // namespace onda::test
