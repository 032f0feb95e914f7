// Lengths beyond one workgroup's memory: four-step FFTs through a global scratch buffer (8192, 2^16,
// 2^20, 3 * 2^14) and Bluestein whose convolution length needs four-step itself (10007).
#include <gtest/gtest.h>

#include "test_fft_reference.h"

namespace onda::test {
namespace {

using namespace fft_reference;

constexpr double kF32Bound = 1e-6;

TEST(FftLarge, FourStepComplex) {
  std::vector<FftCase> cases;
  cases.push_back(dense_case(8192, 2, FftDomain::complex, FftDirection::forward));
  cases.push_back(dense_case(8192, 1, FftDomain::complex, FftDirection::inverse, DType::f32, true));
  cases.push_back(dense_case(3 << 14, 1, FftDomain::complex, FftDirection::forward));
  cases.push_back(dense_case(1 << 16, 1, FftDomain::complex, FftDirection::forward));
  cases.push_back(dense_case(1 << 16, 1, FftDomain::complex, FftDirection::inverse, DType::f32, true));
  expect_cases_within(cases, DType::f32, kF32Bound, "four-step");
}

TEST(FftLarge, FourStepReal) {
  std::vector<FftCase> cases;
  cases.push_back(dense_case(1 << 16, 1, FftDomain::real_to_complex, FftDirection::forward));
  cases.push_back(
      dense_case(1 << 16, 1, FftDomain::complex_to_real, FftDirection::inverse, DType::f32, true));
  cases.push_back(
      dense_case(1 << 14, 2, FftDomain::real_to_complex, FftDirection::forward));  // N/2 > one pass
  expect_cases_within(cases, DType::f32, kF32Bound, "four-step real");
}

TEST(FftLarge, BluesteinWithFourStepConvolution) {
  std::vector<FftCase> cases;
  cases.push_back(dense_case(10007, 1, FftDomain::complex, FftDirection::forward));
  expect_cases_within(cases, DType::f32, kF32Bound, "bluestein four-step");
}

// 2^20 points (f32 bound 1e-6 is promised up to 2^16; here the error is printed and held to 2e-6).
TEST(FftLarge, OneMegaPoint) {
  std::vector<FftCase> cases;
  cases.push_back(dense_case(1 << 20, 1, FftDomain::complex, FftDirection::forward));
  expect_cases_within(cases, DType::f32, 2e-6, "2^20");
}

// A batch whose scratch exceeds the storage binding limit (here a tightened one) runs in chunks of
// outer rows, with a partial last chunk.
TEST(FftLarge, ScratchLargerThanABindingRunsInChunks) {
  Gpu& g = gpu();
  Random random(test_seed());
  for (int64_t n : {8192, 1021}) {
    FftDescription d = dense_description(n, 7, FftDomain::complex, FftDirection::forward);
    d.inner_count = 2;  // outer rows of two transforms each, interleaved
    d.input = kernels::fft::contiguous_layout(n, 2, 2);
    d.output = kernels::fft::contiguous_layout(n, 2, 2);
    kernels::fft::FftDeviceLimits limits = kernels::fft::fft_device_limits(g.context);
    const int64_t f = kernels::fft::FftPlan::create(d, limits).fft_length;
    limits.max_storage_binding_bytes = 3 * 2 * f * 8;  // three outer rows of scratch
    FftKernel kernel(g.context, g.pool, g.pipelines, d, limits);
    EXPECT_EQ(kernel.plan().outer_per_chunk, 3) << kernel.plan().summary();
    const int64_t elements = 7 * 2 * n * 2;
    const std::vector<float> x = random.normal(elements);
    Tensor input = upload_floats(x, DType::f32, {elements});
    Tensor output = poisoned(DType::f32, {elements});
    gpu::CommandRecorder recorder(g.context);
    kernel.record(recorder, input, output);
    recorder.submit_and_wait();
    const double e = rel_l2(output.download_floats(g.context), reference_output(d, x, elements));
    std::printf("chunked %s: rel L2 %.3g\n", kernel.plan().summary().substr(0, 90).c_str(), e);
    EXPECT_LE(e, kF32Bound);
  }
}

}  // namespace
}  // namespace onda::test
