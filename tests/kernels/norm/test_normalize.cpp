// Normalization (LayerNorm, InstanceNorm, GroupNorm) against float64: fused short rows and the
// chunked long-row path, with and without affine parameters, f32 and f16, odd sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "gpu/command_recorder.h"
#include "harness.h"
#include "kernels/norm/normalize_kernel.h"

namespace onda::test {
namespace {

using kernels::NormalizeSpec;

std::vector<double> reference(const std::vector<float>& x, const std::vector<float>& scale,
                              const std::vector<float>& bias, const NormalizeSpec& s,
                              const std::vector<float>& slope = {}) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < s.rows; ++r) {
    double mean = 0, var = 0, rstd = 0;
    if (s.l2) {  // x / max(||x||, epsilon)
      double squares = 0;
      for (int64_t k = 0; k < s.row_size; ++k) squares += std::pow(double(x[r * s.row_size + k]), 2);
      rstd = 1.0 / std::max(std::sqrt(squares), double(s.epsilon));
    } else {
      for (int64_t k = 0; k < s.row_size; ++k) mean += x[r * s.row_size + k];
      mean /= static_cast<double>(s.row_size);
      for (int64_t k = 0; k < s.row_size; ++k) var += std::pow(x[r * s.row_size + k] - mean, 2);
      var /= static_cast<double>(s.row_size);
      rstd = 1.0 / std::sqrt(var + s.epsilon);
    }
    for (int64_t k = 0; k < s.row_size; ++k) {
      const int64_t a = (r % s.row_mod) * s.row_mul + (k / s.k_div) % s.k_mod;
      double v = (x[r * s.row_size + k] - mean) * rstd;
      if (!scale.empty()) v *= scale[a];
      if (!bias.empty()) v += bias[a];
      if (!slope.empty() && v < 0) v *= slope[a];
      y[r * s.row_size + k] = v;
    }
  }
  return y;
}

// `epilogue` (applied at the store) and its float64 twin `after`, when given.
double run(const Shape& shape, const NormalizeSpec& spec, DType dtype, bool with_scale, bool with_bias,
           Random& rng, const kernels::FusedEpilogue& epilogue = {},
           const std::function<double(double)>& after = {}, bool with_slope = false) {
  const int64_t affine = (spec.row_mod - 1) * spec.row_mul + spec.k_mod;
  // A mean offset from zero makes cancellation in the variance visible.
  auto x = round_to_dtype(rng.normal(element_count(shape), 3.0, 2.0), dtype);
  std::vector<float> scale, bias;
  if (with_scale) scale = round_to_dtype(rng.normal(affine), dtype);
  if (with_bias) bias = round_to_dtype(rng.normal(affine), dtype);
  std::vector<float> slope;
  if (with_slope) slope = round_to_dtype(rng.uniform(affine, -0.5, 1.5), dtype);
  Tensor tx = upload_floats(x, dtype, shape);
  Tensor ts = with_scale ? upload_floats(scale, dtype, {affine}) : Tensor();
  Tensor tb = with_bias ? upload_floats(bias, dtype, {affine}) : Tensor();
  Tensor tp = with_slope ? upload_floats(slope, dtype, {affine}) : Tensor();
  Tensor ty = poisoned(dtype, shape);
  gpu::CommandRecorder recorder(gpu().context);
  const kernels::Normalize plan(
      {gpu().context, gpu().pipelines},
      {shape, dtype, spec, kernels::NormalizeAffine::of(ts), kernels::NormalizeAffine::of(tb), epilogue,
       kernels::NormalizeAffine::of(tp)});
  plan.record(recorder, gpu().pool, tx, ts, tb, ty, tp);
  recorder.submit_and_wait();
  std::vector<double> ref = reference(x, scale, bias, spec, slope);
  if (after)
    for (double& v : ref) v = after(v);
  return rel_l2(ty.download_floats(gpu().context), ref);
}

TEST(Normalize, LayerNorm) {
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    double worst = 0;
    const std::vector<std::pair<Shape, int64_t>> cases = {
        {{5, 7}, -1},    {{3, 4, 512}, -1},   {{2, 3, 5}, 1}, {{4, 4097}, 1},
        {{2, 9000}, -1}, {{1, 3, 33, 31}, 1}, {{6}, 0}};
    for (const auto& [shape, axis] : cases) {
      const double e = run(shape, kernels::layer_norm_spec(shape, axis, 1e-5f), dtype, true, axis != 0, rng);
      EXPECT_LE(e, dtype == DType::f32 ? 1e-6 : 1e-3) << shape_string(shape) << " axis " << axis;
      worst = std::max(worst, e);
    }
    std::printf("LayerNorm %s rel L2 %.2e\n", std::string(dtype_name(dtype)).c_str(), worst);
  }
}

// Rows over their Euclidean norm (NormalizeSpec::l2, a fused F.normalize): BS-RoFormer's rows of 512
// and band widths, the wide fused path, the chunked long-row path (norm from count, mean and M2), a
// zero row (the epsilon floor), with and without a scale.
TEST(Normalize, L2RowsMatchFloat64) {
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    double worst = 0;
    for (const Shape& shape : {Shape{3, 50, 512}, Shape{1, 801, 8}, Shape{2, 5, 4100}, Shape{2, 40000}, Shape{1, 1100000}}) {
      for (bool scale : {true, false}) {
        NormalizeSpec spec = kernels::layer_norm_spec(shape, -1, 1e-12f);
        spec.l2 = true;
        const double e = run(shape, spec, dtype, scale, false, rng);
        EXPECT_LE(e, dtype == DType::f32 ? 1e-6 : 1e-3) << shape_string(shape);
        worst = std::max(worst, e);
      }
    }
    std::printf("L2 rows %s rel L2 %.2e\n", std::string(dtype_name(dtype)).c_str(), worst);
  }
  // A row of zeros divides by epsilon: zeros out, not NaN.
  NormalizeSpec spec = kernels::layer_norm_spec({2, 64}, -1, 1e-12f);
  spec.l2 = true;
  Tensor tx = upload_floats(std::vector<float>(128, 0.0f), DType::f32, {2, 64});
  Tensor ty = poisoned(DType::f32, {2, 64});
  gpu::CommandRecorder recorder(gpu().context);
  kernels::record_normalize({gpu().context, gpu().pipelines}, recorder, gpu().pool, tx, Tensor(), Tensor(), ty, spec);
  recorder.submit_and_wait();
  for (float v : ty.download_floats(gpu().context)) EXPECT_EQ(v, 0.0f);
}

TEST(Normalize, InstanceNormShortAndLongRows) {
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    double worst = 0;
    for (const Shape& shape :
         {Shape{2, 3, 7}, Shape{1, 4, 50, 41}, Shape{1, 3, 70001}, Shape{2, 2, 3, 5, 7},
          // rows of 4097 and 32421 (MP-SENet's): the fused path with workgroups of 1024 where the
          // device has them; rows of 1.1M: 135 chunks of two batches of loads, merged per apply workgroup
          Shape{3, 2, 4097}, Shape{1, 2, 321, 101}, Shape{1, 2, 1100000}}) {
      for (bool affine : {true, false}) {
        const double e = run(shape, kernels::instance_norm_spec(shape, 1e-5f), dtype, affine, affine, rng);
        EXPECT_LE(e, dtype == DType::f32 ? 1e-6 : 1e-3) << shape_string(shape);
        worst = std::max(worst, e);
      }
    }
    std::printf("InstanceNorm %s rel L2 %.2e\n", std::string(dtype_name(dtype)).c_str(), worst);
  }
}

// An elementwise group fused after the normalization (graph/fuse_epilogue.h): MDX23C's exported
// GELU, then LeakyRelu (an attribute, a literal in the shader), on both paths.
TEST(Normalize, InstanceNormWithGeluEpilogue) {
  using kernels::FusedOperand;
  using Op = kernels::ElementwiseOp;
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    kernels::FusedEpilogue gelu;
    for (double c : {std::sqrt(2.0), 1.0, 0.5})
      gelu.constants.push_back(kernels::FusedConstant::of(dtype, c));
    kernels::ElementwiseAttributes leaky;
    leaky.alpha = 0.25f;
    auto step = [](Op op, std::vector<FusedOperand> operands, kernels::ElementwiseAttributes a = {}) {
      return kernels::FusedStep{op, a, std::move(operands)};
    };
    gelu.steps = {step(Op::Div, {FusedOperand::input(0), FusedOperand::constant(0)}),
                  step(Op::Erf, {FusedOperand::step(0)}),
                  step(Op::Add, {FusedOperand::step(1), FusedOperand::constant(1)}),
                  step(Op::Mul, {FusedOperand::input(0), FusedOperand::step(2)}),
                  step(Op::Mul, {FusedOperand::step(3), FusedOperand::constant(2)}),
                  step(Op::LeakyRelu, {FusedOperand::step(4)}, leaky)};
    const auto reference_gelu = [](double x) {
      const double g = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
      return g >= 0 ? g : 0.25 * g;
    };
    double worst = 0;
    for (const Shape& shape : {Shape{2, 3, 7}, Shape{1, 4, 50, 41}, Shape{1, 3, 70001}}) {
      const double e =
          run(shape, kernels::instance_norm_spec(shape, 1e-5f), dtype, true, true, rng, gelu, reference_gelu);
      EXPECT_LE(e, dtype == DType::f32 ? 1e-6 : 1e-3) << shape_string(shape);
      worst = std::max(worst, e);
    }
    std::printf("InstanceNorm + GELU epilogue %s rel L2 %.2e\n", std::string(dtype_name(dtype)).c_str(),
                worst);
  }
}

TEST(Normalize, GroupNormBothAffineLayouts) {
  Random rng(test_seed());
  for (bool per_channel : {true, false}) {
    double worst = 0;
    // Rows of the fused paths and of the chunked path (4 x 9001 with one group), whose rows and
    // channels end at odd elements: a workgroup's elements then cross a channel.
    for (const Shape& shape :
         {Shape{2, 6, 5}, Shape{1, 8, 40, 40}, Shape{3, 4, 9}, Shape{3, 6, 1367}, Shape{2, 4, 4099},
          Shape{2, 4, 9001}}) {
      for (int64_t groups : {1, 2}) {
        const double e = run(shape, kernels::group_norm_spec(shape, groups, per_channel, 1e-5f), DType::f32,
                             true, true, rng);
        EXPECT_LE(e, 1e-6) << shape_string(shape) << " groups " << groups;
        worst = std::max(worst, e);
      }
    }
    std::printf("GroupNorm per_channel=%d rel L2 %.2e\n", per_channel, worst);
  }
  EXPECT_THROW(kernels::group_norm_spec({1, 6, 4}, 4, true, 1e-5f), std::invalid_argument);
}

// A PRelu fused at the store (graph/fuse_norm_prelu.h), indexed as the affine parameters: per channel
// for InstanceNorm and a per-channel GroupNorm, on both paths, before an epilogue.
TEST(Normalize, PreluSlopeAfterTheAffineMap) {
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    double worst = 0;
    for (const Shape& shape : {Shape{2, 3, 7}, Shape{1, 4, 50, 41}, Shape{1, 3, 70001}, Shape{1, 2, 321, 101}}) {
      const double e =
          run(shape, kernels::instance_norm_spec(shape, 1e-5f), dtype, true, true, rng, {}, {}, true);
      EXPECT_LE(e, dtype == DType::f32 ? 1e-6 : 1e-3) << shape_string(shape);
      worst = std::max(worst, e);
    }
    for (const Shape& shape : {Shape{2, 6, 5}, Shape{3, 6, 1367}}) {
      const double e = run(shape, kernels::group_norm_spec(shape, 2, true, 1e-5f), dtype, true, true, rng, {}, {},
                           true);
      EXPECT_LE(e, dtype == DType::f32 ? 1e-6 : 1e-3) << shape_string(shape) << " groups 2";
      worst = std::max(worst, e);
    }
    std::printf("Norm + PRelu %s rel L2 %.2e\n", std::string(dtype_name(dtype)).c_str(), worst);
  }
}

TEST(Normalize, RejectsMismatchedAffine) {
  Tensor x = poisoned(DType::f32, {2, 8}), y = poisoned(DType::f32, {2, 8}), s = poisoned(DType::f32, {7});
  gpu::CommandRecorder recorder(gpu().context);
  EXPECT_THROW(kernels::record_normalize({gpu().context, gpu().pipelines}, recorder, gpu().pool, x, s,
                                         Tensor(), y, kernels::layer_norm_spec({2, 8}, -1, 1e-5f)),
               std::invalid_argument);
}

}  // namespace
}  // namespace onda::test
