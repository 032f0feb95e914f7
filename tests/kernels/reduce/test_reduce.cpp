// Reductions over any axes set (single pass, chunked long rows, multi-run axes) against float64.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu/command_recorder.h"
#include "harness.h"
#include "kernels/reduce/reduce_kernel.h"
#include "ops/onnx_vocabulary.h"

namespace onda::test {
namespace {

using kernels::ReduceOp;

std::vector<double> reference_reduce(const std::vector<float>& x, const Shape& shape, const std::vector<int64_t>& axes,
                                     ReduceOp op) {
  const Shape out_shape = kernels::reduced_shape(shape, axes, true);
  const int64_t n_out = element_count(out_shape);
  double count = 1;
  for (int64_t a : axes) count *= static_cast<double>(shape[a]);
  const double init = op == ReduceOp::Max ? -INFINITY : op == ReduceOp::Min ? INFINITY : op == ReduceOp::Prod ? 1 : 0;
  std::vector<double> acc(n_out, init);
  const int64_t n = element_count(shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, out_index = 0, stride = 1;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      const int64_t c = rest % shape[d];
      rest /= shape[d];
      if (out_shape[d] != 1) out_index += c * stride;
      stride *= out_shape[d];
    }
    const double v = x[i];
    double& a = acc[out_index];
    switch (op) {
      case ReduceOp::Sum: case ReduceOp::Mean: a += v; break;
      case ReduceOp::Max: a = std::max(a, v); break;
      case ReduceOp::Min: a = std::min(a, v); break;
      case ReduceOp::Prod: a *= v; break;
      case ReduceOp::L1: a += std::abs(v); break;
      case ReduceOp::L2: case ReduceOp::SumSquare: a += v * v; break;
      case ReduceOp::LogSumExp: break;
    }
  }
  for (auto& a : acc) {
    if (op == ReduceOp::Mean) a /= count;
    if (op == ReduceOp::L2) a = std::sqrt(a);
  }
  return acc;
}

// The error of a reduction's outputs against float64, relative to what float32 rounding scales with.
// For Sum and Mean that is the reduction of |x|, not of x: a float32 sum's rounding error grows with
// its terms' magnitudes, so a sum that cancels to near zero (7 terms of N(0.5, 1) adding up to 0.1)
// has a large error relative to itself from any summation order; the plain rel L2 then fails on
// some seeds (1.5e-6 for such a sum). The other ops add no terms of mixed signs.
double sum_error(const std::vector<float>& y, const std::vector<float>& x, const Shape& shape,
                 const std::vector<int64_t>& axes, ReduceOp op) {
  const std::vector<double> ref = reference_reduce(x, shape, axes, op);
  if (op != ReduceOp::Sum && op != ReduceOp::Mean) return rel_l2(y, ref);
  std::vector<float> magnitudes(x.size());
  for (size_t i = 0; i < x.size(); ++i) magnitudes[i] = std::abs(x[i]);
  const std::vector<double> scale = reference_reduce(magnitudes, shape, axes, op);
  if (y.size() != ref.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) return INFINITY;
    num += (y[i] - ref[i]) * (y[i] - ref[i]);
    den += scale[i] * scale[i];
  }
  return std::sqrt(num / den);
}

TEST(Reduce, EveryOpOverAxisSets) {
  Random rng(test_seed());
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{7}, {0}},         {{3, 5}, {1}},          {{3, 5}, {0}},        {{2, 3, 4, 5}, {1, 2}},
      {{2, 3, 4, 5}, {0, 2}}, {{2, 3, 4, 5}, {0, 1, 2, 3}}, {{4, 20000}, {1}},  {{1, 50001}, {0, 1}},
      {{2, 3, 9}, {}},    {{3, 1, 4}, {1}}};
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod, ReduceOp::L1,
                      ReduceOp::L2, ReduceOp::SumSquare}) {
    double worst = 0;
    for (DType dtype : {DType::f32, DType::f16}) {
      for (const auto& [shape, axes] : cases) {
        if (op == ReduceOp::Prod && element_count(shape) > 100) continue;  // products of many values under/overflow
        auto x = round_to_dtype(op == ReduceOp::Prod ? rng.uniform(element_count(shape), 0.5, 1.5)
                                                     : rng.normal(element_count(shape), 0.5, 1.0),
                                dtype);
        Tensor tx = upload_floats(x, dtype, shape);
        Tensor ty = poisoned(dtype, kernels::reduced_shape(shape, axes, true));
        gpu::CommandRecorder recorder(gpu().context);
        kernels::record_reduce({gpu().context, gpu().pipelines}, recorder, gpu().pool, op, tx, axes, ty);
        recorder.submit_and_wait();
        const double e = sum_error(ty.download_floats(gpu().context), x, shape, axes, op);
        EXPECT_LE(e, dtype == DType::f32 ? 1e-6 : 1e-3) << "op " << int(op) << " " << shape_string(shape);
        if (dtype == DType::f32) worst = std::max(worst, e);
      }
    }
    std::printf("reduce op %d f32 rel L2 %.2e\n", static_cast<int>(op), worst);
  }
}

// One plan, recorded for fresh inputs run after run: a row split into chunks (two steps) then a
// second pass over another axis run (three dispatches with float32 partials between them).
TEST(Reduce, PlanRecordsEveryRun) {
  Random rng(test_seed());
  const Shape shape{3, 2, 20000};
  const std::vector<int64_t> axes{0, 2};
  const kernels::Reduce plan({gpu().context, gpu().pipelines}, {ReduceOp::Sum, shape, DType::f32, axes});
  for (int run = 0; run < 3; ++run) {
    const auto x = rng.normal(element_count(shape), 0.5, 1.0);
    Tensor y = poisoned(DType::f32, {2});
    gpu::CommandRecorder recorder(gpu().context);
    plan.record(recorder, gpu().pool, upload_floats(x, DType::f32, shape), y);
    recorder.submit_and_wait();
    EXPECT_LE(rel_l2(y.download_floats(gpu().context), reference_reduce(x, shape, axes, ReduceOp::Sum)), 1e-6)
        << "run " << run;
  }
  gpu::CommandRecorder recorder(gpu().context);
  EXPECT_THROW(plan.record(recorder, gpu().pool, poisoned(DType::f32, {3, 2, 5}), poisoned(DType::f32, {2})),
               std::invalid_argument);
}

TEST(Reduce, RejectsBadAxes) {
  Tensor x = poisoned(DType::f32, {2, 3}), y = poisoned(DType::f32, {2});
  gpu::CommandRecorder recorder(gpu().context);
  kernels::KernelContext kc{gpu().context, gpu().pipelines};
  EXPECT_THROW(kernels::record_reduce(kc, recorder, gpu().pool, ReduceOp::Sum, x, {2}, y), std::invalid_argument);
  EXPECT_THROW(kernels::record_reduce(kc, recorder, gpu().pool, ReduceOp::Sum, x, {0}, y), std::invalid_argument);
  EXPECT_THROW(ops::reduce_op_from_onnx("ReduceFoo"), std::invalid_argument);
}

}  // namespace
}  // namespace onda::test
