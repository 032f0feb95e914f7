// Ops lowered onto existing kernels or evaluated on the host, through one-node models in a Session
// (run twice with fresh inputs, so a stale buffer shows) against CPU references on random inputs:
// DepthToSpace (DCR, CRD), SpaceToDepth, GlobalAveragePool / GlobalMaxPool, OneHot, CastLike,
// EyeLike and the window functions, LRN and MeanVarianceNormalization.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "harness.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

std::vector<double> run_once(OneNode& m, const std::map<std::string, HostTensor>& feeds,
                             const std::string& out = "y") {
  TemporaryFolder folder;
  auto session = open_session(m.model, folder);
  return session->run(feeds).at(out).to_double();
}

TEST(RearrangeOps, DepthToSpaceAndSpaceToDepth) {
  Random rng(test_seed());
  const int64_t n = 2, b = 2, c = 3, h = 3, w = 4;
  for (const char* mode : {"DCR", "CRD"}) {
    const Shape in_shape = {n, c * b * b, h, w}, out_shape = {n, c, h * b, w * b};
    OneNode m("DepthToSpace", {{"x", in_shape}}, {onnx::TensorProto::FLOAT}, {{"y", out_shape}},
              {onnx::TensorProto::FLOAT});
    add_int_attribute(m.node, "blocksize", b);
    set_string(m.node, "mode", mode);
    const std::vector<float> x = rng.normal(element_count(in_shape));
    const auto y = run_once(m, {{"x", floats(in_shape, x)}});
    for (int64_t a = 0; a < n; ++a)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < h * b; ++i)
          for (int64_t j = 0; j < w * b; ++j) {
            const int64_t bi = i % b, bj = j % b;
            const int64_t in_c =
                std::string(mode) == "DCR" ? (bi * b + bj) * c + ch : ch * b * b + bi * b + bj;
            const float want = x[((a * c * b * b + in_c) * h + i / b) * w + j / b];
            ASSERT_EQ(y[((a * c + ch) * h * b + i) * w * b + j], want) << mode;
          }
  }
  // SpaceToDepth inverts DCR DepthToSpace.
  const Shape in_shape = {n, c, h * b, w * b}, out_shape = {n, c * b * b, h, w};
  OneNode m("SpaceToDepth", {{"x", in_shape}}, {onnx::TensorProto::FLOAT}, {{"y", out_shape}},
            {onnx::TensorProto::FLOAT});
  add_int_attribute(m.node, "blocksize", b);
  const std::vector<float> x = rng.normal(element_count(in_shape));
  const auto y = run_once(m, {{"x", floats(in_shape, x)}});
  for (int64_t a = 0; a < n; ++a)
    for (int64_t oc = 0; oc < c * b * b; ++oc)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j) {
          const int64_t bi = oc / (b * c), bj = (oc / c) % b, ch = oc % c;
          const float want = x[((a * c + ch) * h * b + i * b + bi) * w * b + j * b + bj];
          ASSERT_EQ(y[((a * c * b * b + oc) * h + i) * w + j], want);
        }
}

TEST(RearrangeOps, GlobalPools) {
  Random rng(test_seed());
  const Shape shape = {2, 3, 5, 4};
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    OneNode m(op, {{"x", shape}}, {onnx::TensorProto::FLOAT}, {{"y", {2, 3, 1, 1}}},
              {onnx::TensorProto::FLOAT});
    const std::vector<float> x = rng.normal(element_count(shape));
    const auto y = run_once(m, {{"x", floats(shape, x)}});
    std::vector<double> ref(6);
    for (int64_t r = 0; r < 6; ++r) {
      double s = 0, mx = -INFINITY;
      for (int64_t k = 0; k < 20; ++k) s += x[r * 20 + k], mx = std::max<double>(mx, x[r * 20 + k]);
      ref[r] = std::string(op) == "GlobalMaxPool" ? mx : s / 20;
    }
    EXPECT_LE(rel_l2(std::vector<float>(y.begin(), y.end()), ref), 1e-6) << op;
  }
}

TEST(RearrangeOps, OneHotNegativeIndicesAndAxes) {
  Random rng(test_seed());
  const int64_t depth = 5;
  for (int64_t axis : {-1, 0, 1}) {
    const Shape index_shape = {2, 3};
    Shape out_shape = index_shape;
    const int64_t a = axis < 0 ? axis + 3 : axis;
    out_shape.insert(out_shape.begin() + a, depth);
    OneNode m("OneHot", {{"i", index_shape}, {"v", {2}}},
              {onnx::TensorProto::INT64, onnx::TensorProto::FLOAT}, {{"y", out_shape}},
              {onnx::TensorProto::FLOAT});
    m.node->clear_input();
    m.node->add_input("i");
    m.node->add_input("depth");
    m.node->add_input("v");
    add_int64_initializer(m.model.mutable_graph(), "depth", {}, {depth});
    add_int_attribute(m.node, "axis", axis);
    std::vector<int64_t> idx(6);
    for (auto& v : idx) v = rng.integer(-depth, depth - 1);
    const std::vector<float> values = {-2.5f, 7.0f};
    const auto y = run_once(
        m, {{"i", HostTensor::from_int64(DType::i64, index_shape, idx)}, {"v", floats({2}, values)}});
    int64_t strides[3] = {out_shape[1] * out_shape[2], out_shape[2], 1};
    for (int64_t p = 0; p < 2; ++p)
      for (int64_t q = 0; q < 3; ++q)
        for (int64_t d = 0; d < depth; ++d) {
          int64_t c[3];
          const int64_t coords[2] = {p, q};
          for (int64_t k = 0, s = 0; k < 3; ++k) c[k] = k == a ? d : coords[s++];
          const int64_t hot = idx[p * 3 + q] < 0 ? idx[p * 3 + q] + depth : idx[p * 3 + q];
          ASSERT_EQ(y[c[0] * strides[0] + c[1] * strides[1] + c[2] * strides[2]], d == hot ? 7.0 : -2.5)
              << "axis " << axis;
        }
  }
}

TEST(RearrangeOps, CastLikeEyeLikeAndWindows) {
  Random rng(test_seed());
  {
    OneNode m("CastLike", {{"x", {5}}, {"like", {1}}}, {onnx::TensorProto::FLOAT, onnx::TensorProto::INT64},
              {{"y", {5}}}, {onnx::TensorProto::INT64});
    const std::vector<float> x = {-2.5f, -1.0f, 0.0f, 3.75f, 9.0f};
    const auto y =
        run_once(m, {{"x", floats({5}, x)}, {"like", HostTensor::from_int64(DType::i64, {1}, {0})}});
    EXPECT_EQ(y, (std::vector<double>{-2, -1, 0, 3, 9}));
  }
  for (int64_t k : {-1, 0, 2}) {
    OneNode m("EyeLike", {{"x", {3, 4}}}, {onnx::TensorProto::FLOAT}, {{"y", {3, 4}}},
              {onnx::TensorProto::FLOAT});
    add_int_attribute(m.node, "k", k);
    const auto y = run_once(m, {{"x", floats({3, 4}, rng.normal(12))}});
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j) ASSERT_EQ(y[i * 4 + j], j - i == k ? 1.0 : 0.0) << "k " << k;
  }
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    for (int64_t periodic : {0, 1}) {
      const int64_t n = 10;
      OneNode m(op, {}, {}, {{"y", {n}}}, {onnx::TensorProto::FLOAT});
      m.node->add_input("size");
      add_int64_initializer(m.model.mutable_graph(), "size", {}, {n});
      add_int_attribute(m.node, "periodic", periodic);
      const auto y = run_once(m, {});
      std::vector<double> ref(n);
      for (int64_t i = 0; i < n; ++i) {
        const double t = 2 * std::numbers::pi * i / (periodic ? n : n - 1);
        ref[i] = std::string(op) == "HannWindow"      ? 0.5 - 0.5 * std::cos(t)
                 : std::string(op) == "HammingWindow" ? 25.0 / 46 - 21.0 / 46 * std::cos(t)
                                                      : 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2 * t);
      }
      EXPECT_LE(rel_l2(std::vector<float>(y.begin(), y.end()), ref), 1e-7) << op << " periodic " << periodic;
    }
  }
}

// LRN (sum of squares over a channel window) and MeanVarianceNormalization against float64.
TEST(ComposedOps, LrnAndMeanVarianceNormalization) {
  Random rng(test_seed());
  const int64_t n = 2, c = 5, h = 3, w = 4;
  const Shape shape = {n, c, h, w};
  for (int64_t size : {1, 3, 4}) {
    OneNode m("LRN", {{"x", shape}}, {onnx::TensorProto::FLOAT}, {{"y", shape}}, {onnx::TensorProto::FLOAT});
    add_int_attribute(m.node, "size", size);
    const double alpha = 0.5, beta = 0.75, bias = 1.0;  // alpha large enough that the window sum matters
    onnx::AttributeProto* a = m.node->add_attribute();
    a->set_name("alpha");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(static_cast<float>(alpha));
    const std::vector<float> x = rng.normal(element_count(shape), 0, 3);
    const auto y = run_once(m, {{"x", floats(shape, x)}});
    std::vector<double> ref(x.size());
    for (int64_t a = 0; a < n; ++a)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t p = 0; p < h * w; ++p) {
          double s = 0;
          for (int64_t k = ch - (size - 1) / 2; k <= ch + size - 1 - (size - 1) / 2; ++k)
            if (k >= 0 && k < c) s += double(x[(a * c + k) * h * w + p]) * x[(a * c + k) * h * w + p];
          ref[(a * c + ch) * h * w + p] = x[(a * c + ch) * h * w + p] / std::pow(bias + alpha / size * s, beta);
        }
    EXPECT_LE(rel_l2(std::vector<float>(y.begin(), y.end()), ref), 1e-6) << "size " << size;
  }
  OneNode m("MeanVarianceNormalization", {{"x", shape}}, {onnx::TensorProto::FLOAT}, {{"y", shape}},
            {onnx::TensorProto::FLOAT});
  const std::vector<float> x = rng.normal(element_count(shape), 1.5, 2);
  const auto y = run_once(m, {{"x", floats(shape, x)}});
  std::vector<double> ref(x.size());
  for (int64_t ch = 0; ch < c; ++ch) {  // default axes [0, 2, 3]: statistics per channel
    double mean = 0, var = 0;
    for (int64_t a = 0; a < n; ++a)
      for (int64_t p = 0; p < h * w; ++p) mean += x[(a * c + ch) * h * w + p];
    mean /= n * h * w;
    for (int64_t a = 0; a < n; ++a)
      for (int64_t p = 0; p < h * w; ++p) var += std::pow(x[(a * c + ch) * h * w + p] - mean, 2);
    var /= n * h * w;
    for (int64_t a = 0; a < n; ++a)
      for (int64_t p = 0; p < h * w; ++p)
        ref[(a * c + ch) * h * w + p] = (x[(a * c + ch) * h * w + p] - mean) / (std::sqrt(var) + 1e-9);
  }
  EXPECT_LE(rel_l2(std::vector<float>(y.begin(), y.end()), ref), 1e-6);
}

}  // namespace
}  // namespace onda::test
