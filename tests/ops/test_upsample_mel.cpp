// Upsample (opset 9) against a nearest-floor CPU reference, and MelWeightMatrix against ONNX's
// definition in float64, through one-node models in a Session run with fresh random inputs; bad
// attributes and inputs are clean errors naming the node.
#include <gtest/gtest.h>

#include <cmath>

#include "harness.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

onnx::ModelProto with_opset(onnx::ModelProto model, int64_t opset) {
  model.mutable_opset_import(0)->set_version(opset);
  return model;
}

TEST(UpsampleMel, UpsampleNearestFloorsTheScaledPosition) {
  Random rng(test_seed());
  const Shape in = {2, 3, 4, 5};
  const std::vector<float> scales = {1.0f, 1.0f, 2.0f, 2.5f};
  const Shape out = {2, 3, 8, 12};
  OneNode m("Upsample", {{"x", in}, {"scales", {4}}}, {onnx::TensorProto::FLOAT, onnx::TensorProto::FLOAT},
            {{"y", out}}, {onnx::TensorProto::FLOAT});
  add_float_initializer(m.model.mutable_graph(), "scales", {4}, scales);
  m.model.mutable_graph()->mutable_input()->RemoveLast();
  TemporaryFolder folder;
  auto session = open_session(with_opset(m.model, 9), folder);
  for (int run = 0; run < 2; ++run) {
    const std::vector<float> x = rng.normal(element_count(in));
    const std::vector<double> y = session->run({{"x", floats(in, x)}}).at("y").to_double();
    ASSERT_EQ(y.size(), static_cast<size_t>(element_count(out)));
    for (int64_t p = 0; p < 6; ++p)
      for (int64_t r = 0; r < 8; ++r)
        for (int64_t c = 0; c < 12; ++c) {
          const int64_t sr = static_cast<int64_t>(std::floor(r / 2.0)),
                        sc = static_cast<int64_t>(std::floor(c / 2.5));
          ASSERT_EQ(y[(p * 8 + r) * 12 + c], x[(p * 4 + sr) * 5 + sc]) << r << ", " << c;
        }
  }
  OneNode bad("Upsample", {{"x", in}, {"scales", {4}}}, {onnx::TensorProto::FLOAT, onnx::TensorProto::FLOAT},
              {{"y", out}}, {onnx::TensorProto::FLOAT});
  add_float_initializer(bad.model.mutable_graph(), "scales", {4}, scales);
  bad.model.mutable_graph()->mutable_input()->RemoveLast();
  set_string(bad.node, "mode", "cubic");
  try {
    TemporaryFolder bad_folder;
    auto s = open_session(with_opset(bad.model, 9), bad_folder);
    s->run({{"x", floats(in, rng.normal(element_count(in)))}});
    ADD_FAILURE() << "Upsample mode 'cubic' was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("node_under_test"), std::string::npos) << e.what();
  }
}

// ONNX's MelWeightMatrix, written as its reference op does (float64).
std::vector<double> mel_reference(int64_t mels, int64_t dft, int64_t rate, double low, double high) {
  const int64_t bins = dft / 2 + 1;
  const double low_mel = 2595 * std::log10(1 + low / 700), high_mel = 2595 * std::log10(1 + high / 700);
  const double step = (high_mel - low_mel) / static_cast<double>(mels + 2);
  std::vector<int64_t> f(mels + 2);
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (i * step + low_mel) / 2595) - 1);
    f[i] = std::min<int64_t>(static_cast<int64_t>(std::floor((dft + 1) * hz / rate)), bins - 1);
  }
  std::vector<double> w(bins * mels, 0.0);
  for (int64_t i = 0; i < mels; ++i) {
    if (f[i + 1] == f[i]) w[f[i + 1] * mels + i] = 1;
    for (int64_t j = f[i]; f[i + 1] > f[i] && j <= f[i + 1]; ++j)
      w[j * mels + i] = static_cast<double>(j - f[i]) / static_cast<double>(f[i + 1] - f[i]);
    for (int64_t j = f[i + 1]; j < f[i + 2]; ++j)
      w[j * mels + i] = static_cast<double>(f[i + 2] - j) / static_cast<double>(f[i + 2] - f[i + 1]);
  }
  return w;
}

TEST(UpsampleMel, MelWeightMatrixMatchesTheDefinition) {
  Random rng(test_seed());
  OneNode m("MelWeightMatrix", {{"mels", {}}, {"dft", {}}, {"rate", {}}, {"low", {}}, {"high", {}}},
            {onnx::TensorProto::INT64, onnx::TensorProto::INT64, onnx::TensorProto::INT64,
             onnx::TensorProto::FLOAT, onnx::TensorProto::FLOAT},
            {{"w", {1, 1}}}, {onnx::TensorProto::FLOAT});
  m.model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  TemporaryFolder folder;
  auto session = open_session(with_opset(m.model, 17), folder);
  auto i64 = [](int64_t v) { return HostTensor::from_int64(DType::i64, {}, {v}); };
  auto f32 = [](double v) { return HostTensor::from_double(DType::f32, {}, {v}); };
  for (int run = 0; run < 4; ++run) {
    const int64_t mels = rng.integer(1, 40), dft = rng.integer(16, 1024), rate = rng.integer(8000, 48000);
    const float low = static_cast<float>(rng.integer(0, 300));
    const float high = static_cast<float>(rng.integer(1000, rate / 2));
    const HostTensor w = session
                             ->run({{"mels", i64(mels)},
                                    {"dft", i64(dft)},
                                    {"rate", i64(rate)},
                                    {"low", f32(low)},
                                    {"high", f32(high)}})
                             .at("w");
    ASSERT_EQ(w.shape(), (Shape{dft / 2 + 1, mels}));
    const std::vector<double> want = mel_reference(mels, dft, rate, low, high), got = w.to_double();
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-7)
          << "element " << i << " of mels " << mels << " dft " << dft << " rate " << rate;
  }
  try {
    session->run(
        {{"mels", i64(8)}, {"dft", i64(64)}, {"rate", i64(16000)}, {"low", f32(500)}, {"high", f32(100)}});
    ADD_FAILURE() << "lower edge above the upper edge was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("node_under_test"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onda::test
