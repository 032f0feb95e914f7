// Complex FFT kernels (Stockham in workgroup memory, four-step, Bluestein) against a float64 DFT:
// every length 1..256, a sample of smooth lengths up to 4096, primes, batched and strided layouts,
// inverse scaling and round trips.
#include <gtest/gtest.h>

#include <chrono>

#include "test_fft_reference.h"

namespace onda::test {
namespace {

using namespace fft_reference;


// Every length 1..256 in one submit per domain and direction: each length reads its own region of one
// input tensor and writes its own region of one output tensor (run_fft_cases), so a sweep costs one
// upload, one wait and one download on top of the few pipelines it shares.
void expect_every_length_to_256(FftDomain domain, FftDirection direction, bool normalize, const char* what) {
  std::vector<FftCase> cases;
  for (int64_t n = 1; n <= 256; ++n)
    cases.push_back(dense_case(n, 3, domain, direction, DType::f32, normalize));
  Random random(test_seed());
  std::vector<std::unique_ptr<FftKernel>> kernels;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> errors = run_fft_cases(cases, DType::f32, random, &kernels);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t worst = 0;
  for (size_t i = 0; i < errors.size(); ++i) {
    EXPECT_LE(errors[i], kF32Bound) << kernels[i]->plan().summary();
    if (errors[i] > errors[worst]) worst = i;
  }
  std::printf("%s N=1..256 batch 3: worst rel L2 %.3g at N=%lld (%.1f s)\n", what, errors[worst],
              static_cast<long long>(worst + 1), seconds);
}

TEST(FftComplex, ForwardEveryLength1To256) {
  expect_every_length_to_256(FftDomain::complex, FftDirection::forward, false, "c2c forward");
}

TEST(FftComplex, InverseEveryLength1To256) {
  expect_every_length_to_256(FftDomain::complex, FftDirection::inverse, true, "c2c inverse 1/N");
}

TEST(FftReal, ForwardEveryLength1To256) {
  expect_every_length_to_256(FftDomain::real_to_complex, FftDirection::forward, false, "r2c");
}

TEST(FftReal, InverseEveryLength1To256) {
  expect_every_length_to_256(FftDomain::complex_to_real, FftDirection::inverse, true, "c2r 1/N");
}

TEST(FftComplex, SmoothLengthsTo4096ForwardAndInverse) {
  std::vector<FftCase> cases;
  for (int64_t n : {300, 384, 500, 512, 625, 1000, 1024, 1536, 2048, 2187, 2401, 3000, 3125, 4096}) {
    cases.push_back(dense_case(n, 2, FftDomain::complex, FftDirection::forward));
    cases.push_back(dense_case(n, 2, FftDomain::complex, FftDirection::inverse, DType::f32, n % 2 == 0));
  }
  expect_cases_within(cases, DType::f32, kF32Bound, "smooth");
}

TEST(FftComplex, PrimeAndRoughLengthsUseBluestein) {
  std::vector<FftCase> cases;
  for (int64_t n : {17, 257, 1021, 4097, 4099}) {
    cases.push_back(dense_case(n, 2, FftDomain::complex, FftDirection::forward));
    cases.push_back(dense_case(n, 1, FftDomain::complex, FftDirection::inverse, DType::f32, true));
  }
  expect_cases_within(cases, DType::f32, kF32Bound, "bluestein");
}

// A DFT along the middle axis of [outer, N, inner, 2], written to the transposed layout
// [outer, inner, N, 2]: the axis needs no copy in or out.
TEST(FftComplex, StridedAxisNeedsNoTranspose) {
  std::vector<FftCase> cases;
  for (int64_t n : {60, 61, 256}) {
    for (FftDirection direction : {FftDirection::forward, FftDirection::inverse}) {
      FftCase c;
      FftDescription& d = c.description;
      d.length = n;
      d.outer_count = 3;
      d.inner_count = 5;
      d.direction = direction;
      d.input = kernels::fft::contiguous_layout(n, 5, 2);
      d.output.axis_stride = 2;
      d.output.inner_stride = 2 * n;
      d.output.outer_stride = 2 * n * 5;
      c.input_elements = c.output_elements = 3 * n * 5 * 2;
      cases.push_back(c);
    }
  }
  expect_cases_within(cases, DType::f32, kF32Bound, "strided");
}

// ONNX dft_length: shorter inputs are zero-padded, longer ones truncated.
TEST(FftComplex, InputLengthPadsAndTruncates) {
  std::vector<FftCase> cases;
  for (auto [n, present] : {std::pair<int64_t, int64_t>{64, 40}, {64, 100}, {257, 200}, {100, 300}}) {
    FftCase c;
    FftDescription& d = c.description;
    d.length = n;
    d.outer_count = 2;
    d.input_length = present;
    d.input = kernels::fft::contiguous_layout(present, 1, 2);
    d.output = kernels::fft::contiguous_layout(n, 1, 2);
    c.input_elements = 2 * present * 2;
    c.output_elements = 2 * n * 2;
    cases.push_back(c);
  }
  expect_cases_within(cases, DType::f32, kF32Bound, "dft_length");
}

TEST(FftComplex, Float16InputAndOutput) {
  std::vector<FftCase> cases;
  for (int64_t n : {8, 64, 100, 257, 1024}) {
    cases.push_back(dense_case(n, 3, FftDomain::complex, FftDirection::forward, DType::f16, true));
    cases.push_back(dense_case(n, 2, FftDomain::complex, FftDirection::inverse, DType::f16, true));
  }
  expect_cases_within(cases, DType::f16, 1e-3, "f16");
}

// inverse(forward(x)) / N == x, recorded back to back in one submit.
TEST(FftComplex, RoundTripInverseOfForward) {
  Random random(test_seed());
  for (int64_t n : {1000, 4099}) {
    const double e = round_trip_error(n, 2, false, random);
    std::printf("round trip N=%lld: rel L2 %.3g\n", static_cast<long long>(n), e);
    EXPECT_LE(e, kF32Bound);
  }
}

TEST(FftComplex, RejectsTensorsThatDoNotFit) {
  Gpu& g = gpu();
  const FftDescription d = dense_description(64, 2, FftDomain::complex, FftDirection::forward);
  FftKernel kernel(g.context, g.pool, g.pipelines, d);
  gpu::CommandRecorder recorder(g.context);
  Tensor input = poisoned(DType::f32, {256});
  Tensor output = poisoned(DType::f32, {256});
  Tensor small = poisoned(DType::f32, {255});
  Tensor half = poisoned(DType::f16, {256});
  EXPECT_THROW(kernel.record(recorder, small, output), std::invalid_argument);
  EXPECT_THROW(kernel.record(recorder, input, small), std::invalid_argument);
  EXPECT_THROW(kernel.record(recorder, half, output), std::invalid_argument);
  EXPECT_THROW(kernel.record(recorder, input, input), std::invalid_argument);
  try {
    kernel.record(recorder, small, output);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("input"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(kernel.record(recorder, input, output));
  recorder.submit_and_wait();
}

}  // namespace
}  // namespace onda::test
