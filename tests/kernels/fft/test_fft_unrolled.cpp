// The unrolled (per-length) Stockham path that discrete GPUs take, forced on here so that CI on a CPU
// adapter checks it against the float64 DFT: every pass shape (whole, four-step columns and rows), every
// radix, length 1, partial workgroups, real packing both ways, Bluestein with and without four-step.
// Few lengths, as each unrolled pipeline is compiled on its own.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "kernels/fft/stockham_unrolled.h"
#include "test_fft_reference.h"

namespace onda::test {
namespace {

using namespace fft_reference;
using kernels::fft::FftCodePath;


FftCase unrolled(FftCase c, std::optional<kernels::fft::FftDeviceLimits> limits = std::nullopt) {
  c.tuning.code_path = FftCodePath::unrolled;
  c.limits = limits;
  return c;
}

// Workgroup memory for `points` complex values: passes longer than that go four-step.
kernels::fft::FftDeviceLimits small_workgroups(int64_t points) {
  kernels::fft::FftDeviceLimits limits = kernels::fft::fft_device_limits(gpu().context);
  limits.workgroup_storage_bytes = static_cast<uint64_t>(points) * 8;
  return limits;
}

TEST(FftUnrolled, MatchesFloat64Reference) {
  std::vector<FftCase> cases;
  // Whole passes: radices 8, 7, 5, 4, 3, 2; a batch of 70 transforms of 16 points is a full workgroup
  // of 64 and a partial one.
  for (int64_t n : {1, 6, 16, 56, 60, 256}) {
    cases.push_back(unrolled(dense_case(n, n == 16 ? 70 : 3, FftDomain::complex, FftDirection::forward)));
  }
  cases.push_back(unrolled(dense_case(256, 3, FftDomain::complex, FftDirection::inverse, DType::f32, true)));
  // Real input / Hermitian input through the half-length complex FFT (the real split in the epilogue).
  cases.push_back(unrolled(dense_case(64, 3, FftDomain::real_to_complex, FftDirection::forward)));
  cases.push_back(unrolled(dense_case(2, 3, FftDomain::real_to_complex, FftDirection::forward)));
  cases.push_back(unrolled(dense_case(30, 3, FftDomain::complex_to_real, FftDirection::inverse, DType::f32, true)));
  // The real split from registers (the last stage in Hermitian pairs j, S - j): one stage (N = 16),
  // an odd last span S (N = 30: 5 x 3; N = 98: 7 x 7), S = 8 after a radix-3 last stage (N = 48), and
  // two rounds of pairs per thread in a split-exchange pass (N = 16384: 1025 pairs, 1024 threads).
  for (int64_t n : {16, 30, 48, 98}) {
    cases.push_back(unrolled(dense_case(n, 3, FftDomain::real_to_complex, FftDirection::forward)));
  }
  cases.push_back(unrolled(dense_case(16384, 2, FftDomain::real_to_complex, FftDirection::forward)));
  // Bluestein (M = 24), then four-step: 256 = 16 x 16 in 64-point workgroups (3 columns per workgroup,
  // padded exchange), and Bluestein N=38 with M = 75 = 5 x 15 (the 7-smooth length >= 2N - 2) four-step
  // in 15-point workgroups (rows of 15 one per workgroup, unpadded), fused into three passes (last of
  // the f32 cases).
  cases.push_back(unrolled(dense_case(13, 3, FftDomain::complex, FftDirection::forward)));
  cases.push_back(unrolled(dense_case(256, 3, FftDomain::complex, FftDirection::forward), small_workgroups(64)));
  cases.push_back(
      unrolled(dense_case(38, 2, FftDomain::complex, FftDirection::inverse), small_workgroups(15)));
  // Whole passes longer than workgroup memory holds as complex values (split exchange: halves one
  // after the other): c2c, r2c and c2r through a 100-point pass in 64-point workgroups, and Bluestein
  // N=13 (M = 24) convolved in one pass in 16-point workgroups.
  const size_t first_split = cases.size();
  cases.push_back(unrolled(dense_case(100, 3, FftDomain::complex, FftDirection::forward), small_workgroups(64)));
  cases.push_back(unrolled(dense_case(200, 3, FftDomain::real_to_complex, FftDirection::forward), small_workgroups(64)));
  cases.push_back(unrolled(dense_case(200, 2, FftDomain::complex_to_real, FftDirection::inverse, DType::f32, true),
                           small_workgroups(64)));
  cases.push_back(unrolled(dense_case(13, 3, FftDomain::complex, FftDirection::inverse), small_workgroups(16)));
  // f16 storage.
  cases.push_back(unrolled(dense_case(60, 3, FftDomain::complex, FftDirection::forward, DType::f16)));
  // The real split from registers on every real-split pass here (by default only for 1024 to 4096 points).
  for (FftCase& c : cases) c.tuning.real_split_pairs = kernels::fft::RealSplitPairs::every_pass;

  Random random(test_seed());
  std::vector<std::unique_ptr<FftKernel>> kernels;
  std::vector<FftCase> f32_cases(cases.begin(), cases.end() - 1);
  const std::vector<double> errors = run_fft_cases(f32_cases, DType::f32, random, &kernels);
  bool four_step = false, padded = false, unpadded = false;
  for (size_t i = 0; i < errors.size(); ++i) {
    const auto& plan = kernels[i]->plan();
    for (const auto& pass : plan.passes) {
      EXPECT_TRUE(pass.unrolled) << plan.summary();
      four_step |= pass.shape != kernels::fft::PassShape::whole && pass.transforms_per_workgroup > 1;
      (pass.padded_exchange ? padded : unpadded) = true;
    }
    std::printf("unrolled %s %s F=%lld: rel L2 %.3g\n", plan.description.summary().c_str(),
                kernels::fft::algorithm_name(plan.algorithm), static_cast<long long>(plan.fft_length), errors[i]);
    EXPECT_LE(errors[i], kF32Bound) << plan.summary();
  }
  EXPECT_TRUE(four_step) << "no four-step pass with several transforms per workgroup was tested";
  // Bluestein runs fused: in one pass when M fits a workgroup (N=13, M=24), and with a four-step M as
  // columns, rows_convolve, columns_out.
  for (size_t i = first_split; i < first_split + 4; ++i) {
    const auto& plan = kernels[i]->plan();
    ASSERT_EQ(plan.passes.size(), 1u) << plan.summary();
    EXPECT_TRUE(plan.passes[0].split_exchange) << plan.summary();
  }
  EXPECT_TRUE(kernels[first_split + 3]->plan().passes[0].convolve_in_workgroup);
  const auto& one_pass = kernels[first_split - 3]->plan();
  ASSERT_EQ(one_pass.passes.size(), 1u) << one_pass.summary();
  EXPECT_TRUE(one_pass.passes[0].convolve_in_workgroup) << one_pass.summary();
  const auto& fused = kernels[first_split - 1]->plan();
  ASSERT_EQ(fused.passes.size(), 3u) << fused.summary();
  EXPECT_EQ(fused.passes[1].shape, kernels::fft::PassShape::rows_convolve);
  EXPECT_EQ(fused.passes[2].shape, kernels::fft::PassShape::columns_out);
  EXPECT_TRUE(padded && unpadded) << "padded and unpadded workgroup memory should both be tested";

  const std::vector<double> f16_errors = run_fft_cases({cases.back()}, DType::f16, random, &kernels);
  std::printf("unrolled f16 %s: rel L2 %.3g\n", kernels[0]->plan().summary().c_str(), f16_errors[0]);
  EXPECT_LE(f16_errors[0], 1e-3);
}

// Split exchanges of 512 points and of more than 4096 are swizzled (StockhamPassPlan::
// swizzled_exchange), and 8192 points run as radices 8,8,16,8: c2c 512, r2c 1024 (L = 512), c2c 8192,
// r2c 16384 with the real split through workgroup memory (the default there), and the c2r 16384 inverse.
// Dense real signals are read and written as vec2 pairs.
TEST(FftUnrolled, SwizzledExchangesAndVec2RealSignals) {
  // The device's own limits: 8192 points fit a split exchange from 32 KiB of workgroup memory (lavapipe).
  const std::optional<kernels::fft::FftDeviceLimits> limits;
  std::vector<FftCase> cases;
  cases.push_back(unrolled(dense_case(512, 3, FftDomain::complex, FftDirection::forward), limits));
  cases.push_back(unrolled(dense_case(1024, 3, FftDomain::real_to_complex, FftDirection::forward), limits));
  cases.push_back(
      unrolled(dense_case(8192, 2, FftDomain::complex, FftDirection::inverse, DType::f32, true), limits));
  cases.push_back(unrolled(dense_case(16384, 3, FftDomain::real_to_complex, FftDirection::forward), limits));
  cases.push_back(unrolled(
      dense_case(16384, 2, FftDomain::complex_to_real, FftDirection::inverse, DType::f32, true), limits));
  const std::vector<std::unique_ptr<FftKernel>> kernels =
      expect_cases_within(cases, DType::f32, kF32Bound, "swizzled", [](const kernels::fft::FftPlan& plan) {
        ASSERT_EQ(plan.passes.size(), 1u) << plan.summary();
        const auto& pass = plan.passes[0];
        EXPECT_TRUE(pass.split_exchange && pass.swizzled_exchange && !pass.padded_exchange) << plan.summary();
        if (pass.length == 8192) {
          EXPECT_EQ(pass.radices, (std::vector<int>{8, 8, 16, 8})) << plan.summary();
        }
      });
  for (const auto& kernel : kernels) EXPECT_TRUE(kernel->vec2_io()) << kernel->plan().summary();
}

// The shapes the unrolled path gives an H200-like device (48 KiB of workgroup memory): every pass's
// workgroup is threads x transforms exactly, within 256 invocations, and its (padded) workgroup memory
// fits; four-step passes walk runs of at least 4 consecutive columns.
TEST(FftUnrolled, PassShapesFitTheDevice) {
  kernels::fft::FftDeviceLimits limits;
  limits.workgroup_storage_bytes = 48 * 1024;
  limits.max_invocations_per_workgroup = 1024;
  limits.max_storage_binding_bytes = uint64_t{1} << 30;
  limits.split_exchange = true;  // as the unrolled path plans
  for (int64_t n : {1, 2, 16, 256, 1000, 1024, 4096, 6144, 16384, 4099, 65537, 1 << 20}) {
    for (FftDomain domain : {FftDomain::complex, FftDomain::real_to_complex}) {
      kernels::fft::FftPlan plan =
          kernels::fft::FftPlan::create(dense_description(n, 64, domain, FftDirection::forward), limits);
      for (kernels::fft::StockhamPassPlan& pass : plan.passes) {
        kernels::fft::specialise_pass(pass, limits);
        const int64_t stride = kernels::fft::unrolled_exchange_stride(pass);
        const int64_t last_point = pass.length - 1 + (pass.padded_exchange ? (pass.length - 1) >> 3 : 0);
        EXPECT_TRUE(pass.unrolled);
        EXPECT_EQ(pass.workgroup_size, pass.threads_per_transform * pass.transforms_per_workgroup);
        EXPECT_LE(pass.workgroup_size, limits.max_invocations_per_workgroup);
        // One butterfly per thread in every stage where the workgroup size allows it; one butterfly of
        // the largest radix for whole passes of 128 and 512..4096 points (specialise_pass).
        const int min_radix = pass.radices.empty() ? 1 : *std::min_element(pass.radices.begin(), pass.radices.end());
        const int max_radix = pass.radices.empty() ? 1 : *std::max_element(pass.radices.begin(), pass.radices.end());
        // Four-step passes that split their exchange for longer runs take the largest radix too.
        const bool whole = pass.shape == kernels::fft::PassShape::whole;
        const bool largest_radix_rule =
            (whole && (pass.length == 128 || pass.length == 512 || pass.length == 1024 ||
                       pass.length == 2048 || pass.length == 4096)) ||
            (!whole && pass.split_exchange);
        const int radix = largest_radix_rule ? max_radix : min_radix;
        if ((pass.length + radix - 1) / radix <= limits.max_invocations_per_workgroup) {
          EXPECT_EQ(int64_t{pass.threads_per_transform}, (pass.length + radix - 1) / radix) << plan.summary();
        }
        EXPECT_LT(last_point, stride);
        EXPECT_GE(pass.exchange_length, stride * pass.transforms_per_workgroup);
        EXPECT_LE(pass.exchange_length * (pass.split_exchange ? 4 : 8), static_cast<int64_t>(limits.workgroup_storage_bytes));
        // Whole passes of 128 and of 512 points or more split their exchange (those over 6144 must);
        // four-step passes (not paired rows) where a run of transforms would not fit otherwise. Split
        // exchanges go unpadded.
        const int64_t complex_points = static_cast<int64_t>(limits.workgroup_storage_bytes / 8);
        if (pass.split_exchange) {
          EXPECT_FALSE(pass.padded_exchange) << plan.summary();
        }
        EXPECT_EQ(
            pass.split_exchange,
            whole ? pass.length == 128 || pass.length >= 512
                  : !pass.paired_rows && pass.transforms_per_workgroup * (pass.length + 1) > complex_points)
            << plan.summary();
        if (pass.shape != kernels::fft::PassShape::whole) {
          EXPECT_GE(pass.transforms_per_workgroup, 4);  // runs of at least a 32-byte sector
        }
      }
      std::printf("%s\n", plan.summary().c_str());
    }
  }
}

// Complex values read and written as vec2 need even element offsets: views at odd offsets (rows of 7
// complex values plus one float, sliced) take the scalar pipelines, views at even ones the vec2 ones,
// and both match the float64 DFT with the rows outside the views left untouched.
TEST(FftUnrolled, OddAndEvenOffsetViews) {
  Gpu& g = gpu();
  Random random(test_seed());
  const int64_t n = 7, rows = 6;
  for (int64_t first : {1, 2}) {  // row length 15 floats: odd rows start at odd offsets
    const std::vector<float> host = random.normal(rows * 15);
    Tensor all_input = upload_floats(host, DType::f32, {rows, 15});
    Tensor all_output = poisoned(DType::f32, {rows, 15});
    Tensor input = all_input.slice_outer(first, first + 1);
    Tensor output = all_output.slice_outer(first, first + 1);
    FftDescription d = dense_description(n, 1, FftDomain::complex, FftDirection::forward);
    kernels::fft::FftTuning tuning;
    tuning.code_path = FftCodePath::unrolled;
    FftKernel kernel(g.context, g.pool, g.pipelines, d, std::nullopt, tuning);
    gpu::CommandRecorder recorder(g.context);
    kernel.record(recorder, input, output);
    recorder.submit_and_wait();
    const std::vector<float> row(host.begin() + first * 15, host.begin() + first * 15 + 2 * n);
    std::vector<float> got = output.download_floats(g.context);
    got.resize(2 * n);
    const double e = rel_l2(got, reference_output(d, row, 2 * n));
    std::printf("unrolled c2c N=7 on a view at element offset %lld: rel L2 %.3g\n",
                static_cast<long long>(first * 15), e);
    EXPECT_LE(e, kF32Bound);
    const std::vector<float> whole = all_output.download_floats(g.context);
    EXPECT_TRUE(std::isnan(whole[first * 15 - 1]) && std::isnan(whole[first * 15 + 2 * n]));
  }
}

TEST(FftUnrolled, AutomaticPathIsGenericOnCpuAdapters) {
  Gpu& g = gpu();
  const FftCodePath expected =
      g.context.adapter_description().type == "CPU" ? FftCodePath::generic : FftCodePath::unrolled;
  EXPECT_EQ(kernels::fft::resolve_code_path(g.context, FftCodePath::automatic), expected);
  EXPECT_EQ(kernels::fft::resolve_code_path(g.context, FftCodePath::generic), FftCodePath::generic);
}

}  // namespace
}  // namespace onda::test
