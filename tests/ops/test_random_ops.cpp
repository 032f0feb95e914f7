// The random ops through a Session (ops/random_ops.cpp): shapes and dtypes (the `dtype` attribute,
// the *Like forms' input), a seed gives the same tensor on every run and in a fresh Session, other
// seeds other tensors, a node without a seed draws afresh each run (and its Session repeats the
// sequence), moments of RandomNormal / RandomUniform from their attributes, Bernoulli's
// probabilities. The values ONNX's conformance folders hold (numpy's and ONNX Runtime's generators)
// cannot be reproduced; these statistics are how tests/conformance/run.sh's "random" folders are
// checked. Malformed nodes name themselves.
#include <gtest/gtest.h>

#include <cmath>

#include "harness.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

// RandomNormal / RandomUniform of `shape` (no inputs).
onnx::ModelProto generator_model(const std::string& op, const Shape& shape, std::optional<float> seed,
                                 int dtype = onnx::TensorProto::FLOAT) {
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_output(), "y", dtype, shape);
  onnx::NodeProto* node = add_node(graph, op, {}, {"y"}, "node_under_test");
  add_ints_attribute(node, "shape", shape);
  if (dtype != onnx::TensorProto::FLOAT) add_int_attribute(node, "dtype", dtype);
  if (seed) add_float_attribute(node, "seed", *seed);
  if (op == "RandomNormal") {
    add_float_attribute(node, "mean", -1.0f);
    add_float_attribute(node, "scale", 2.0f);
  } else {
    add_float_attribute(node, "low", 10.0f);
    add_float_attribute(node, "high", 12.0f);
  }
  return model;
}


TEST(RandomOps, SeededNormalAndUniformRepeatAndFollowTheirAttributes) {
  const Shape shape = {64, 512};
  const double n = 64 * 512;
  for (const std::string op : {"RandomNormal", "RandomUniform"}) {
    TemporaryFolder folder;
    auto session = open_session(generator_model(op, shape, 5.0f), folder);
    const HostTensor first = session->run({}).at("y");
    ASSERT_EQ(first.shape(), shape);
    ASSERT_EQ(first.dtype(), DType::f32);
    const std::vector<double> y = first.to_double();
    EXPECT_EQ(session->run({}).at("y").to_double(), y) << op << ": the same seed, another run";
    TemporaryFolder again;
    EXPECT_EQ(open_session(generator_model(op, shape, 5.0f), again)->run({}).at("y").to_double(), y)
        << op << ": the same seed, a fresh Session";
    TemporaryFolder other;
    const std::vector<double> z =
        open_session(generator_model(op, shape, 6.0f), other)->run({}).at("y").to_double();
    int64_t same = 0;
    for (size_t i = 0; i < y.size(); ++i) same += y[i] == z[i];
    EXPECT_LT(same, 20) << op << ": seeds 5 and 6 agree on " << same << " elements";
    const Moments m = moments(y);
    if (op == "RandomNormal") {
      EXPECT_NEAR(m.mean, -1.0, 5 * 2.0 / std::sqrt(n));
      EXPECT_NEAR(m.variance, 4.0, 5 * 4.0 * std::sqrt(2.0 / n));
    } else {
      EXPECT_NEAR(m.mean, 11.0, 5 * std::sqrt(4.0 / 12.0 / n));
      EXPECT_NEAR(m.variance, 4.0 / 12.0, 5 * std::sqrt((16.0 / 80.0 - 1.0 / 9.0) / n));
      for (double v : y) ASSERT_TRUE(v >= 10.0 && v <= 12.0) << v;
    }
  }
}

TEST(RandomOps, UnseededDrawsAfreshEachRunAndRepeatsPerSession) {
  const Shape shape = {1000};
  TemporaryFolder folder;
  auto session = open_session(generator_model("RandomNormal", shape, std::nullopt), folder);
  std::vector<std::vector<double>> runs;
  for (int run = 0; run < 4; ++run) runs.push_back(session->run({}).at("y").to_double());
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) EXPECT_NE(runs[a], runs[b]) << "runs " << a << " and " << b;
  TemporaryFolder again;
  auto fresh = open_session(generator_model("RandomNormal", shape, std::nullopt), again);
  EXPECT_EQ(fresh->run({}).at("y").to_double(), runs[0]);
  EXPECT_EQ(fresh->run({}).at("y").to_double(), runs[1]);
}

TEST(RandomOps, DtypeAttributeAndLikeForms) {
  {
    TemporaryFolder folder;
    auto session =
        open_session(generator_model("RandomUniform", {3, 4}, 1.0f, onnx::TensorProto::FLOAT16), folder);
    const HostTensor y = session->run({}).at("y");
    EXPECT_EQ(y.dtype(), DType::f16);
    EXPECT_EQ(y.shape(), (Shape{3, 4}));
  }
  {  // DOUBLE is carried as float32.
    TemporaryFolder folder;
    auto session =
        open_session(generator_model("RandomNormal", {5}, 1.0f, onnx::TensorProto::DOUBLE), folder);
    EXPECT_EQ(session->run({}).at("y").shape(), (Shape{5}));
  }
  for (const std::string op : {"RandomNormalLike", "RandomUniformLike"}) {
    const Shape shape = {2, 3, 70};
    OneNode m(op, {{"x", shape}}, {onnx::TensorProto::FLOAT}, {{"y", shape}}, {onnx::TensorProto::FLOAT16});
    add_int_attribute(m.node, "dtype", onnx::TensorProto::FLOAT16);
    add_float_attribute(m.node, "seed", 3.0f);
    TemporaryFolder folder;
    auto session = open_session(m.model, folder);
    const HostTensor y = session->run({{"x", floats(shape, std::vector<float>(420, 7.0f))}}).at("y");
    EXPECT_EQ(y.dtype(), DType::f16) << op;
    EXPECT_EQ(y.shape(), shape) << op;
    for (double v : y.to_double()) ASSERT_TRUE(std::isfinite(v) && v != 7.0) << op;
  }
}

TEST(RandomOps, BernoulliRespectsEachProbability) {
  const int64_t per = 8192;
  const std::vector<float> levels = {0.0f, 0.2f, 0.7f, 1.0f};
  const Shape shape = {static_cast<int64_t>(levels.size()), per};
  std::vector<float> p;
  for (float q : levels) p.insert(p.end(), per, q);
  for (int output : {onnx::TensorProto::FLOAT, onnx::TensorProto::BOOL}) {
    OneNode m("Bernoulli", {{"p", shape}}, {onnx::TensorProto::FLOAT}, {{"y", shape}}, {output});
    if (output != onnx::TensorProto::FLOAT) add_int_attribute(m.node, "dtype", output);
    add_float_attribute(m.node, "seed", 11.0f);
    TemporaryFolder folder;
    auto session = open_session(m.model, folder);
    const HostTensor y = session->run({{"p", floats(shape, p)}}).at("y");
    EXPECT_EQ(y.dtype(), output == onnx::TensorProto::BOOL ? DType::boolean : DType::f32);
    const std::vector<double> v = y.to_double();
    for (size_t k = 0; k < levels.size(); ++k) {
      double ones = 0;
      for (int64_t i = 0; i < per; ++i) ones += v[k * per + i];
      const double q = levels[k];
      EXPECT_NEAR(ones / per, q, 5 * std::sqrt(q * (1 - q) / per) + 1e-12) << "p = " << q;
    }
  }
}

TEST(RandomOps, MalformedNodesNameThemselves) {
  auto message_of = [](const onnx::ModelProto& model, const std::map<std::string, HostTensor>& inputs) {
    TemporaryFolder folder;
    try {
      open_session(model, folder)->run(inputs);
    } catch (const ModelError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string int_normal =
      message_of(generator_model("RandomNormal", {4}, 1.0f, onnx::TensorProto::INT32), {});
  EXPECT_NE(int_normal.find("node_under_test"), std::string::npos) << int_normal;
  OneNode m("Bernoulli", {{"p", {3}}}, {onnx::TensorProto::INT64}, {{"y", {3}}}, {onnx::TensorProto::INT64});
  const std::string int_p = message_of(m.model, {{"p", HostTensor::from_values<int64_t>({3}, {0, 1, 1})}});
  EXPECT_NE(int_p.find("node_under_test"), std::string::npos) << int_p;
}

}  // namespace
}  // namespace onda::test
