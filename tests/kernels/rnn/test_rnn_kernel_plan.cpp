// RnnKernel is planned once and records many runs: a kernel built once records fresh inputs again
// and again (each run against the float64 reference, outputs poisoned first), refuses tensors it was
// not planned for, and a Session plans a recurrent node once per input shape, not once per run.
#include <gtest/gtest.h>

#include <cstring>

#include "gpu/command_recorder.h"
#include "harness.h"
#include "kernels/rnn/rnn_kernel.h"
#include "onda/session.h"
#include "test_rnn_reference.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

using kernels::rnn::CellType;
using kernels::rnn::Direction;
using kernels::rnn::RnnSpec;

// One layer's weights in ONNX layout, random.
struct WeightedLayer {
  RnnSpec spec;
  int64_t input = 0;
  std::vector<float> w, r, b;
};

WeightedLayer random_layer(Random& rng, CellType cell, Direction direction, int64_t input, int64_t hidden) {
  WeightedLayer l;
  l.spec.cell = cell;
  l.spec.direction = direction;
  l.spec.hidden_size = hidden;
  l.input = input;
  const int64_t gh = kernels::rnn::gate_count(cell) * hidden, d = l.spec.num_directions();
  l.w = rng.uniform(d * gh * input, -0.5, 0.5);
  l.r = rng.uniform(d * gh * hidden, -0.5, 0.5);
  l.b = rng.uniform(d * 2 * gh, -0.5, 0.5);
  return l;
}

// The reference's inputs for layer `l`: its weights, X [seq, batch, I] and h0 drawn from `rng` (X first).
RnnReferenceInputs reference_inputs(const WeightedLayer& l, int64_t seq, int64_t batch, Random& rng) {
  RnnReferenceInputs ref;
  ref.seq = seq;
  ref.batch = batch;
  ref.input = l.input;
  ref.x = rng.uniform(seq * batch * l.input, -1, 1);
  ref.h0 = rng.uniform(l.spec.num_directions() * batch * l.spec.hidden_size, -1, 1);
  ref.w = l.w;
  ref.r = l.r;
  ref.b = l.b;
  return ref;
}

// The worst rel L2 of Y and Y_h against the float64 reference for X [seq, batch, I] and h0 drawn from
// `rng`, recorded by `kernel`; `dispatches`, when given, receives the dispatches recorded.
double run_once(const kernels::rnn::RnnKernel& kernel, const WeightedLayer& l, int64_t seq, int64_t batch,
                Random& rng, size_t* dispatches = nullptr) {
  auto& g = gpu();
  const RnnReferenceInputs ref = reference_inputs(l, seq, batch, rng);
  const int64_t d = l.spec.num_directions(), h = l.spec.hidden_size;
  const RnnReferenceOutputs want = rnn_reference(l.spec, ref);
  kernels::rnn::RnnInputs in;
  in.x = upload_floats(ref.x, DType::f32, {seq, batch, l.input});
  in.initial_h = upload_floats(ref.h0, DType::f32, {d, batch, h});
  kernels::rnn::RnnOutputs out;
  out.y = poisoned(DType::f32, kernels::rnn::rnn_y_shape(l.spec, in.x.shape()));
  out.y_h = poisoned(DType::f32, kernels::rnn::rnn_state_shape(l.spec, in.x.shape()));
  gpu::CommandRecorder recorder(g.context);
  kernel.record(recorder, g.pool, in, out);
  if (dispatches) *dispatches = recorder.dispatch_count();
  recorder.submit_and_wait();
  return std::max(rel_l2(out.y.download_floats(g.context), want.y),
                  rel_l2(out.y_h.download_floats(g.context), want.y_h));
}

struct Planned {
  std::shared_ptr<const kernels::rnn::RnnWeights> weights;
  std::unique_ptr<kernels::rnn::RnnKernel> kernel;
};

Planned plan(const WeightedLayer& l, int64_t seq, int64_t batch, const kernels::rnn::RnnOptions& options) {
  auto& g = gpu();
  kernels::KernelContext k{g.context, g.pipelines};
  const int64_t gh = kernels::rnn::gate_count(l.spec.cell) * l.spec.hidden_size, d = l.spec.num_directions();
  gpu::CommandRecorder recorder(g.context);
  Planned p;
  p.weights = std::make_shared<const kernels::rnn::RnnWeights>(kernels::rnn::prepare_rnn_weights(
      k, recorder, g.pool, l.spec, upload_floats(l.w, DType::f32, {d, gh, l.input}),
      upload_floats(l.r, DType::f32, {d, gh, l.spec.hidden_size}),
      upload_floats(l.b, DType::f32, {d, 2 * gh}), {}));
  kernels::rnn::RnnProblem problem;
  problem.x_shape = {seq, batch, l.input};
  problem.y = problem.y_h = true;
  p.kernel =
      std::make_unique<kernels::rnn::RnnKernel>(k, recorder, g.pool, l.spec, p.weights, problem, options);
  recorder.submit_and_wait();
  return p;
}

TEST(RnnKernelPlan, OnePlanRecordsEveryRun) {
  const uint64_t seed = test_seed();
  Random rng(seed);
  struct Shape_ {
    CellType cell;
    Direction direction;
    int64_t seq, batch, hidden;
    uint64_t max_projection_bytes;  // small: the projection in chunks, the last one shorter
    kernels::rnn::StepMode mode;
  };
  const Shape_ shapes[] = {
      {CellType::gru, Direction::forward, 1, 1, 24, 0,
       kernels::rnn::StepMode::automatic},  // a streaming frame
      {CellType::gru, Direction::forward, 5, 2, 12, 0,
       kernels::rnn::StepMode::per_step},  // two phases per step
      {CellType::lstm, Direction::bidirectional, 7, 3, 8, 3 * 3 * 2 * 32 * 4,
       kernels::rnn::StepMode::automatic},
      {CellType::lstm, Direction::forward, 6, 2, 8, 0, kernels::rnn::StepMode::row_sequence},
  };
  for (const Shape_& s : shapes) {
    const WeightedLayer l = random_layer(rng, s.cell, s.direction, 5, s.hidden);
    kernels::rnn::RnnOptions options;
    options.max_projection_bytes = s.max_projection_bytes;
    options.step_mode = s.mode;
    const uint64_t planned = kernels::rnn::rnn_kernels_planned();
    const Planned p = plan(l, s.seq, s.batch, options);
    EXPECT_EQ(kernels::rnn::rnn_kernels_planned(), planned + 1);
    for (int run = 0; run < 3; ++run) {
      size_t dispatches = 0;
      const double e = run_once(*p.kernel, l, s.seq, s.batch, rng, &dispatches);
      // A streaming frame (one step, batch 1, GRU): h0 widened into the state, the projection GEMM,
      // the step (two phases for linear_before_reset=0), whichever kernel this adapter runs.
      if (s.seq == 1) {
        EXPECT_EQ(dispatches, 2u + kernels::rnn::rnn_dispatches_per_step(l.spec));
      }
      std::printf("  %s S=%lld B=%lld H=%lld (%s) run %d: rel L2 %.2e\n",
                  s.cell == CellType::gru ? "GRU" : "LSTM", static_cast<long long>(s.seq),
                  static_cast<long long>(s.batch), static_cast<long long>(s.hidden),
                  kernels::rnn::rnn_kernel_name(p.kernel->plan().kind), run, e);
      EXPECT_LE(e, 1e-6) << "run " << run << " seed " << seed;
    }
    EXPECT_EQ(kernels::rnn::rnn_kernels_planned(), planned + 1) << "recording planned again";
    // Another sequence length is another problem: refused, not recorded with the wrong plan.
    EXPECT_THROW(run_once(*p.kernel, l, s.seq + 1, s.batch, rng), std::invalid_argument);
  }
}

// A GRU node over X [T, 1, I] (T symbolic), constant W, R, B: Y and Y_h.
std::vector<std::byte> gru_model(const WeightedLayer& l) {
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  auto* x = add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 1, l.input});
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("T");
  add_tensor_value(graph->mutable_input(), "h0", onnx::TensorProto::FLOAT, {1, 1, l.spec.hidden_size});
  const int64_t gh = 3 * l.spec.hidden_size;
  add_float_initializer(graph, "W", {1, gh, l.input}, l.w);
  add_float_initializer(graph, "R", {1, gh, l.spec.hidden_size}, l.r);
  add_float_initializer(graph, "B", {1, 2 * gh}, l.b);
  auto* gru = add_node(graph, "GRU", {"x", "W", "R", "B", "", "h0"}, {"y", "hn"});
  add_int_attribute(gru, "hidden_size", l.spec.hidden_size);
  auto* y =
      add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {1, 1, 1, l.spec.hidden_size});
  y->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("T");
  add_tensor_value(graph->mutable_output(), "hn", onnx::TensorProto::FLOAT, {1, 1, l.spec.hidden_size});
  const std::string bytes = model.SerializeAsString();
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

TEST(RnnKernelPlan, ASessionPlansANodeOncePerInputShape) {
  const uint64_t seed = test_seed();
  Random rng(seed);
  const WeightedLayer l = random_layer(rng, CellType::gru, Direction::forward, 16, 32);
  auto session = Session::open_bytes(gru_model(l));
  const auto run = [&](int64_t steps) {
    const RnnReferenceInputs ref = reference_inputs(l, steps, 1, rng);
    const auto out =
        session->run({{"x", HostTensor::from_values<float>({steps, 1, l.input}, ref.x)},
                      {"h0", HostTensor::from_values<float>({1, 1, l.spec.hidden_size}, ref.h0)}});
    const RnnReferenceOutputs want = rnn_reference(l.spec, ref);
    const auto y = out.at("y").values<float>();
    const auto hn = out.at("hn").values<float>();
    EXPECT_LE(rel_l2({y.begin(), y.end()}, want.y), 1e-6) << steps << " steps, seed " << seed;
    EXPECT_LE(rel_l2({hn.begin(), hn.end()}, want.y_h), 1e-6) << steps << " steps, seed " << seed;
  };
  const uint64_t before = kernels::rnn::rnn_kernels_planned();
  for (int frame = 0; frame < 3; ++frame) run(1);
  EXPECT_EQ(kernels::rnn::rnn_kernels_planned(), before + 1) << "three runs of one shape: one plan";
  run(4);
  run(4);
  EXPECT_EQ(kernels::rnn::rnn_kernels_planned(), before + 2) << "a new shape: planned once more";
}

// A GRU whose W is a large initializer (uploaded by the walk): once the node has packed its weights,
// the walk drops W's upload (the packed form is all the layer reads) and later runs (planned,
// replayed) pass W without uploading it, with the same outputs bit for bit.
TEST(RnnKernelPlan, PackedWeightsReplaceTheirUpload) {
  const uint64_t seed = test_seed();
  Random rng(seed);
  const WeightedLayer l = random_layer(rng, CellType::gru, Direction::forward, 256, 128);  // W: 98304 floats
  auto session = Session::open_bytes(gru_model(l));
  const int64_t steps = 4;
  const RnnReferenceInputs ref = reference_inputs(l, steps, 1, rng);
  const RnnReferenceOutputs want = rnn_reference(l.spec, ref);
  const uint64_t w_bytes = l.w.size() * sizeof(float), r_bytes = l.r.size() * sizeof(float);
  std::vector<float> first;
  for (int run = 0; run < 4; ++run) {
    const auto out =
        session->run({{"x", HostTensor::from_values<float>({steps, 1, l.input}, ref.x)},
                      {"h0", HostTensor::from_values<float>({1, 1, l.spec.hidden_size}, ref.h0)}});
    const auto y = out.at("y").values<float>();
    const std::vector<float> values(y.begin(), y.end());
    const uint64_t held = session->last_run().weight_bytes;
    std::printf("  run %d: weights held %llu bytes (W %llu, R %llu), rel L2 %.3g\n", run + 1,
                static_cast<unsigned long long>(held), static_cast<unsigned long long>(w_bytes),
                static_cast<unsigned long long>(r_bytes), rel_l2(values, want.y));
    EXPECT_LE(rel_l2(values, want.y), 1e-6) << "run " << run + 1 << " seed " << seed;
    // Held: W and R packed (at least their bytes) and R's upload (a host-sized constant); W's upload
    // would add another W.
    EXPECT_LT(held, 2 * w_bytes + 2 * r_bytes) << "run " << run + 1 << ": W's upload is still held";
    if (run == 0) first = values;
    EXPECT_EQ(std::memcmp(first.data(), values.data(), values.size() * sizeof(float)), 0)
        << "run " << run + 1;
  }
}

}  // namespace
}  // namespace onda::test
