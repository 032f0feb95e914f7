// Real-input forward FFTs (onesided output, bins 0..N/2) and their inverse (onesided Hermitian input
// -> real output) against a float64 DFT, odd and even N (even N go through the N/2-point packed
// complex FFT), f32 and f16, dense and strided.
#include <gtest/gtest.h>

#include "test_fft_reference.h"

namespace onda::test {
namespace {

using namespace fft_reference;

// Odd and even; 34 = 2*17 is even with a rough half (no packing); 8192 packs into one 4096-point pass.
const int64_t kLengths[] = {1,   2,   3,   4,   5,   7,   8,    15,   16,   34,  45,
                            100, 128, 243, 257, 400, 512, 1000, 1021, 4096, 8192};

TEST(FftReal, ForwardOnesidedOddAndEvenLengths) {
  std::vector<FftCase> cases;
  for (int64_t n : kLengths) {
    cases.push_back(dense_case(n, 2, FftDomain::real_to_complex, FftDirection::forward));
  }
  cases.push_back(dense_case(400, 3, FftDomain::real_to_complex, FftDirection::inverse, DType::f32, true));
  expect_cases_within(cases, DType::f32, kF32Bound, "r2c");
}

// Random (not exactly Hermitian) onesided input: the imaginary parts of bin 0 and, for even N, bin
// N/2 do not reach the real output, as with numpy.fft.irfft.
TEST(FftReal, InverseFromOnesidedHermitian) {
  std::vector<FftCase> cases;
  for (int64_t n : kLengths) {
    cases.push_back(dense_case(n, 2, FftDomain::complex_to_real, FftDirection::inverse, DType::f32, true));
  }
  cases.push_back(dense_case(512, 2, FftDomain::complex_to_real, FftDirection::forward));
  expect_cases_within(cases, DType::f32, kF32Bound, "c2r");
}

// A real signal along the middle axis of [outer, N, inner] to onesided bins in [outer, inner, N/2+1, 2],
// then back; inner transforms of f16 data share 32-bit words, which the real f16 output writes atomically.
TEST(FftReal, StridedAxisF32AndF16) {
  for (DType dtype : {DType::f32, DType::f16}) {
    std::vector<FftCase> cases;
    for (int64_t n : {30, 31, 64}) {
      const int64_t bins = n / 2 + 1;
      FftCase forward;
      FftDescription& f = forward.description;
      f.length = n;
      f.outer_count = 2;
      f.inner_count = 3;
      f.dtype = dtype;
      f.domain = FftDomain::real_to_complex;
      f.input = kernels::fft::contiguous_layout(n, 3, 1);
      f.output.axis_stride = 2;
      f.output.inner_stride = 2 * bins;
      f.output.outer_stride = 2 * bins * 3;
      forward.input_elements = 2 * n * 3;
      forward.output_elements = 2 * 3 * bins * 2;
      cases.push_back(forward);
      FftCase inverse;
      FftDescription& i = inverse.description;
      i = f;
      i.domain = FftDomain::complex_to_real;
      i.direction = FftDirection::inverse;
      i.normalize = true;
      i.input = f.output;
      i.output = kernels::fft::contiguous_layout(n, 3, 1);
      inverse.input_elements = forward.output_elements;
      inverse.output_elements = forward.input_elements;
      cases.push_back(inverse);
    }
    expect_cases_within(cases, dtype, dtype == DType::f16 ? 1e-3 : kF32Bound, "real strided");
  }
}

TEST(FftReal, Float16Dense) {
  std::vector<FftCase> cases;
  for (int64_t n : {7, 16, 100, 257, 1024}) {
    cases.push_back(dense_case(n, 3, FftDomain::real_to_complex, FftDirection::forward, DType::f16, true));
    cases.push_back(dense_case(n, 3, FftDomain::complex_to_real, FftDirection::inverse, DType::f16, true));
  }
  expect_cases_within(cases, DType::f16, 1e-3, "real f16");
}

// irfft(rfft(x)) / N == x for odd and even N, in one submit.
TEST(FftReal, RoundTrip) {
  Random random(test_seed());
  for (int64_t n : {255, 256, 1021}) {
    const double e = round_trip_error(n, 2, true, random);
    std::printf("real round trip N=%lld: rel L2 %.3g\n", static_cast<long long>(n), e);
    EXPECT_LE(e, kF32Bound);
  }
}

// ONNX dft_length on real input: an odd number of present samples splits a packed pair.
TEST(FftReal, InputLengthPadsPackedPairs) {
  std::vector<FftCase> cases;
  for (auto [n, present] : {std::pair<int64_t, int64_t>{64, 41}, {64, 100}, {30, 7}}) {
    FftCase c;
    FftDescription& d = c.description;
    d.length = n;
    d.outer_count = 2;
    d.domain = FftDomain::real_to_complex;
    d.input_length = present;
    d.input = kernels::fft::contiguous_layout(present, 1, 1);
    d.output = kernels::fft::contiguous_layout(n / 2 + 1, 1, 2);
    c.input_elements = 2 * present;
    c.output_elements = 2 * (n / 2 + 1) * 2;
    cases.push_back(c);
  }
  expect_cases_within(cases, DType::f32, kF32Bound, "r2c dft_length");
}

// Tensors that are views (slice_outer) start at an element offset inside their binding.
TEST(FftReal, TensorViewsAtAnOffset) {
  Gpu& g = gpu();
  Random random(test_seed());
  const int64_t n = 96, rows = 5;
  const std::vector<float> host = random.normal(rows * n);
  Tensor all_input = upload_floats(host, DType::f32, {rows, n});
  Tensor all_output = poisoned(DType::f32, {rows, (n / 2 + 1) * 2});
  Tensor input = all_input.slice_outer(1, 4);    // rows 1..3
  Tensor output = all_output.slice_outer(2, 5);  // rows 2..4
  const FftDescription d = dense_description(n, 3, FftDomain::real_to_complex, FftDirection::forward);
  FftKernel kernel(g.context, g.pool, g.pipelines, d);
  gpu::CommandRecorder recorder(g.context);
  kernel.record(recorder, input, output);
  recorder.submit_and_wait();
  const std::vector<float> rows_in(host.begin() + n, host.begin() + 4 * n);
  const double e =
      rel_l2(output.download_floats(g.context), reference_output(d, rows_in, 3 * (n / 2 + 1) * 2));
  std::printf("r2c on views at offsets: rel L2 %.3g\n", e);
  EXPECT_LE(e, kF32Bound);
  // Rows the view does not cover stay untouched (still poisoned).
  const std::vector<float> whole = all_output.download_floats(g.context);
  EXPECT_TRUE(std::isnan(whole[0]) && std::isnan(whole[2 * (n / 2 + 1) - 1]));
}

}  // namespace
}  // namespace onda::test
