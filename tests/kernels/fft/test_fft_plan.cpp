// FftPlan without a GPU: radix choice, algorithm choice, Bluestein length, four-step split, and the
// errors a bad description gets.
#include <gtest/gtest.h>

#include <numeric>

#include "gpu/gpu_error.h"
#include "kernels/fft/fft_plan.h"

namespace onda::test {
namespace {

using namespace kernels::fft;

FftDeviceLimits limits_32k() {
  FftDeviceLimits limits;
  limits.workgroup_storage_bytes = 32768;
  limits.max_invocations_per_workgroup = 1024;
  limits.max_storage_binding_bytes = uint64_t{128} << 20;
  return limits;
}

FftDescription complex_description(int64_t n, int64_t batch = 1) {
  FftDescription d;
  d.length = n;
  d.outer_count = batch;
  d.input = contiguous_layout(n, 1, 2);
  d.output = contiguous_layout(n, 1, 2);
  return d;
}

TEST(FftPlan, RadicesMultiplyToTheLength) {
  for (int64_t n = 1; n <= 5000; ++n) {
    if (!is_seven_smooth(n)) {
      EXPECT_THROW(choose_radices(n), std::invalid_argument) << n;
      continue;
    }
    const std::vector<int> radices = choose_radices(n);
    const int64_t product = std::accumulate(radices.begin(), radices.end(), int64_t{1}, std::multiplies<>());
    EXPECT_EQ(product, n);
    for (int r : radices) EXPECT_TRUE(r == 2 || r == 3 || r == 4 || r == 5 || r == 7 || r == 8) << n;
  }
  EXPECT_EQ(choose_radices(4096), (std::vector<int>{8, 8, 8, 8}));
  EXPECT_EQ(choose_radices(2048), (std::vector<int>{8, 8, 8, 4}));
  EXPECT_EQ(choose_radices(16), (std::vector<int>{4, 4}));
  EXPECT_EQ(choose_radices(1), (std::vector<int>{}));
}

TEST(FftPlan, ChoosesTheAlgorithmByLength) {
  const FftDeviceLimits limits = limits_32k();
  FftPlan small = FftPlan::create(complex_description(4096), limits);
  EXPECT_EQ(small.algorithm, FftAlgorithm::stockham_workgroup);
  ASSERT_EQ(small.passes.size(), 1u);
  EXPECT_LE(small.passes[0].workgroup_size, 1024);

  FftPlan large = FftPlan::create(complex_description(1 << 20), limits);
  EXPECT_EQ(large.algorithm, FftAlgorithm::four_step);
  ASSERT_EQ(large.passes.size(), 2u);
  EXPECT_EQ(large.passes[0].length * large.passes[1].length, 1 << 20);
  EXPECT_TRUE(large.needs_stage_scratch);

  for (int64_t n : {17, 257, 1021, 4097, 4099, 65537}) {
    FftPlan prime = FftPlan::create(complex_description(n), limits);
    EXPECT_EQ(prime.algorithm, FftAlgorithm::bluestein) << n;
    EXPECT_GE(prime.fft_length, 2 * n - 2);
    EXPECT_TRUE(is_seven_smooth(prime.fft_length));
    EXPECT_TRUE(prime.needs_spectrum);
    std::printf("%s\n", prime.summary().c_str());
  }
  // N = 2^k + 1: the even chirp kernel lets M = 2N - 2 be a power of two.
  EXPECT_EQ(FftPlan::create(complex_description(257), limits).fft_length, 512);
  EXPECT_EQ(FftPlan::create(complex_description(65537), limits).fft_length, 1 << 17);
}

TEST(FftPlan, SmallTransformsShareAWorkgroup) {
  FftPlan plan = FftPlan::create(complex_description(16, 100), limits_32k());
  EXPECT_GT(plan.passes[0].transforms_per_workgroup, 1);
  EXPECT_LE(plan.passes[0].transforms_per_workgroup * 16 * 8, 32768);
}

TEST(FftPlan, RespectsSmallerWorkgroupMemory) {
  FftDeviceLimits limits = limits_32k();
  limits.workgroup_storage_bytes = 16384;  // 2048 points
  FftPlan plan = FftPlan::create(complex_description(4096), limits);
  EXPECT_EQ(plan.algorithm, FftAlgorithm::four_step);
  for (const auto& pass : plan.passes) EXPECT_LE(pass.length, 2048);
}

// The unrolled path's split exchange doubles the longest whole pass (32 KiB: 4096 -> 8192 points),
// as far as a full workgroup's registers hold the points (32 each: 256 invocations hold 8192).
TEST(FftPlan, SplitExchangeDoublesTheWholePassWithinRegisters) {
  FftDeviceLimits limits = limits_32k();
  limits.split_exchange = true;
  EXPECT_EQ(FftPlan::create(complex_description(8192), limits).algorithm, FftAlgorithm::stockham_workgroup);
  EXPECT_EQ(FftPlan::create(complex_description(16384), limits).algorithm, FftAlgorithm::four_step);
  limits.workgroup_storage_bytes = 49152;  // 6144 complex points, 12288 split
  EXPECT_EQ(FftPlan::create(complex_description(12288), limits).algorithm, FftAlgorithm::stockham_workgroup);
  limits.max_invocations_per_workgroup = 256;  // registers for 8192 points only
  EXPECT_EQ(FftPlan::create(complex_description(8192), limits).algorithm, FftAlgorithm::stockham_workgroup);
  EXPECT_EQ(FftPlan::create(complex_description(12288), limits).algorithm, FftAlgorithm::four_step);
  limits.split_exchange = false;
  EXPECT_EQ(FftPlan::create(complex_description(8192), limits).algorithm, FftAlgorithm::four_step);
}

TEST(FftPlan, RejectsBadDescriptions) {
  const FftDeviceLimits limits = limits_32k();
  FftDescription zero = complex_description(0);
  EXPECT_THROW(FftPlan::create(zero, limits), std::invalid_argument);
  FftDescription f16_odd = complex_description(8);
  f16_odd.dtype = DType::f16;
  f16_odd.input.axis_stride = 3;
  EXPECT_THROW(FftPlan::create(f16_odd, limits), std::invalid_argument);
  FftDescription ints = complex_description(8);
  ints.dtype = DType::i32;
  EXPECT_THROW(FftPlan::create(ints, limits), std::invalid_argument);
  FftDescription negative = complex_description(8);
  negative.output.inner_stride = -2;
  EXPECT_THROW(FftPlan::create(negative, limits), std::invalid_argument);
  // The Bluestein spectrum of a huge batch runs in chunks; one row too large for a binding is an error.
  FftPlan chunked = FftPlan::create(complex_description(4099, 4096), limits);
  EXPECT_LT(chunked.outer_per_chunk, 4096);
  EXPECT_LE(static_cast<uint64_t>(chunked.chunk_batch() * chunked.fft_length * 8),
            limits.max_storage_binding_bytes);
  FftDeviceLimits tiny = limits;
  tiny.max_storage_binding_bytes = 4096;
  EXPECT_THROW(FftPlan::create(complex_description(4099, 1), tiny), gpu::DeviceLimitError);
}

}  // namespace
}  // namespace onda::test
