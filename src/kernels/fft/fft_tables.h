// Constant tables of an FFT plan, computed on the host in double precision and rounded once to f32,
// so that no twiddle is the product of a chain of rotations (whose error would grow with N).
#pragma once
#include <complex>
#include <cstdint>
#include <vector>

namespace onda::kernels::fft {

using ComplexDouble = std::complex<double>;

// W_F^k = exp(-2 pi i k / F) for k < F.
std::vector<ComplexDouble> twiddle_table(int64_t fft_length);

// The four-step twiddle W_F^t (t < F) as a product of two short tables, so that a pass reads a few
// KiB that stay in its multiprocessor's cache instead of gathering from all F entries (8 MiB at
// F = 2^20, one 32-byte sector per point): entries 0..kSplitTwiddleLow-1 hold W_F^j, the rest
// W_F^(kSplitTwiddleLow j) for j < ceil(F / kSplitTwiddleLow). W_F^t = low[t mod 1024] high[t / 1024].
constexpr int64_t kSplitTwiddleLow = 1024;
std::vector<ComplexDouble> split_twiddle_table(int64_t fft_length);

// Bluestein chirp c_n = exp(i pi n^2 / N) for n < N. n^2 is reduced modulo 2N in integers first, so the
// angle is exact before the one rounding of cos/sin.
std::vector<ComplexDouble> bluestein_chirp(int64_t length);

// The spectrum of Bluestein's convolution kernel, scaled by 1/M (which folds the inverse FFT's 1/M in):
// FFT_M(b) / M with b_n = b_{M-n} = c_n for n < N and 0 elsewhere.
std::vector<ComplexDouble> bluestein_kernel_spectrum(int64_t length, int64_t convolution_length);

// Forward DFT of any length in double: mixed-radix decimation in time, direct DFT for prime lengths.
std::vector<ComplexDouble> dft_double(const std::vector<ComplexDouble>& x);

}  // namespace onda::kernels::fft
