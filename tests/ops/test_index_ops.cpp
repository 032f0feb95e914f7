// The index kernels against float64 / exact CPU references on fresh random inputs with poisoned
// outputs: ArgMax / ArgMin (every axis, ties, select_last_index, f32 and f16) and GatherElements
// (every axis, negative indices, f32 / f16 / int64 data), ScatterElements (every reduction,
// duplicate indices), GatherND (batch_dims, tuple lengths). Then the ops composed from kernels,
// through one-node models in a Session run twice with fresh inputs: Trilu, Hardmax,
// ReduceLogSumExp / ReduceLogSum, NegativeLogLikelihoodLoss (weights, ignore_index, every
// reduction), SoftmaxCrossEntropyLoss and Dropout.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "harness.h"
#include "kernels/layout/gather_elements.h"
#include "kernels/layout/gather_nd.h"
#include "kernels/layout/scatter_elements.h"
#include "kernels/reduce/arg_reduce.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

Shape random_shape(Random& rng, int rank) {
  Shape s(rank);
  for (auto& d : s) d = rng.integer(1, 6);
  return s;
}

TEST(IndexOps, ArgMaxArgMinEveryAxis) {
  Random rng(test_seed());
  for (int trial = 0; trial < 24; ++trial) {
    const Shape shape = random_shape(rng, static_cast<int>(rng.integer(1, 4)));
    const int64_t axis = rng.integer(0, static_cast<int64_t>(shape.size()) - 1);
    const bool max = trial % 2 == 0, last = trial % 4 >= 2;
    const DType dtype = trial % 3 == 0 ? DType::f16 : DType::f32;
    // Few distinct values, so ties happen and select_last_index matters.
    std::vector<float> x = rng.uniform(element_count(shape), -3, 3);
    for (auto& v : x) v = std::round(v);
    Shape out_shape = shape;
    out_shape[axis] = 1;
    Tensor y = poisoned(DType::i64, out_shape);
    gpu::CommandRecorder recorder(gpu().context);
    kernels::record_arg_reduce(kc(), recorder, max ? kernels::ArgReduceOp::Max : kernels::ArgReduceOp::Min,
                               upload_floats(x, dtype, shape), axis, last, y);
    recorder.submit_and_wait();
    const std::vector<int64_t> got = download_ints(y);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
    for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = 0;
        for (int64_t k = 1; k < shape[axis]; ++k) {
          const double v = x[(o * shape[axis] + k) * inner + i], b = x[(o * shape[axis] + best) * inner + i];
          if (max ? (last ? v >= b : v > b) : (last ? v <= b : v < b)) best = k;
        }
        ASSERT_EQ(got[o * inner + i], best)
            << shape_string(shape) << " axis " << axis << (max ? " max" : " min") << (last ? " last" : "");
      }
    }
  }
}

TEST(IndexOps, GatherElementsEveryAxisAndDtype) {
  Random rng(test_seed());
  for (int trial = 0; trial < 24; ++trial) {
    const int rank = static_cast<int>(rng.integer(1, 4));
    const Shape data_shape = random_shape(rng, rank);
    const int64_t axis = rng.integer(0, rank - 1);
    Shape index_shape = data_shape;
    for (int d = 0; d < rank; ++d)
      index_shape[d] = d == axis ? rng.integer(1, 6) : rng.integer(1, data_shape[d]);
    std::vector<int64_t> indices(element_count(index_shape));
    for (auto& v : indices) v = rng.integer(-data_shape[axis], data_shape[axis] - 1);
    const DType dtype = trial % 3 == 0 ? DType::f16 : trial % 3 == 1 ? DType::f32 : DType::i64;
    const std::vector<float> values = rng.uniform(element_count(data_shape), -100, 100);
    std::vector<int64_t> int_values(values.begin(), values.end());
    const Tensor data = dtype == DType::i64
                            ? Tensor::upload(gpu().context, gpu().pool, dtype, data_shape, int_values.data())
                            : upload_floats(values, dtype, data_shape);
    const std::vector<float> held = round_to_dtype(values, dtype == DType::i64 ? DType::f32 : dtype);
    Tensor out = poisoned(dtype, index_shape);
    gpu::CommandRecorder recorder(gpu().context);
    kernels::record_gather_elements(
        kc(), recorder, data,
        Tensor::upload(gpu().context, gpu().pool, DType::i64, index_shape, indices.data()), axis, out);
    recorder.submit_and_wait();
    std::vector<double> got;
    if (dtype == DType::i64) {
      for (int64_t v : download_ints(out)) got.push_back(static_cast<double>(v));
    } else {
      for (float v : out.download_floats(gpu().context)) got.push_back(v);
    }
    // Reference: walk the index coordinates.
    std::vector<int64_t> c(rank, 0);
    for (size_t lin = 0; lin < indices.size(); ++lin) {
      int64_t rest = static_cast<int64_t>(lin);
      for (int d = rank - 1; d >= 0; --d) c[d] = rest % index_shape[d], rest /= index_shape[d];
      c[axis] = indices[lin] < 0 ? indices[lin] + data_shape[axis] : indices[lin];
      int64_t address = 0;
      for (int d = 0; d < rank; ++d) address = address * data_shape[d] + c[d];
      const double want = dtype == DType::i64 ? static_cast<double>(int_values[address]) : held[address];
      ASSERT_EQ(got[lin], want) << dtype_name(dtype) << " data " << shape_string(data_shape) << " indices "
                                << shape_string(index_shape) << " axis " << axis << " element " << lin;
    }
  }
}

// ScatterElements with duplicate and negative indices for every reduction (None keeps the last
// update in index order), against a sequential float64 reference.
TEST(IndexOps, ScatterElementsEveryReductionAndAxis) {
  Random rng(test_seed());
  using R = kernels::ScatterReduction;
  for (int trial = 0; trial < 20; ++trial) {
    const R reduction = static_cast<R>(trial % 5);
    const int rank = static_cast<int>(rng.integer(1, 3));
    const Shape data_shape = random_shape(rng, rank);
    const int64_t axis = rng.integer(0, rank - 1);
    Shape index_shape = data_shape;
    for (int d = 0; d < rank; ++d)
      index_shape[d] = d == axis ? rng.integer(1, 6) : rng.integer(1, data_shape[d]);
    std::vector<int64_t> indices(element_count(index_shape));
    for (auto& v : indices) v = rng.integer(-data_shape[axis], data_shape[axis] - 1);
    const std::vector<float> data = rng.normal(element_count(data_shape));
    const std::vector<float> updates = rng.normal(indices.size());
    Tensor out = poisoned(DType::f32, data_shape);
    gpu::CommandRecorder recorder(gpu().context);
    kernels::record_scatter_elements(
        kc(), recorder, upload_floats(data, DType::f32, data_shape),
        Tensor::upload(gpu().context, gpu().pool, DType::i64, index_shape, indices.data()),
        upload_floats(updates, DType::f32, index_shape), axis, reduction, out);
    recorder.submit_and_wait();
    std::vector<double> ref(data.begin(), data.end());
    std::vector<int64_t> c(rank);
    for (size_t lin = 0; lin < indices.size(); ++lin) {
      int64_t rest = static_cast<int64_t>(lin);
      for (int d = rank - 1; d >= 0; --d) c[d] = rest % index_shape[d], rest /= index_shape[d];
      c[axis] = indices[lin] < 0 ? indices[lin] + data_shape[axis] : indices[lin];
      int64_t at = 0;
      for (int d = 0; d < rank; ++d) at = at * data_shape[d] + c[d];
      const double u = updates[lin];
      double& r = ref[at];
      r = reduction == R::None  ? u
          : reduction == R::Add ? r + u
          : reduction == R::Mul ? r * u
          : reduction == R::Max ? std::max(r, u)
                                : std::min(r, u);
    }
    const double e = rel_l2(out.download_floats(gpu().context), ref);
    EXPECT_LE(e, 1e-6) << "reduction " << trial % 5 << " data " << shape_string(data_shape) << " indices "
                       << shape_string(index_shape) << " axis " << axis;
  }
}

// GatherND with batch_dims 0..1 and tuple lengths up to the remaining rank, negative indices.
TEST(IndexOps, GatherNdBatchDimsAndTupleLengths) {
  Random rng(test_seed());
  for (int trial = 0; trial < 16; ++trial) {
    const Shape ds = random_shape(rng, static_cast<int>(rng.integer(2, 4)));
    const int64_t b = rng.integer(0, 1);
    const int64_t q = rng.integer(1, static_cast<int64_t>(ds.size()) - b);
    Shape is(ds.begin(), ds.begin() + b);
    is.push_back(rng.integer(1, 4));
    is.push_back(q);
    const int64_t tuples = element_count(is) / q, per_batch = is[b];
    std::vector<int64_t> indices(element_count(is));
    for (int64_t t = 0; t < tuples; ++t)
      for (int64_t j = 0; j < q; ++j) indices[t * q + j] = rng.integer(-ds[b + j], ds[b + j] - 1);
    const std::vector<float> data = rng.normal(element_count(ds));
    const Shape out_shape = kernels::gather_nd_output_shape(ds, is, b);
    Tensor out = poisoned(DType::f32, out_shape);
    gpu::CommandRecorder recorder(gpu().context);
    kernels::record_gather_nd(kc(), recorder, upload_floats(data, DType::f32, ds),
                              Tensor::upload(gpu().context, gpu().pool, DType::i64, is, indices.data()), b,
                              out);
    recorder.submit_and_wait();
    const std::vector<float> got = out.download_floats(gpu().context);
    int64_t inner = 1, batch_stride = 1;
    for (size_t d = b + q; d < ds.size(); ++d) inner *= ds[d];
    for (size_t d = b; d < ds.size(); ++d) batch_stride *= ds[d];
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t base = (t / per_batch) * batch_stride, stride = batch_stride;
      for (int64_t j = 0; j < q; ++j) {
        stride /= ds[b + j];
        const int64_t i = indices[t * q + j];
        base += (i < 0 ? i + ds[b + j] : i) * stride;
      }
      for (int64_t r = 0; r < inner; ++r)
        ASSERT_EQ(got[t * inner + r], data[base + r])
            << "data " << shape_string(ds) << " indices " << shape_string(is);
    }
  }
}

TEST(IndexOps, TriluUpperAndLowerEveryK) {
  Random rng(test_seed());
  for (int trial = 0; trial < 6; ++trial) {
    const Shape shape = {rng.integer(1, 3), rng.integer(1, 6), rng.integer(1, 6)};
    const int64_t k = rng.integer(-4, 4);
    const bool upper = trial % 2 == 0;
    OneNode m("Trilu", {{"x", shape}}, {onnx::TensorProto::FLOAT}, {{"y", shape}},
              {onnx::TensorProto::FLOAT});
    m.node->add_input("k");
    add_int64_initializer(m.model.mutable_graph(), "k", {}, {k});
    add_int_attribute(m.node, "upper", upper);
    TemporaryFolder folder;
    auto session = open_session(m.model, folder);
    for (int run = 0; run < 2; ++run) {
      const std::vector<float> x = rng.normal(element_count(shape));
      const auto y = session->run({{"x", floats(shape, x)}}).at("y").to_double();
      for (int64_t b = 0; b < shape[0]; ++b)
        for (int64_t i = 0; i < shape[1]; ++i)
          for (int64_t j = 0; j < shape[2]; ++j) {
            const int64_t at = (b * shape[1] + i) * shape[2] + j;
            const bool kept = upper ? j - i >= k : j - i <= k;
            ASSERT_EQ(y[at], kept ? x[at] : 0.0f) << "k " << k << (upper ? " upper" : " lower");
          }
    }
  }
}

TEST(IndexOps, HardmaxOneHotOfTheFirstMaximum) {
  Random rng(test_seed());
  const Shape shape = {3, 4, 5};
  for (int64_t axis : {0, 1, 2, -1}) {
    OneNode m("Hardmax", {{"x", shape}}, {onnx::TensorProto::FLOAT}, {{"y", shape}},
              {onnx::TensorProto::FLOAT});
    add_int_attribute(m.node, "axis", axis);
    TemporaryFolder folder;
    auto session = open_session(m.model, folder);
    const int64_t a = axis < 0 ? axis + 3 : axis;
    for (int run = 0; run < 2; ++run) {
      std::vector<float> x = rng.uniform(element_count(shape), -2, 2);
      for (auto& v : x) v = std::round(v);  // ties: the first maximum wins
      const auto y = session->run({{"x", floats(shape, x)}}).at("y").to_double();
      int64_t inner = 1, outer = 1;
      for (int64_t d = a + 1; d < 3; ++d) inner *= shape[d];
      for (int64_t d = 0; d < a; ++d) outer *= shape[d];
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t best = 0;
          for (int64_t k = 1; k < shape[a]; ++k)
            if (x[(o * shape[a] + k) * inner + i] > x[(o * shape[a] + best) * inner + i]) best = k;
          for (int64_t k = 0; k < shape[a]; ++k)
            ASSERT_EQ(y[(o * shape[a] + k) * inner + i], k == best ? 1.0 : 0.0) << "axis " << axis;
        }
    }
  }
}

TEST(IndexOps, ReduceLogSumExpAndLogSum) {
  Random rng(test_seed());
  const Shape shape = {3, 5, 4};
  for (const char* op : {"ReduceLogSumExp", "ReduceLogSum"}) {
    OneNode m(op, {{"x", shape}}, {onnx::TensorProto::FLOAT}, {{"y", {3, 1, 4}}}, {onnx::TensorProto::FLOAT});
    add_ints_attribute(m.node, "axes", {1});
    TemporaryFolder folder;
    auto session = open_session(m.model, folder);
    for (int run = 0; run < 2; ++run) {
      // Large values for LogSumExp (exp would overflow without the max shift), positive for LogSum.
      std::vector<float> x =
          std::string(op) == "ReduceLogSum" ? rng.uniform(60, 0.1, 3) : rng.uniform(60, 50, 120);
      const auto y = session->run({{"x", floats(shape, x)}}).at("y").to_double();
      std::vector<double> ref(12);
      for (int64_t o = 0; o < 3; ++o)
        for (int64_t i = 0; i < 4; ++i) {
          double m = -INFINITY, s = 0;
          for (int64_t k = 0; k < 5; ++k) m = std::max<double>(m, x[(o * 5 + k) * 4 + i]);
          for (int64_t k = 0; k < 5; ++k) {
            const double v = x[(o * 5 + k) * 4 + i];
            s += std::string(op) == "ReduceLogSum" ? v : std::exp(v - m);
          }
          ref[o * 4 + i] = std::string(op) == "ReduceLogSum" ? std::log(s) : m + std::log(s);
        }
      const double e = rel_l2(std::vector<float>(y.begin(), y.end()), ref);
      EXPECT_LE(e, 1e-6) << op;
    }
  }
}

// NLL and SCE against float64 for every reduction, with and without weights and ignore_index.
void check_loss(bool softmax, const std::string& reduction, bool weighted, bool ignore, Random& rng) {
  const int64_t n = 3, c = 5, d = 4;
  const Shape in_shape = {n, c, d}, target_shape = {n, d};
  const Shape out_shape = reduction == "none" ? target_shape : Shape{};
  std::vector<std::pair<std::string, Shape>> inputs = {{"x", in_shape}, {"t", target_shape}};
  std::vector<int> types = {onnx::TensorProto::FLOAT, onnx::TensorProto::INT64};
  if (weighted) inputs.push_back({"w", {c}}), types.push_back(onnx::TensorProto::FLOAT);
  OneNode m(softmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss", inputs, types,
            {{"y", out_shape}}, {onnx::TensorProto::FLOAT});
  set_string(m.node, "reduction", reduction);
  const int64_t ignored = -1;
  if (ignore) add_int_attribute(m.node, "ignore_index", ignored);
  TemporaryFolder folder;
  auto session = open_session(m.model, folder);
  for (int run = 0; run < 2; ++run) {
    const std::vector<float> x = rng.normal(n * c * d);
    const std::vector<float> w = rng.uniform(c, 0.5, 2);
    std::vector<int64_t> t(n * d);
    for (auto& v : t) v = rng.integer(ignore ? -1 : 0, c - 1);
    if (ignore) t[0] = ignored;
    std::map<std::string, HostTensor> feeds = {{"x", floats(in_shape, x)},
                                               {"t", HostTensor::from_int64(DType::i64, target_shape, t)}};
    if (weighted) feeds["w"] = floats({c}, w);
    const auto y = session->run(feeds).at("y").to_double();
    std::vector<double> loss(n * d);
    double total = 0, weight_sum = 0,
           magnitude = 0;  // magnitude: sum |loss|, the float32 error scale of sums
    for (int64_t a = 0; a < n; ++a)
      for (int64_t j = 0; j < d; ++j) {
        const int64_t cls = t[a * d + j];
        if (ignore && cls == ignored) continue;
        double lp = x[(a * c + cls) * d + j];
        if (softmax) {
          double mx = -INFINITY, s = 0;
          for (int64_t k = 0; k < c; ++k) mx = std::max<double>(mx, x[(a * c + k) * d + j]);
          for (int64_t k = 0; k < c; ++k) s += std::exp(x[(a * c + k) * d + j] - mx);
          lp = lp - mx - std::log(s);
        }
        const double wt = weighted ? w[cls] : 1.0;
        loss[a * d + j] = -lp * wt;
        total += loss[a * d + j];
        magnitude += std::abs(loss[a * d + j]);
        weight_sum += wt;
      }
    std::vector<double> ref = loss;
    double e = rel_l2(std::vector<float>(y.begin(), y.end()), ref);
    if (reduction != "none") {
      const double scale = reduction == "sum" ? 1.0 : weight_sum;
      ASSERT_EQ(y.size(), 1u);
      e = std::abs(y[0] - total / scale) / (magnitude / scale);
    }
    EXPECT_LE(e, 1e-6) << (softmax ? "SCE " : "NLL ") << reduction << (weighted ? " weighted" : "")
                       << (ignore ? " ignore_index" : "");
  }
}

TEST(IndexOps, LossesEveryReductionWeightAndIgnoreIndex) {
  Random rng(test_seed());
  for (bool softmax : {false, true})
    for (const char* reduction : {"none", "sum", "mean"})
      for (bool weighted : {false, true})
        for (bool ignore : {false, true}) check_loss(softmax, reduction, weighted, ignore, rng);
}

TEST(IndexOps, DropoutAtInferenceIsTheIdentityWithATrueMask) {
  Random rng(test_seed());
  const Shape shape = {2, 7};
  OneNode m("Dropout", {{"x", shape}}, {onnx::TensorProto::FLOAT}, {{"y", shape}, {"mask", shape}},
            {onnx::TensorProto::FLOAT, onnx::TensorProto::BOOL});
  TemporaryFolder folder;
  auto session = open_session(m.model, folder);
  const std::vector<float> x = rng.normal(14);
  const auto out = session->run({{"x", floats(shape, x)}});
  EXPECT_EQ(out.at("y").to_double(), std::vector<double>(x.begin(), x.end()));
  EXPECT_EQ(out.at("mask").to_int64(), std::vector<int64_t>(14, 1));
}

}  // namespace
}  // namespace onda::test
