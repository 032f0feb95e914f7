// onda::Stream (include/onda/stream.h): a frame-by-frame model with its states fed back on the GPU.
// A one-step GRU streamed over N frames matches a float64 GRU, the same GRU run over the whole
// sequence at once, and a host loop that feeds the state back through host memory (bit for bit);
// RunStats shows that only the frames cross between host and GPU. Also: the default pairing of
// outputs to inputs by name, explicit pairs, initial values, reset() and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "harness.h"
#include "onda/error.h"
#include "onda/stream.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

constexpr int64_t kGruIn = 80, kGruHidden = 72;  // over the 64 elements below which inputs are also host values

struct GruWeights {
  std::vector<float> w, r, b;  // ONNX layout, gates z, r, h: W [1, 3H, I], R [1, 3H, H], B [1, 6H]
};

GruWeights random_gru(Random& random) {
  return {random.normal(3 * kGruHidden * kGruIn, 0.0, 0.15), random.normal(3 * kGruHidden * kGruHidden, 0.0, 0.15),
          random.normal(6 * kGruHidden, 0.0, 0.1)};
}

// GRU over `steps` frames: X [steps, 1, I], h0 [1, 1, H] -> y (the GRU's Y) [steps, 1, 1, H], hn.
std::vector<std::byte> gru_model(const GruWeights& g, int64_t steps, const std::string& h_in,
                                 const std::string& h_out) {
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "frame", onnx::TensorProto::FLOAT, {steps, 1, kGruIn});
  add_tensor_value(graph->mutable_input(), h_in, onnx::TensorProto::FLOAT, {1, 1, kGruHidden});
  add_float_initializer(graph, "W", {1, 3 * kGruHidden, kGruIn}, g.w);
  add_float_initializer(graph, "R", {1, 3 * kGruHidden, kGruHidden}, g.r);
  add_float_initializer(graph, "B", {1, 6 * kGruHidden}, g.b);
  auto* gru = add_node(graph, "GRU", {"frame", "W", "R", "B", "", h_in}, {"y", h_out});
  add_int_attribute(gru, "hidden_size", kGruHidden);
  add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {steps, 1, 1, kGruHidden});
  add_tensor_value(graph->mutable_output(), h_out, onnx::TensorProto::FLOAT, {1, 1, kGruHidden});
  return as_bytes(model.SerializeAsString());
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// One GRU step in float64 (ONNX's equations, linear_before_reset = 0).
std::vector<double> gru_step(const GruWeights& g, const float* x, const std::vector<double>& h) {
  auto gate = [&](int k, int64_t j, const std::vector<double>& hidden) {
    double sum = g.b[k * kGruHidden + j] + g.b[(3 + k) * kGruHidden + j];
    for (int64_t i = 0; i < kGruIn; ++i) sum += g.w[(k * kGruHidden + j) * kGruIn + i] * x[i];
    for (int64_t i = 0; i < kGruHidden; ++i) sum += g.r[(k * kGruHidden + j) * kGruHidden + i] * hidden[i];
    return sum;
  };
  std::vector<double> z(kGruHidden), r(kGruHidden), reset_h(kGruHidden), next(kGruHidden);
  for (int64_t j = 0; j < kGruHidden; ++j) {
    z[j] = sigmoid(gate(0, j, h));
    r[j] = sigmoid(gate(1, j, h));
    reset_h[j] = r[j] * h[j];
  }
  for (int64_t j = 0; j < kGruHidden; ++j) {
    const double candidate = std::tanh(gate(2, j, reset_h));
    next[j] = (1 - z[j]) * candidate + z[j] * h[j];
  }
  return next;
}

TEST(Stream, GruFramesMatchFloat64TheWholeSequenceAndAHostLoop) {
  Random random(test_seed());
  const GruWeights g = random_gru(random);
  constexpr int64_t kFrames = 12;
  const std::vector<float> x = random.normal(kFrames * kGruIn);
  auto device = Device::open();
  std::shared_ptr<Session> streaming = Session::open_bytes(gru_model(g, 1, "h0", "hn"), {}, device);
  auto whole = Session::open_bytes(gru_model(g, kFrames, "h0", "hn"), {}, device);
  auto host_loop = Session::open_bytes(gru_model(g, 1, "h0", "hn"), {}, device);

  Stream stream(streaming);
  EXPECT_EQ(stream.state_pairs(), (std::map<std::string, std::string>{{"hn", "h0"}}));
  EXPECT_EQ(stream.frame_inputs(), std::vector<std::string>{"frame"});
  EXPECT_EQ(stream.frame_outputs(), std::vector<std::string>{"y"});

  const HostTensor zeros(DType::f32, {1, 1, kGruHidden});
  const auto sequence =
      whole->run({{"frame", HostTensor::from_values<float>({kFrames, 1, kGruIn}, x)}, {"h0", zeros}}).at("y");
  HostTensor h_host = zeros;
  std::vector<double> h_ref(kGruHidden, 0.0);
  std::vector<float> streamed;
  for (int64_t t = 0; t < kFrames; ++t) {
    const HostTensor frame = HostTensor::from_values<float>(
        {1, 1, kGruIn}, std::vector<float>(x.begin() + t * kGruIn, x.begin() + (t + 1) * kGruIn));
    const auto out = stream.step({{"frame", frame}});
    ASSERT_EQ(out.size(), 1u) << "only the frame output comes back";
    const RunStats& stats = stream.last_run();
    EXPECT_EQ(stats.host_upload_bytes, static_cast<uint64_t>(kGruIn * 4))
        << "only the frame goes up, frame " << t;
    EXPECT_EQ(stats.host_download_bytes, static_cast<uint64_t>(kGruHidden * 4))
        << "only y comes back, frame " << t;

    const auto reference = host_loop->run({{"frame", frame}, {"h0", h_host}});
    EXPECT_TRUE(same_bits(out.at("y"), reference.at("y"))) << "frame " << t;
    h_host = reference.at("hn");
    EXPECT_TRUE(same_bits(stream.states().at("h0").download(), h_host)) << "frame " << t;

    h_ref = gru_step(g, x.data() + t * kGruIn, h_ref);
    const auto y = out.at("y").values<float>();
    EXPECT_LT(rel_l2({y.begin(), y.end()}, h_ref), 1e-5) << "frame " << t;
    streamed.insert(streamed.end(), y.begin(), y.end());
  }
  EXPECT_EQ(stream.steps(), kFrames);
  const auto whole_y = sequence.values<float>();
  EXPECT_LT(rel_l2(streamed, std::vector<double>(whole_y.begin(), whole_y.end())), 1e-6);

  // reset(): the same frames give the same outputs again.
  stream.reset();
  EXPECT_EQ(stream.steps(), 0);
  const HostTensor first =
      HostTensor::from_values<float>({1, 1, kGruIn}, std::vector<float>(x.begin(), x.begin() + kGruIn));
  const HostTensor again_y = stream.step({{"frame", first}}).at("y");  // kept: values() is a view
  const auto again = again_y.values<float>();
  EXPECT_TRUE(std::equal(again.begin(), again.end(), streamed.begin()));
}

// cache_out = cache_in + x, y = 2 cache_out: an accumulating state, with any name pairs.
std::vector<std::byte> accumulator_model(const std::string& cache_in, const std::string& cache_out,
                                         int64_t width, bool dynamic_rows = false) {
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, width});
  auto* cache = add_tensor_value(graph->mutable_input(), cache_in, onnx::TensorProto::FLOAT, {1, width});
  if (dynamic_rows) {  // rows named, not numbered: bound at run time
    cache->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("rows");
  }
  add_float_initializer(graph, "two", {}, {2.0f});
  add_node(graph, "Add", {cache_in, "x"}, {cache_out});
  add_node(graph, "Mul", {cache_out, "two"}, {"y"});
  add_float_output(graph, "y");
  add_float_output(graph, cache_out);
  return as_bytes(model.SerializeAsString());
}

TEST(Stream, AccumulatingStateWithExplicitPairsAndInitialValues) {
  Random random(test_seed());
  constexpr int64_t kWidth = 100;
  auto device = Device::open();
  std::shared_ptr<Session> session =
      Session::open_bytes(accumulator_model("acc", "total", kWidth), {}, device);
  EXPECT_THROW(Stream{session}, InputError) << "no name rule pairs 'total' with 'acc'";
  StreamOptions options;
  options.state = {{"total", "acc"}};
  const std::vector<float> start = random.normal(kWidth);
  options.initial["acc"] = HostTensor::from_values<float>({1, kWidth}, start);
  Stream stream(session, options);
  std::vector<double> sum(start.begin(), start.end());
  for (int t = 0; t < 6; ++t) {
    const std::vector<float> x = random.normal(kWidth);
    const HostTensor y_tensor = stream.step({{"x", HostTensor::from_values<float>({1, kWidth}, x)}}).at("y");
    const auto y = y_tensor.values<float>();
    std::vector<double> expected(kWidth);
    for (int64_t i = 0; i < kWidth; ++i) {
      sum[i] += x[i];
      expected[i] = 2 * sum[i];
    }
    EXPECT_LT(rel_l2({y.begin(), y.end()}, expected), 1e-6) << "frame " << t;
    EXPECT_EQ(stream.last_run().host_download_bytes, static_cast<uint64_t>(kWidth * 4));
  }
  stream.reset();
  EXPECT_EQ(stream.states().at("acc").download().values<float>()[0], start[0])
      << "reset restores the initial value";

  // The frame from GPU memory and its output left there: nothing crosses at all.
  const std::vector<float> x = random.normal(kWidth);
  const DeviceTensor x_device = DeviceTensor::upload(device, HostTensor::from_values<float>({1, kWidth}, x));
  const RunOutputs on_gpu = stream.step({}, {{"x", x_device}}, {"y"});
  EXPECT_TRUE(on_gpu.host.empty());
  ASSERT_EQ(on_gpu.device.size(), 1u) << "y only: the state output is the stream's";
  EXPECT_EQ(stream.last_run().host_upload_bytes, 0u);
  EXPECT_EQ(stream.last_run().host_download_bytes, 0u);
  const HostTensor y_back = on_gpu.device.at("y").download();
  const auto y_values = y_back.values<float>();
  std::vector<double> expected(kWidth);
  for (int64_t i = 0; i < kWidth; ++i) expected[i] = 2.0 * (static_cast<double>(start[i]) + x[i]);
  EXPECT_LT(rel_l2({y_values.begin(), y_values.end()}, expected), 1e-6);
  EXPECT_THROW(stream.step({}, {{"x", x_device}}, {"total"}), InputError) << "a state output is no frame output";

  // Errors, each naming what is wrong.
  EXPECT_THROW(
      stream.step({{"x", HostTensor(DType::f32, {1, kWidth})}, {"acc", HostTensor(DType::f32, {1, kWidth})}}),
      InputError);
  StreamOptions bad;
  bad.state = {{"nope", "acc"}};
  EXPECT_THROW(Stream(session, bad), InputError);
  bad.state = {{"total", "nope"}};
  EXPECT_THROW(Stream(session, bad), InputError);
  bad.state = {{"total", "acc"}};
  bad.initial["x"] = HostTensor(DType::f32, {1, kWidth});
  EXPECT_THROW(Stream(session, bad), InputError) << "x is no state";
  std::shared_ptr<Session> dynamic =
      Session::open_bytes(accumulator_model("cache_in", "cache_out", kWidth, true), {}, device);
  try {
    Stream refused(dynamic);
    ADD_FAILURE() << "a dynamic state shape without an initial value was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cache_in"), std::string::npos) << e.what();
  }
}

// The documented thread rule (docs/library.md): one Session may be called from several threads (its
// runs are serialised by the Device's lock), and each Stream is one sequence of frames. Three
// threads, each with its own Stream over one shared GRU Session, give what serial runs give, bit for bit.
TEST(Stream, ConcurrentStreamsOverOneSessionMatchSerialRuns) {
  Random random(test_seed());
  const GruWeights g = random_gru(random);
  constexpr int kThreads = 3, kFrames = 8;
  std::shared_ptr<Session> session = Session::open_bytes(gru_model(g, 1, "h0", "hn"));
  std::vector<std::vector<HostTensor>> frames(kThreads);
  for (auto& sequence : frames)
    for (int t = 0; t < kFrames; ++t) sequence.push_back(HostTensor::from_values<float>({1, 1, kGruIn}, random.normal(kGruIn)));
  auto run_sequence = [&](int k, std::vector<HostTensor>& outputs) {
    Stream stream(session);
    for (const auto& frame : frames[k]) outputs.push_back(stream.step({{"frame", frame}}).at("y"));
  };
  std::vector<std::vector<HostTensor>> serial(kThreads), parallel(kThreads);
  for (int k = 0; k < kThreads; ++k) run_sequence(k, serial[k]);
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) threads.emplace_back([&, k] { run_sequence(k, parallel[k]); });
  for (auto& thread : threads) thread.join();
  for (int k = 0; k < kThreads; ++k) {
    ASSERT_EQ(parallel[k].size(), static_cast<size_t>(kFrames));
    for (int t = 0; t < kFrames; ++t) EXPECT_TRUE(same_bits(parallel[k][t], serial[k][t])) << "thread " << k << " frame " << t;
  }
  // The sequences differ from each other: each stream kept its own state.
  EXPECT_FALSE(same_bits(serial[0].back(), serial[1].back()));
}

TEST(Stream, DefaultPairsFollowTheNames) {
  auto spec = [](const std::string& name, DType dtype = DType::f32, Shape shape = {1, 4}) {
    return TensorSpec{name, dtype, shape, {}};
  };
  using Pairs = std::map<std::string, std::string>;
  EXPECT_EQ(
      default_state_pairs({spec("frame"), spec("state_in"), spec("cache_in_0"), spec("conv_cache")},
                          {spec("mask"), spec("state_out"), spec("cache_out_0"), spec("conv_cache_out")}),
      (Pairs{{"state_out", "state_in"}, {"cache_out_0", "cache_in_0"}, {"conv_cache_out", "conv_cache"}}));
  EXPECT_EQ(default_state_pairs({spec("x"), spec("h0"), spec("c0")}, {spec("y"), spec("hn"), spec("cn")}),
            (Pairs{{"hn", "h0"}, {"cn", "c0"}}));
  EXPECT_EQ(default_state_pairs({spec("input"), spec("state"), spec("h")},
                                {spec("output"), spec("stateN"), spec("hn")}),
            (Pairs{{"stateN", "state"}, {"hn", "h"}}));
  EXPECT_EQ(default_state_pairs({spec("spec"), spec("States")}, {spec("mask"), spec("new_states")}),
            (Pairs{{"new_states", "States"}}));
  // Frames named in/out are not states; a dtype or shape that differs is no pair.
  EXPECT_EQ(default_state_pairs({spec("audio_in"), spec("input")}, {spec("audio_out"), spec("output")}),
            Pairs{});
  EXPECT_EQ(default_state_pairs({spec("state_in", DType::i64)}, {spec("state_out")}), Pairs{});
  EXPECT_EQ(
      default_state_pairs({spec("state_in", DType::f32, {1, 8})}, {spec("state_out", DType::f32, {1, 4})}),
      Pairs{});
  EXPECT_THROW(default_state_pairs({spec("state")}, {spec("state_out"), spec("stateN")}), InputError);
}

}  // namespace
}  // namespace onda::test
