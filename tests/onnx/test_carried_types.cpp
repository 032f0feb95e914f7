// ONNX types carried in a wider DType (graph/onnx_data_type.h) and the ops added with them, against
// float64 / exact CPU references on fresh random inputs with poisoned outputs: the cumulative-sum
// kernel (every axis, exclusive / reverse, f32 and f16), CumSum in a DOUBLE graph, Cast to INT8 /
// INT16 / UINT16 wrapping as numpy's astype, BitShift on UINT16 and UINT32, Clip on INT8; and the
// clean errors naming the node for a bad axis.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "harness.h"
#include "kernels/reduce/cumulative_sum.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

// y along `axis` of x viewed as [outer, length, inner], in float64.
std::vector<double> cumsum_reference(const std::vector<float>& x, const Shape& shape, int64_t axis,
                                     bool exclusive, bool reverse) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t length = shape[axis];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double sum = 0;
      for (int64_t step = 0; step < length; ++step) {
        const int64_t k = reverse ? length - 1 - step : step;
        const int64_t at = (o * length + k) * inner + i;
        if (exclusive) y[at] = sum;
        sum += x[at];
        if (!exclusive) y[at] = sum;
      }
    }
  return y;
}

TEST(CarriedTypes, CumulativeSumKernelEveryAxisAndMode) {
  Random rng(test_seed());
  const kernels::KernelContext kc{gpu().context, gpu().pipelines};
  for (int trial = 0; trial < 16; ++trial) {
    const int rank = static_cast<int>(rng.integer(1, 4));
    Shape shape(rank);
    for (auto& d : shape) d = rng.integer(1, 7);
    if (trial == 0) shape = {3, 1000};  // a long axis: the compensated sum keeps f32 accuracy
    const int64_t axis = trial == 0 ? 1 : rng.integer(0, rank - 1);
    const DType dtype = trial % 4 == 3 ? DType::f16 : DType::f32;
    kernels::CumulativeSumOptions options;
    options.exclusive = trial % 2 == 1;
    options.reverse = trial % 3 == 1;
    const std::vector<float> x = round_to_dtype(rng.normal(element_count(shape)), dtype);
    Tensor y = poisoned(dtype, shape);
    gpu::CommandRecorder recorder(gpu().context);
    kernels::record_cumulative_sum(kc, recorder, upload_floats(x, dtype, shape), axis, options, y);
    recorder.submit_and_wait();
    const std::vector<double> ref = cumsum_reference(x, shape, axis, options.exclusive, options.reverse);
    const double err = rel_l2(y.download_floats(gpu().context), ref);
    EXPECT_LT(err, dtype == DType::f16 ? 2e-3 : 1e-6)
        << shape_string(shape) << " axis " << axis << (options.exclusive ? " exclusive" : "")
        << (options.reverse ? " reverse" : "");
  }
}

HostTensor int_tensor(DType dtype, const Shape& shape, const std::vector<int64_t>& v) {
  return HostTensor::from_int64(dtype, shape, v);
}

// CumSum in a graph declared in DOUBLE: fed and returned as float32, within float32 accuracy of
// the float64 answer.
TEST(CarriedTypes, CumSumInADoubleGraph) {
  Random rng(test_seed());
  const Shape shape = {4, 5, 6};
  for (int64_t axis : {0, 1, 2, -1}) {
    OneNode m("CumSum", {{"x", shape}, {"axis", {}}}, {onnx::TensorProto::DOUBLE, onnx::TensorProto::INT64},
              {{"y", shape}}, {onnx::TensorProto::DOUBLE});
    add_int_attribute(m.node, "reverse", axis == 1);
    add_int_attribute(m.node, "exclusive", axis == 2);
    TemporaryFolder folder;
    auto session = open_session(m.model, folder);
    EXPECT_EQ(session->inputs().at(0).dtype, DType::f32);
    for (int run = 0; run < 2; ++run) {
      const std::vector<float> x = rng.normal(element_count(shape));
      const HostTensor y =
          session->run({{"x", floats(shape, x)}, {"axis", int_tensor(DType::i64, {}, {axis})}}).at("y");
      ASSERT_EQ(y.dtype(), DType::f32);
      const std::vector<double> ref =
          cumsum_reference(x, shape, axis < 0 ? axis + 3 : axis, axis == 2, axis == 1);
      const std::vector<double> got = y.to_double();
      EXPECT_LT(rel_l2(std::vector<float>(got.begin(), got.end()), ref), 1e-6) << "axis " << axis;
    }
  }
}

// numpy's astype to a narrow integer: the low bits, two's complement when signed.
int64_t wrap(int64_t v, int bits, bool is_signed) {
  const uint64_t low = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
  const bool negative = is_signed && (low >> (bits - 1)) != 0;
  return negative ? static_cast<int64_t>(low) - (int64_t{1} << bits) : static_cast<int64_t>(low);
}

TEST(CarriedTypes, CastToNarrowIntegersWraps) {
  Random rng(test_seed());
  const Shape shape = {37};
  struct Target {
    int onnx_type;
    int bits;
    bool is_signed;
  };
  for (const Target t : {Target{onnx::TensorProto::INT8, 8, true}, Target{onnx::TensorProto::INT16, 16, true},
                         Target{onnx::TensorProto::UINT16, 16, false}}) {
    for (const int from : {onnx::TensorProto::INT32, onnx::TensorProto::FLOAT}) {
      OneNode m("Cast", {{"x", shape}}, {from}, {{"y", shape}}, {t.onnx_type});
      add_int_attribute(m.node, "to", t.onnx_type);
      TemporaryFolder folder;
      auto session = open_session(m.model, folder);
      for (int run = 0; run < 2; ++run) {
        std::vector<int64_t> x(shape[0]);
        for (auto& v : x) v = rng.integer(-100000, 100000);
        x[0] = (int64_t{1} << (t.bits - 1)) - 1, x[1] = -(int64_t{1} << (t.bits - 1)),
        x[2] = int64_t{1} << t.bits;
        std::vector<double> xd(x.begin(), x.end());
        const HostTensor input = from == onnx::TensorProto::FLOAT
                                     ? HostTensor::from_double(DType::f32, shape, xd)
                                     : int_tensor(DType::i32, shape, x);
        const HostTensor y = session->run({{"x", input}}).at("y");
        ASSERT_EQ(y.dtype(), DType::i32);
        const std::vector<int64_t> got = y.to_int64();
        for (size_t i = 0; i < x.size(); ++i)
          ASSERT_EQ(got[i], wrap(x[i], t.bits, t.is_signed)) << x[i] << " to " << t.bits << " bits";
      }
    }
  }
}

TEST(CarriedTypes, BitShiftOnUint16AndUint32) {
  Random rng(test_seed());
  const Shape shape = {41};
  for (const int type : {onnx::TensorProto::UINT16, onnx::TensorProto::UINT32}) {
    const int bits = type == onnx::TensorProto::UINT16 ? 16 : 32;
    const DType carrier = type == onnx::TensorProto::UINT16 ? DType::i32 : DType::i64;
    for (const char* direction : {"LEFT", "RIGHT"}) {
      OneNode m("BitShift", {{"x", shape}, {"s", shape}}, {type, type}, {{"y", shape}}, {type});
      set_string(m.node, "direction", direction);
      TemporaryFolder folder;
      auto session = open_session(m.model, folder);
      for (int run = 0; run < 2; ++run) {
        std::vector<int64_t> x(shape[0]), s(shape[0]);
        for (auto& v : x) v = rng.integer(0, 65535);
        for (auto& v : s) v = rng.integer(0, bits + 3);
        const std::vector<int64_t> got =
            session->run({{"x", int_tensor(carrier, shape, x)}, {"s", int_tensor(carrier, shape, s)}})
                .at("y")
                .to_int64();
        for (size_t i = 0; i < x.size(); ++i) {
          const uint64_t ux = static_cast<uint64_t>(x[i]);
          uint64_t want = s[i] >= bits ? 0 : direction[0] == 'L' ? ux << s[i] : ux >> s[i];
          want &= (uint64_t{1} << bits) - 1;
          // uint32 is carried in int64, which the GPU holds in 32 bits: compare where it fits.
          if (bits == 32 && want > 0x7fffffffu) continue;
          ASSERT_EQ(static_cast<uint64_t>(got[i]), want) << x[i] << " " << direction << " " << s[i];
        }
      }
    }
  }
}

TEST(CarriedTypes, ClipOnInt8) {
  Random rng(test_seed());
  const Shape shape = {29};
  OneNode m("Clip", {{"x", shape}, {"lo", {}}, {"hi", {}}},
            {onnx::TensorProto::INT8, onnx::TensorProto::INT8, onnx::TensorProto::INT8}, {{"y", shape}},
            {onnx::TensorProto::INT8});
  TemporaryFolder folder;
  auto session = open_session(m.model, folder);
  for (int run = 0; run < 2; ++run) {
    std::vector<int64_t> x(shape[0]);
    for (auto& v : x) v = rng.integer(-128, 127);
    const int64_t lo = rng.integer(-100, 0), hi = rng.integer(0, 100);
    const std::vector<int64_t> got = session
                                         ->run({{"x", int_tensor(DType::i32, shape, x)},
                                                {"lo", int_tensor(DType::i32, {}, {lo})},
                                                {"hi", int_tensor(DType::i32, {}, {hi})}})
                                         .at("y")
                                         .to_int64();
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], std::clamp(x[i], lo, hi));
  }
}

std::string run_error(const onnx::ModelProto& model, const std::map<std::string, HostTensor>& feeds) {
  TemporaryFolder folder;
  try {
    auto session = open_session(model, folder);
    session->run(feeds);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST(CarriedTypes, CumSumBadAxisNamesTheNode) {
  const Shape shape = {3, 4};
  OneNode m("CumSum", {{"x", shape}, {"axis", {2}}}, {onnx::TensorProto::FLOAT, onnx::TensorProto::INT64},
            {{"y", shape}}, {onnx::TensorProto::FLOAT});
  const HostTensor x = floats(shape, std::vector<float>(12, 1.0f));
  std::string message = run_error(m.model, {{"x", x}, {"axis", int_tensor(DType::i64, {2}, {0, 1})}});
  EXPECT_NE(message.find("node_under_test"), std::string::npos) << message;
  EXPECT_NE(message.find("axis"), std::string::npos) << message;
  OneNode scalar_axis("CumSum", {{"x", shape}, {"axis", {}}},
                      {onnx::TensorProto::FLOAT, onnx::TensorProto::INT64}, {{"y", shape}},
                      {onnx::TensorProto::FLOAT});
  message = run_error(scalar_axis.model, {{"x", x}, {"axis", int_tensor(DType::i64, {}, {2})}});
  EXPECT_NE(message.find("node_under_test"), std::string::npos) << message;
  EXPECT_NE(message.find("out of range"), std::string::npos) << message;
}

}  // namespace
}  // namespace onda::test
