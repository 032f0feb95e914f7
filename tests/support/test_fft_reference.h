// Float64 references and the shared driver of the FFT tests: a direct O(N^2) DFT (exact angles, n*k
// reduced modulo N) up to 4096 points; above, radix-2 decimation for powers of two and Bluestein in
// double (chirp angles from n^2 mod 2N, exact) over a power-of-two radix-2 FFT for other lengths, with
// directly computed twiddles; plus run_fft_cases(), which runs descriptions on fresh random data with
// poisoned outputs in one submit and returns each rel L2 against the reference applied to the same
// strided layout (the references of the cases computed in parallel).
#pragma once
#include <cmath>
#include <complex>
#include <cstdio>
#include <functional>
#include <future>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "gpu/command_recorder.h"
#include "harness.h"
#include "kernels/fft/fft_kernel.h"

namespace onda::test::fft_reference {

using kernels::fft::FftDescription;
using kernels::fft::FftDirection;
using kernels::fft::FftDomain;
using kernels::fft::FftKernel;
using kernels::fft::FftLayout;
using Complex = std::complex<double>;

inline std::vector<Complex> direct_dft(const std::vector<Complex>& x, double sign);

// Iterative radix-2 FFT of a power-of-two length: bit-reversed order, then log2(N) butterfly
// passes whose twiddles come from one table of N/2 roots, each computed directly from its exact angle.
inline std::vector<Complex> radix2_fft(const std::vector<Complex>& x, double sign) {
  const size_t n = x.size();
  if ((n & (n - 1)) != 0) return direct_dft(x, sign);
  std::vector<Complex> a(x);
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  std::vector<Complex> roots(n / 2);
  for (size_t k = 0; k < n / 2; ++k) {
    const double angle = sign * 2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
    roots[k] = {std::cos(angle), std::sin(angle)};
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const size_t half = len / 2, step = n / len;
    for (size_t i = 0; i < n; i += len) {
      for (size_t k = 0; k < half; ++k) {
        const Complex t = roots[k * step] * a[i + k + half];
        a[i + k + half] = a[i + k] - t;
        a[i + k] += t;
      }
    }
  }
  return a;
}

inline std::vector<Complex> direct_dft(const std::vector<Complex>& x, double sign) {
  const size_t n = x.size();
  std::vector<Complex> roots(n);
  for (size_t j = 0; j < n; ++j) {
    const double angle = sign * 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n);
    roots[j] = {std::cos(angle), std::sin(angle)};
  }
  std::vector<Complex> out(n);
  for (size_t k = 0; k < n; ++k) {
    Complex sum = 0.0;
    size_t index = 0;  // n*k mod N, kept exact
    for (size_t j = 0; j < n; ++j) {
      sum += x[j] * roots[index];
      index += k;
      if (index >= n) index -= n;
    }
    out[k] = sum;
  }
  return out;
}

// Bluestein in double: X_k = conj(c_k) sum_n x_n conj(c_n) c_(k-n), c_n = exp(-sign i pi n^2 / N), as a
// circular convolution of power-of-two length M >= 2N - 1 through radix2_fft.
inline std::vector<Complex> bluestein_dft(const std::vector<Complex>& x, double sign) {
  const int64_t n = static_cast<int64_t>(x.size());
  int64_t m = 1;
  while (m < 2 * n - 1) m *= 2;
  std::vector<Complex> chirp(n);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t q = (j * j) % (2 * n);  // exp(i pi j^2 / N) depends on j^2 mod 2N only
    const double angle = -sign * std::numbers::pi * static_cast<double>(q) / static_cast<double>(n);
    chirp[j] = {std::cos(angle), std::sin(angle)};
  }
  std::vector<Complex> a(m, 0.0), b(m, 0.0);
  for (int64_t j = 0; j < n; ++j) a[j] = x[j] * std::conj(chirp[j]);
  b[0] = chirp[0];
  for (int64_t j = 1; j < n; ++j) b[j] = b[m - j] = chirp[j];
  a = radix2_fft(a, -1.0);
  b = radix2_fft(b, -1.0);
  for (int64_t j = 0; j < m; ++j) a[j] *= b[j];
  a = radix2_fft(a, 1.0);
  std::vector<Complex> out(n);
  for (int64_t k = 0; k < n; ++k) out[k] = std::conj(chirp[k]) * a[k] / static_cast<double>(m);
  return out;
}

// X_k = sum_n x_n exp(-+2 pi i n k / N): minus for forward, plus for inverse (no 1/N). Direct up to
// 4096 points; longer powers of two through the iterative radix-2 FFT, other long lengths by Bluestein.
inline std::vector<Complex> reference_dft(const std::vector<Complex>& x, bool inverse) {
  const double sign = inverse ? 1.0 : -1.0;
  const size_t n = x.size();
  if (n <= 4096) return direct_dft(x, sign);
  return (n & (n - 1)) == 0 ? radix2_fft(x, sign) : bluestein_dft(x, sign);
}

inline int64_t layout_address(const FftDescription& d, const FftLayout& l, int64_t b, int64_t n) {
  const int64_t outer = b / d.inner_count, inner = b % d.inner_count;
  return l.offset + outer * l.outer_stride + inner * l.inner_stride + n * l.axis_stride;
}

// The float64 answer of `d` for `input` (the tensor's scalar elements), laid out like the output
// tensor of `output_elements` scalars; positions the transform does not write are NaN (skipped).
inline std::vector<double> reference_output(const FftDescription& d, const std::vector<float>& input,
                                            int64_t output_elements,
                                            const std::vector<float>* window = nullptr) {
  std::vector<double> reference(output_elements, NAN);
  const int64_t n = d.length;
  const bool inverse = d.direction == FftDirection::inverse;
  for (int64_t b = 0; b < d.batch(); ++b) {
    std::vector<Complex> x(n, 0.0);
    if (d.domain == FftDomain::complex_to_real) {
      for (int64_t k = 0; k <= n / 2; ++k) {
        const int64_t a = layout_address(d, d.input, b, k);
        x[k] = {input[a], input[a + 1]};
      }
      for (int64_t k = n / 2 + 1; k < n; ++k) x[k] = std::conj(x[n - k]);
    } else {
      for (int64_t k = 0; k < std::min(n, d.input_samples()); ++k) {
        const int64_t a = layout_address(d, d.input, b, k);
        x[k] =
            d.domain == FftDomain::real_to_complex ? Complex(input[a], 0.0) : Complex(input[a], input[a + 1]);
        if (window) x[k] *= static_cast<double>((*window)[k]);
      }
    }
    std::vector<Complex> y = reference_dft(x, inverse);
    const double scale = d.normalize ? 1.0 / static_cast<double>(n) : 1.0;
    for (int64_t k = 0; k < d.output_samples(); ++k) {
      const int64_t a = layout_address(d, d.output, b, k);
      reference[a] = y[k].real() * scale;
      if (d.domain != FftDomain::complex_to_real) reference[a + 1] = y[k].imag() * scale;
    }
  }
  return reference;
}

// A dense batch of `batch` transforms (outer = batch, inner = 1) in the given domain.
inline FftDescription dense_description(int64_t n, int64_t batch, FftDomain domain, FftDirection direction,
                                        DType dtype = DType::f32) {
  FftDescription d;
  d.length = n;
  d.outer_count = batch;
  d.domain = domain;
  d.direction = direction;
  d.dtype = dtype;
  d.input =
      kernels::fft::contiguous_layout(d.input_samples(), 1, domain == FftDomain::real_to_complex ? 1 : 2);
  d.output =
      kernels::fft::contiguous_layout(d.output_samples(), 1, domain == FftDomain::complex_to_real ? 1 : 2);
  return d;
}

inline int64_t dense_input_elements(const FftDescription& d) {
  return d.batch() * d.input_samples() * (d.input_is_real() ? 1 : 2);
}
inline int64_t dense_output_elements(const FftDescription& d) {
  return d.batch() * d.output_samples() * (d.output_is_real() ? 1 : 2);
}

// One case of run_fft_cases: a description whose layouts are relative to its own regions of
// `input_elements` and `output_elements` scalars.
struct FftCase {
  FftDescription description;
  int64_t input_elements = 0;
  int64_t output_elements = 0;
  std::optional<kernels::fft::FftDeviceLimits> limits;  // tighter than the device's, e.g. to force four-step
  kernels::fft::FftTuning tuning;                       // the code path, the real split's pairing
};

inline FftCase dense_case(int64_t n, int64_t batch, FftDomain domain, FftDirection direction,
                          DType dtype = DType::f32, bool normalize = false) {
  FftCase c;
  c.description = dense_description(n, batch, domain, direction, dtype);
  c.description.normalize = normalize;
  c.input_elements = dense_input_elements(c.description);
  c.output_elements = dense_output_elements(c.description);
  return c;
}

// Runs every case in one submit (lavapipe makes each wait costly): the cases read consecutive regions
// of one random input tensor and write consecutive regions of one poisoned output tensor (offsets
// kept even, as f16 complex values are whole words). Returns each case's rel L2.
inline std::vector<double> run_fft_cases(const std::vector<FftCase>& cases, DType dtype, Random& random,
                                         std::vector<std::unique_ptr<FftKernel>>* kernels_out = nullptr) {
  Gpu& g = gpu();
  std::vector<int64_t> input_begin, output_begin;
  int64_t input_total = 0, output_total = 0;
  for (const FftCase& c : cases) {
    input_begin.push_back(input_total);
    output_begin.push_back(output_total);
    input_total += (c.input_elements + 1) / 2 * 2;
    output_total += (c.output_elements + 1) / 2 * 2;
  }
  const std::vector<float> host_input = round_to_dtype(random.normal(input_total), dtype);
  Tensor input = upload_floats(host_input, dtype, {input_total});
  Tensor output = poisoned(dtype, {output_total});
  gpu::CommandRecorder recorder(g.context);
  std::vector<std::unique_ptr<FftKernel>> kernels;
  for (size_t i = 0; i < cases.size(); ++i) {
    FftDescription d = cases[i].description;
    d.input.offset += input_begin[i];
    d.output.offset += output_begin[i];
    kernels.push_back(
        std::make_unique<FftKernel>(g.context, g.pool, g.pipelines, d, cases[i].limits, cases[i].tuning));
    kernels.back()->record(recorder, input, output);
  }
  recorder.submit_and_wait();
  const std::vector<float> out = output.download_floats(g.context);
  std::vector<std::future<double>> pending;
  for (size_t i = 0; i < cases.size(); ++i) {
    pending.push_back(std::async(std::launch::async, [&, i] {
      const FftCase& c = cases[i];
      const std::vector<float> in(host_input.begin() + input_begin[i],
                                  host_input.begin() + input_begin[i] + c.input_elements);
      const std::vector<float> got(out.begin() + output_begin[i],
                                   out.begin() + output_begin[i] + c.output_elements);
      return rel_l2(got, reference_output(c.description, in, c.output_elements));
    }));
  }
  std::vector<double> errors;
  for (std::future<double>& e : pending) errors.push_back(e.get());
  if (kernels_out) *kernels_out = std::move(kernels);
  return errors;
}

// inverse(forward(x)) / N against x for `batch` dense transforms of length n, complex (c2c both ways)
// or real (r2c then c2r), recorded back to back in one submit on poisoned intermediates. `plan`, when
// given, receives the forward plan's summary.
inline double round_trip_error(int64_t n, int64_t batch, bool real, Random& random, std::string* plan = nullptr) {
  Gpu& g = gpu();
  const FftDescription forward =
      dense_description(n, batch, real ? FftDomain::real_to_complex : FftDomain::complex, FftDirection::forward);
  FftDescription inverse =
      dense_description(n, batch, real ? FftDomain::complex_to_real : FftDomain::complex, FftDirection::inverse);
  inverse.normalize = true;
  const int64_t samples = (real ? 1 : 2) * n * batch;
  const std::vector<float> x = random.normal(samples);
  Tensor input = upload_floats(x, DType::f32, {samples});
  Tensor spectrum = poisoned(DType::f32, {dense_output_elements(forward)});
  Tensor back = poisoned(DType::f32, {samples});
  FftKernel forward_kernel(g.context, g.pool, g.pipelines, forward);
  FftKernel inverse_kernel(g.context, g.pool, g.pipelines, inverse);
  gpu::CommandRecorder recorder(g.context);
  forward_kernel.record(recorder, input, spectrum);
  inverse_kernel.record(recorder, spectrum, back);
  recorder.submit_and_wait();
  if (plan) *plan = forward_kernel.plan().summary();
  return rel_l2(back.download_floats(g.context), std::vector<double>(x.begin(), x.end()));
}

// Runs the cases (inputs from `random`, else from a fresh test_seed() generator), prints one line per
// case, runs `check_plan` (when given) on each plan and holds each error to `bound`. Returns the
// kernels in the cases' order, for checks beyond the plan.
inline std::vector<std::unique_ptr<FftKernel>> expect_cases_within(
    const std::vector<FftCase>& cases, DType dtype, double bound, const char* what,
    const std::function<void(const kernels::fft::FftPlan&)>& check_plan = {}, Random* random = nullptr) {
  Random own(test_seed());
  std::vector<std::unique_ptr<FftKernel>> kernels;
  const std::vector<double> errors = run_fft_cases(cases, dtype, random ? *random : own, &kernels);
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& plan = kernels[i]->plan();
    std::printf("%s %s: rel L2 %.3g\n", what, plan.summary().c_str(), errors[i]);
    if (check_plan) check_plan(plan);
    EXPECT_LE(errors[i], bound) << plan.summary();
  }
  return kernels;
}

}  // namespace onda::test::fft_reference
