#include "kernels/fft/fft_tables.h"

#include <cmath>
#include <numbers>

namespace onda::kernels::fft {
namespace {

// exp(-2 pi i e / n) with e reduced modulo n first.
ComplexDouble root_of_unity(int64_t e, int64_t n) {
  const double angle = -2.0 * std::numbers::pi * static_cast<double>(e % n) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

int64_t smallest_prime_factor(int64_t n) {
  for (int64_t p = 2; p * p <= n; ++p) {
    if (n % p == 0) return p;
  }
  return n;
}

}  // namespace

std::vector<ComplexDouble> twiddle_table(int64_t fft_length) {
  std::vector<ComplexDouble> table(fft_length);
  for (int64_t k = 0; k < fft_length; ++k) table[k] = root_of_unity(k, fft_length);
  return table;
}

std::vector<ComplexDouble> split_twiddle_table(int64_t fft_length) {
  std::vector<ComplexDouble> table;
  for (int64_t j = 0; j < kSplitTwiddleLow; ++j) table.push_back(root_of_unity(j, fft_length));
  for (int64_t j = 0; j * kSplitTwiddleLow < fft_length; ++j) {
    table.push_back(root_of_unity(j * kSplitTwiddleLow, fft_length));
  }
  return table;
}

std::vector<ComplexDouble> bluestein_chirp(int64_t length) {
  std::vector<ComplexDouble> chirp(length);
  for (int64_t n = 0; n < length; ++n) {
    const int64_t square = (n * n) % (2 * length);
    const double angle = std::numbers::pi * static_cast<double>(square) / static_cast<double>(length);
    chirp[n] = {std::cos(angle), std::sin(angle)};
  }
  return chirp;
}

std::vector<ComplexDouble> bluestein_kernel_spectrum(int64_t length, int64_t convolution_length) {
  const std::vector<ComplexDouble> chirp = bluestein_chirp(length);
  std::vector<ComplexDouble> kernel(convolution_length, 0.0);
  for (int64_t n = 0; n < length; ++n) {
    kernel[n] = chirp[n];
    if (n > 0) kernel[convolution_length - n] = chirp[n];
  }
  std::vector<ComplexDouble> spectrum = dft_double(kernel);
  for (auto& value : spectrum) value /= static_cast<double>(convolution_length);
  return spectrum;
}

std::vector<ComplexDouble> dft_double(const std::vector<ComplexDouble>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  if (n <= 1) return x;
  const int64_t p = smallest_prime_factor(n);
  std::vector<ComplexDouble> out(n);
  if (p == n) {
    for (int64_t k = 0; k < n; ++k) {
      ComplexDouble sum = 0.0;
      for (int64_t j = 0; j < n; ++j) sum += x[j] * root_of_unity(j * k, n);
      out[k] = sum;
    }
    return out;
  }
  // Decimation in time: p interleaved subsequences of length m, combined with twiddles W_n^(q k).
  const int64_t m = n / p;
  std::vector<std::vector<ComplexDouble>> sub(p);
  for (int64_t q = 0; q < p; ++q) {
    std::vector<ComplexDouble> part(m);
    for (int64_t i = 0; i < m; ++i) part[i] = x[i * p + q];
    sub[q] = dft_double(part);
  }
  for (int64_t k = 0; k < n; ++k) {
    ComplexDouble sum = 0.0;
    for (int64_t q = 0; q < p; ++q) sum += sub[q][k % m] * root_of_unity(q * k, n);
    out[k] = sum;
  }
  return out;
}

}  // namespace onda::kernels::fft
