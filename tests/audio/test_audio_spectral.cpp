// The STFT and inverse STFT graphs around spectrogram models (src/audio/spectral_graphs.h), run by
// onda's Session on the GPU, against float64 transcriptions of MP-SENet's mag_pha_stft
// (torch.stft center=True, reflect padding, periodic Hann; magnitude sqrt(re^2 + im^2 + 1e-9)
// raised to the compression, phase atan2(im + 1e-10, re + 1e-5)) and of torch.istft on arbitrary
// (not necessarily consistent) magnitude/phase input.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "audio/spectral_graphs.h"
#include "harness.h"
#include "onda/session.h"
#include "test_onnx_support.h"

namespace onda::test {
namespace {

using cd = std::complex<double>;

std::unique_ptr<Session> open_bytes(const std::string& bytes, TemporaryFolder& folder,
                                    const std::string& name) {
  const auto path = folder.path() / (name + ".onnx");
  write_file(path, bytes);
  return Session::open(path);
}

audio::SpectrogramProcessing processing(int64_t n_fft, int64_t hop, const std::string& window,
                                        double compression) {
  audio::SpectrogramProcessing p;
  p.n_fft = n_fft, p.hop = hop, p.window = window, p.compression = compression;
  return p;
}

// e^(sign 2 pi i m / n) for m in [0, n): the references' twiddles, computed once.
std::vector<cd> twiddles(int64_t n, double sign) {
  std::vector<cd> t(static_cast<size_t>(n));
  for (int64_t m = 0; m < n; ++m)
    t[m] = std::polar(1.0, sign * 2 * M_PI * static_cast<double>(m) / static_cast<double>(n));
  return t;
}

struct SpectralCase {
  int64_t n_fft, hop, segment;
  const char* window;
  double compression;
  int64_t batch;
};
const std::vector<SpectralCase> kSpectralCases = {
    {400, 100, 1600, "hann", 0.3, 1}, {64, 16, 1024, "hann", 1.0, 3}, {30, 10, 500, "rectangular", 0.5, 2}};

TEST(AudioSpectral, StftMatchesMpSenetMagnitudeAndPhase) {
  Random rng(test_seed());
  for (const SpectralCase& c : kSpectralCases) {
    const auto p = processing(c.n_fft, c.hop, c.window, c.compression);
    TemporaryFolder folder;
    auto session = open_bytes(audio::stft_model_bytes(p, c.segment), folder, "stft");
    const auto x = rng.normal(static_cast<size_t>(c.batch * c.segment), 0.0, 0.3);
    auto out = session->run({{"wave", HostTensor::from_values({c.batch, c.segment}, x)}});
    const int64_t bins = c.n_fft / 2 + 1, frames = c.segment / c.hop + 1, half = c.n_fft / 2;
    ASSERT_EQ(out.at("magnitude").shape(), (Shape{c.batch, bins, frames}));
    ASSERT_EQ(out.at("phase").shape(), (Shape{c.batch, bins, frames}));
    const auto magnitude = out.at("magnitude").to_double(), phase = out.at("phase").to_double();
    const auto window = audio::spectral_window(c.window, c.n_fft);
    const auto forward = twiddles(c.n_fft, -1.0);
    std::vector<double> ref_magnitude;
    std::vector<float> got_unit, got_magnitude(magnitude.begin(), magnitude.end());
    std::vector<double> ref_unit;  // magnitude-weighted unit phasors: no 2 pi wrap ambiguity
    for (int64_t b = 0; b < c.batch; ++b) {
      const float* row = x.data() + b * c.segment;
      auto padded = [&](int64_t i) {  // numpy/torch reflect padding by n_fft/2
        i -= half;
        if (i < 0) i = -i;
        if (i >= c.segment) i = 2 * (c.segment - 1) - i;
        return static_cast<double>(row[i]);
      };
      for (int64_t k = 0; k < bins; ++k)
        for (int64_t f = 0; f < frames; ++f) {
          cd sum = 0;
          for (int64_t j = 0; j < c.n_fft; ++j)
            sum += padded(f * c.hop + j) * window[j] * forward[j * k % c.n_fft];
          const double linear = std::sqrt(std::norm(sum) + 1e-9);
          ref_magnitude.push_back(std::pow(linear, c.compression));
          const double angle = std::atan2(sum.imag() + 1e-10, sum.real() + 1e-5);
          const size_t i = static_cast<size_t>((b * bins + k) * frames + f);
          ref_unit.push_back(linear * std::cos(angle));
          ref_unit.push_back(linear * std::sin(angle));
          got_unit.push_back(static_cast<float>(linear * std::cos(phase[i])));
          got_unit.push_back(static_cast<float>(linear * std::sin(phase[i])));
        }
    }
    const double e_magnitude = rel_l2(got_magnitude, ref_magnitude), e_phase = rel_l2(got_unit, ref_unit);
    EXPECT_LE(e_magnitude, 1e-5) << "n_fft " << c.n_fft;
    EXPECT_LE(e_phase, 1e-5) << "n_fft " << c.n_fft;
    double worst_range = 0;
    for (double v : phase) worst_range = std::max(worst_range, std::abs(v));
    EXPECT_LE(worst_range, M_PI + 1e-6);  // atan2's range
    std::printf(
        "STFT n_fft %3lld hop %3lld %-11s c %.1f batch %lld: magnitude rel L2 %.2e, phase (weighted) %.2e\n",
        static_cast<long long>(c.n_fft), static_cast<long long>(c.hop), c.window, c.compression,
        static_cast<long long>(c.batch), e_magnitude, e_phase);
  }
}

TEST(AudioSpectral, IstftMatchesTorchIstft) {
  Random rng(test_seed());
  for (const SpectralCase& c : kSpectralCases) {
    const auto p = processing(c.n_fft, c.hop, c.window, c.compression);
    TemporaryFolder folder;
    auto session = open_bytes(audio::istft_model_bytes(p, c.segment), folder, "istft");
    const int64_t bins = c.n_fft / 2 + 1, frames = c.segment / c.hop + 1, half = c.n_fft / 2;
    const size_t n = static_cast<size_t>(c.batch * bins * frames);
    const auto magnitude = rng.uniform(n, 0.0, 1.0), phase = rng.uniform(n, -M_PI, M_PI);
    auto out = session->run({{"magnitude", HostTensor::from_values({c.batch, bins, frames}, magnitude)},
                             {"phase", HostTensor::from_values({c.batch, bins, frames}, phase)}});
    ASSERT_EQ(out.at("wave").shape(), (Shape{c.batch, c.segment}));
    const auto window = audio::spectral_window(c.window, c.n_fft);
    const auto inverse = twiddles(c.n_fft, 1.0);
    std::vector<double> ref;
    for (int64_t b = 0; b < c.batch; ++b) {
      std::vector<double> y((frames - 1) * c.hop + c.n_fft, 0.0), envelope(y.size(), 0.0);
      for (int64_t f = 0; f < frames; ++f) {
        std::vector<cd> full(c.n_fft);  // Hermitian extension (numpy irfft drops DC/Nyquist imaginary parts)
        for (int64_t k = 0; k < bins; ++k) {
          const size_t i = static_cast<size_t>((b * bins + k) * frames + f);
          full[k] = std::polar(std::pow(static_cast<double>(magnitude[i]), 1.0 / c.compression),
                               static_cast<double>(phase[i]));
        }
        full[0] = full[0].real();
        if (c.n_fft % 2 == 0) full[c.n_fft / 2] = full[c.n_fft / 2].real();
        for (int64_t k = bins; k < c.n_fft; ++k) full[k] = std::conj(full[c.n_fft - k]);
        for (int64_t j = 0; j < c.n_fft; ++j) {
          cd sum = 0;
          for (int64_t k = 0; k < c.n_fft; ++k) sum += full[k] * inverse[j * k % c.n_fft];
          y[f * c.hop + j] += sum.real() / c.n_fft * window[j];
          envelope[f * c.hop + j] += window[j] * window[j];
        }
      }
      for (int64_t t = 0; t < c.segment; ++t) ref.push_back(y[half + t] / envelope[half + t]);
    }
    const auto got_d = out.at("wave").to_double();
    const std::vector<float> got(got_d.begin(), got_d.end());
    const double e = rel_l2(got, ref);
    EXPECT_LE(e, 1e-5) << "n_fft " << c.n_fft;
    std::printf("iSTFT n_fft %3lld hop %3lld %-11s c %.1f batch %lld: rel L2 %.2e\n",
                static_cast<long long>(c.n_fft), static_cast<long long>(c.hop), c.window, c.compression,
                static_cast<long long>(c.batch), e);
  }
}

}  // namespace
}  // namespace onda::test
