// The public C++ API around Session (include/onda/): version, models opened from memory with an
// external-data resolver, one Device shared by sessions on several threads, and DeviceTensors that
// keep a streaming model's state on the GPU between runs. Every result is checked against a float64
// reference of the same inputs, and the device paths against the host path bit for bit. (Inside onda
// the public onda::Tensor is spelled HostTensor: the tests also see the GPU tensor class.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "harness.h"
#include "onda/error.h"
#include "onda/version.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

constexpr int64_t kApiWidth = 96;  // over the 64 elements below which float inputs are also host values

// A recurrent step: h' = tanh(x + h W), y = 2 h'. W is an initializer, inline or external data.
onnx::ModelProto recurrent_step(const std::vector<float>& w, bool external_w) {
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, kApiWidth});
  add_tensor_value(graph->mutable_input(), "h", onnx::TensorProto::FLOAT, {1, kApiWidth});
  add_float_initializer(graph, "W", {kApiWidth, kApiWidth}, w);
  if (external_w) {
    onnx::TensorProto* tensor = graph->mutable_initializer(0);
    tensor->clear_raw_data();
    tensor->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* location = tensor->add_external_data();
    location->set_key("location");
    location->set_value("weights/w.bin");
  }
  add_float_initializer(graph, "two", {}, {2.0f});
  add_node(graph, "MatMul", {"h", "W"}, {"hw"});
  add_node(graph, "Add", {"x", "hw"}, {"pre"});
  add_node(graph, "Tanh", {"pre"}, {"h_next"});
  add_node(graph, "Mul", {"h_next", "two"}, {"y"});
  add_float_output(graph, "y");
  add_float_output(graph, "h_next");
  return model;
}

std::vector<double> step_reference(const std::vector<float>& x, const std::vector<double>& h,
                                   const std::vector<float>& w) {
  std::vector<double> next(kApiWidth);
  for (int64_t j = 0; j < kApiWidth; ++j) {
    double sum = x[j];
    for (int64_t k = 0; k < kApiWidth; ++k) sum += h[k] * w[k * kApiWidth + j];
    next[j] = std::tanh(sum);
  }
  return next;
}

TEST(PublicApi, VersionMacrosMatchTheLibrary) {
  const Version v = version();
  EXPECT_EQ(v.major, ONDA_VERSION_MAJOR);
  EXPECT_EQ(v.minor, ONDA_VERSION_MINOR);
  EXPECT_EQ(v.patch, ONDA_VERSION_PATCH);
  EXPECT_STREQ(version_string(), ONDA_VERSION_STRING);
  EXPECT_EQ(std::string(version_string()),
            std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch));
}

TEST(PublicApi, OpenBytesResolvesExternalDataAndMatchesTheFile) {
  Random r(test_seed());
  const std::vector<float> w = r.normal(kApiWidth * kApiWidth, 0.0, 0.1);
  const std::vector<float> x = r.normal(kApiWidth), h = r.normal(kApiWidth);
  std::vector<std::byte> w_bytes(w.size() * sizeof(float));
  std::memcpy(w_bytes.data(), w.data(), w_bytes.size());
  const auto model = as_bytes(recurrent_step(w, true).SerializeAsString());

  std::vector<std::string> asked;
  auto device = Device::open();
  auto session = Session::open_bytes(model, {}, device, [&](const std::string& location) {
    asked.push_back(location);
    return w_bytes;
  });
  EXPECT_EQ(asked, std::vector<std::string>{"weights/w.bin"});
  EXPECT_EQ(session->device(), device);
  ASSERT_EQ(session->inputs().size(), 2u);
  EXPECT_EQ(session->inputs()[0].name, "x");
  EXPECT_EQ(session->inputs()[0].shape, (Shape{1, kApiWidth}));
  const auto out = session->run({{"x", HostTensor::view(DType::f32, {1, kApiWidth}, x.data(), x.size() * 4)},
                                 {"h", HostTensor::from_values<float>({1, kApiWidth}, h)}});
  const std::vector<double> next = step_reference(x, std::vector<double>(h.begin(), h.end()), w);
  EXPECT_LT(rel_l2(values_of(out.at("h_next")), next), 1e-5);

  // The same model with inline weights, from a file: the same bits.
  TemporaryFolder folder;
  auto from_file = open_session(recurrent_step(w, false), folder);
  const auto file_out = from_file->run({{"x", HostTensor::from_values<float>({1, kApiWidth}, x)},
                                        {"h", HostTensor::from_values<float>({1, kApiWidth}, h)}});
  EXPECT_TRUE(same_bits(out.at("y"), file_out.at("y")));

  // No resolver, a failing resolver, garbage bytes: ModelErrors (an onda::Error) that say why.
  try {
    Session::open_bytes(model, {}, device);
    FAIL() << "no error without a resolver";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("resolver"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Session::open_bytes(
                   model, {}, device,
                   [](const std::string&) -> std::vector<std::byte> { throw std::runtime_error("gone"); }),
               ModelError);
  const auto garbage = as_bytes("not an onnx model at all");
  EXPECT_THROW(Session::open_bytes(garbage, {}, device), ModelError);
}

TEST(PublicApi, ViewInputsRewrittenBetweenRunsAreReadAfresh) {
  // A replayed run compares host-side inputs with the captured run's: a caller's buffer rewritten in
  // place must not look unchanged. Int64 `k` scales the output through a host-evaluated Cast.
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, kApiWidth});
  add_tensor_value(graph->mutable_input(), "k", onnx::TensorProto::INT64, {1});
  add_int_attribute(add_node(graph, "Cast", {"k"}, {"kf"}), "to", onnx::TensorProto::FLOAT);
  add_node(graph, "Mul", {"x", "kf"}, {"y"});
  add_float_output(graph, "y");
  auto session = Session::open_bytes(as_bytes(model.SerializeAsString()));
  Random r(test_seed());
  const std::vector<float> x = r.normal(kApiWidth);
  int64_t k = 1;
  for (int64_t value : {1, 1, 1, 3, 3, 5}) {
    k = value;
    const auto out = session->run({{"x", HostTensor::from_values<float>({1, kApiWidth}, x)},
                                   {"k", HostTensor::view(DType::i64, {1}, &k, sizeof k)}});
    std::vector<double> ref(x.begin(), x.end());
    for (double& v : ref) v *= static_cast<double>(value);
    EXPECT_LT(rel_l2(values_of(out.at("y")), ref), 1e-6) << "k = " << value;
  }
}

TEST(PublicApi, DeviceTensorStateStaysOnTheGpu) {
  Random r(test_seed());
  const std::vector<float> w = r.normal(kApiWidth * kApiWidth, 0.0, 0.1);
  auto device = Device::open();
  const auto model = as_bytes(recurrent_step(w, false).SerializeAsString());
  auto host_path = Session::open_bytes(model, {}, device);
  auto device_path = Session::open_bytes(model, {}, device);

  std::vector<float> h0 = r.normal(kApiWidth);
  HostTensor h_host = HostTensor::from_values<float>({1, kApiWidth}, h0);
  DeviceTensor h_device = DeviceTensor::upload(device, h_host);
  EXPECT_EQ(h_device.shape(), (Shape{1, kApiWidth}));
  EXPECT_TRUE(same_bits(h_device.download(), h_host));
  std::vector<double> h_ref(h0.begin(), h0.end());
  // Five steps: recorded, captured, then replayed runs, with the state fed back each time.
  for (int step = 0; step < 5; ++step) {
    const std::vector<float> x = r.normal(kApiWidth);
    const HostTensor xt = HostTensor::from_values<float>({1, kApiWidth}, x);
    const auto host_out = host_path->run({{"x", xt}, {"h", h_host}});
    const auto device_out = device_path->run_device({{"x", xt}}, {{"h", h_device}});
    const RunStats& stats = device_path->last_run();
    EXPECT_EQ(stats.host_upload_bytes, static_cast<uint64_t>(kApiWidth * 4)) << "only x crosses, step " << step;
    EXPECT_EQ(stats.host_download_bytes, 0u) << "step " << step;
    EXPECT_EQ(host_path->last_run().host_download_bytes, static_cast<uint64_t>(2 * kApiWidth * 4));
    h_ref = step_reference(x, h_ref, w);
    EXPECT_LT(rel_l2(values_of(host_out.at("h_next")), h_ref), 1e-5) << "step " << step;
    // The state that never left the GPU is the host path's, bit for bit.
    const DeviceTensor previous = h_device;
    h_device = device_out.at("h_next");
    EXPECT_TRUE(same_bits(h_device.download(), host_out.at("h_next"))) << "step " << step;
    EXPECT_TRUE(same_bits(device_out.at("y").download(), host_out.at("y"))) << "step " << step;
    // Outputs are the caller's: the next run does not overwrite the one before.
    if (step > 0) {
      EXPECT_FALSE(same_bits(previous.download(), h_device.download()));
    }
    h_host = host_out.at("h_next");
  }
  // A device output can be the input of a plain run too, and a foreign device's tensor is refused.
  const auto mixed = host_path->run({{"x", HostTensor::from_values<float>({1, kApiWidth}, r.normal(kApiWidth))}},
                                    {{"h", h_device}});
  EXPECT_EQ(mixed.at("y").shape(), (Shape{1, kApiWidth}));
  auto other = Device::open();
  const DeviceTensor foreign = DeviceTensor::upload(other, h_host);
  EXPECT_THROW(host_path->run({{"x", h_host}}, {{"h", foreign}}), ModelError);
  EXPECT_THROW(host_path->run({{"x", h_host}, {"h", h_host}}, {{"h", h_device}}), ModelError);
}

TEST(PublicApi, ConcurrentSessionsOnOneDeviceMatchSerialRuns) {
  Random r(test_seed());
  const std::vector<float> w = r.normal(kApiWidth * kApiWidth, 0.0, 0.1);
  const auto model = as_bytes(recurrent_step(w, false).SerializeAsString());
  constexpr int kThreads = 4, kRuns = 4;
  std::vector<std::vector<HostTensor>> xs(kThreads), hs(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    for (int k = 0; k < kRuns; ++k) {
      xs[t].push_back(HostTensor::from_values<float>({1, kApiWidth}, r.normal(kApiWidth)));
      hs[t].push_back(HostTensor::from_values<float>({1, kApiWidth}, r.normal(kApiWidth)));
    }
  }
  auto device = Device::open();
  std::vector<std::vector<HostTensor>> serial(kThreads), parallel(kThreads);
  {
    auto session = Session::open_bytes(model, {}, device);
    for (int t = 0; t < kThreads; ++t) {
      for (int k = 0; k < kRuns; ++k)
        serial[t].push_back(session->run({{"x", xs[t][k]}, {"h", hs[t][k]}}).at("y"));
    }
  }
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        auto session = Session::open_bytes(model, {}, device);  // opened on the thread, too
        for (int k = 0; k < kRuns; ++k) {
          if (k % 2 == 0) {
            parallel[t].push_back(session->run({{"x", xs[t][k]}, {"h", hs[t][k]}}).at("y"));
          } else {
            auto h = DeviceTensor::upload(device, hs[t][k]);
            parallel[t].push_back(session->run_device({{"x", xs[t][k]}}, {{"h", h}}).at("y").download());
          }
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(errors[t], "") << "thread " << t;
    ASSERT_EQ(parallel[t].size(), static_cast<size_t>(kRuns));
    for (int k = 0; k < kRuns; ++k) {
      EXPECT_TRUE(same_bits(parallel[t][k], serial[t][k])) << "thread " << t << " run " << k;
      std::vector<double> ref = step_reference(
          values_of(xs[t][k]),
          std::vector<double>(hs[t][k].values<float>().begin(), hs[t][k].values<float>().end()), w);
      for (double& v : ref) v *= 2;
      EXPECT_LT(rel_l2(values_of(parallel[t][k]), ref), 1e-5);
    }
  }
}

TEST(PublicApi, InputErrorsAreModelErrorsNamingTheInput) {
  auto session = Session::open_bytes(
      as_bytes(recurrent_step(std::vector<float>(kApiWidth * kApiWidth, 0.f), false).SerializeAsString()));
  const HostTensor good = HostTensor::from_values<float>({1, kApiWidth}, std::vector<float>(kApiWidth, 0.f));
  auto message = [&](const std::map<std::string, HostTensor>& inputs) {
    try {
      session->run(inputs);
    } catch (const ModelError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"x", good}}).find("missing input 'h'"), std::string::npos);
  EXPECT_THROW(DeviceTensor().shape(), Error);  // an undefined DeviceTensor is an error, not a crash
  EXPECT_NE(message({{"x", good}, {"h", HostTensor::from_values<float>({1, 5}, std::vector<float>(5))}})
                .find("'h' must have shape"),
            std::string::npos);
  EXPECT_NE(message({{"x", good},
                     {"h", HostTensor::from_values<int32_t>({1, kApiWidth}, std::vector<int32_t>(kApiWidth))}})
                .find("must be float32"),
            std::string::npos);
}

}  // namespace
}  // namespace onda::test
