// Audio files (libsndfile) and conversions (soxr): WAV/FLAC round trips at 16/24 bits and float,
// resampling keeps a sine's frequency and amplitude, channel conversion, and clear errors.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <complex>

#include "harness.h"
#include "onda/audio_file.h"
#include "onda/audio_resample.h"
#include "test_onnx_support.h"

namespace onda::test {
namespace {

using audio::AudioBuffer;

AudioBuffer random_audio(int rate, int channels, int64_t frames, uint64_t seed) {
  Random rng(seed);
  AudioBuffer a(rate, channels, frames);
  a.samples = rng.uniform(a.samples.size(), -0.99, 0.99);
  return a;
}

double max_abs_error(const AudioBuffer& a, const AudioBuffer& b) {
  double worst = 0;
  for (size_t i = 0; i < a.samples.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(a.samples[i]) - b.samples[i]));
  return worst;
}

TEST(AudioFiles, RoundTripsWavAndFlac) {
  TemporaryFolder folder;
  const AudioBuffer original = random_audio(44100, 2, 5000, test_seed());
  struct Case {
    audio::Container container;
    audio::SampleEncoding encoding;
    double tolerance;  // libsndfile writes x * (2^(b-1) - 1) rounded and reads n / 2^(b-1);
                       // one more step for the float product's own rounding at 24 bits
  };
  for (const Case& c :
       {Case{audio::Container::wav, audio::SampleEncoding::pcm16, 0.5 / 32767 + 1.0 / 32768},
        Case{audio::Container::wav, audio::SampleEncoding::pcm24, 1.5 / 8388607 + 1.0 / 8388608},
        Case{audio::Container::wav, audio::SampleEncoding::float32, 0.0},
        Case{audio::Container::flac, audio::SampleEncoding::pcm16, 0.5 / 32767 + 1.0 / 32768},
        Case{audio::Container::flac, audio::SampleEncoding::pcm24, 1.5 / 8388607 + 1.0 / 8388608}}) {
    const auto path = folder.path() / ("x." + audio::container_extension(c.container));
    audio::write_audio(path, original, {c.container, c.encoding});
    const AudioBuffer back = audio::read_audio(path);
    ASSERT_EQ(back.sample_rate, 44100);
    ASSERT_EQ(back.channels, 2);
    ASSERT_EQ(back.frames, original.frames);
    const double e = max_abs_error(back, original);
    EXPECT_LE(e, c.tolerance) << path;
    std::printf("%s encoding %d: max abs error %.3e (bound %.3e)\n", path.filename().c_str(),
                static_cast<int>(c.encoding), e, c.tolerance);
    const auto info = audio::probe_audio(path);
    EXPECT_EQ(info.frames, original.frames);
    // No temporary file is left behind.
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(folder.path()))
      files += entry.path().extension() == ".partial";
    EXPECT_EQ(files, 0);
  }
}

TEST(AudioFiles, WriterInBlocksAndAbandoned) {
  TemporaryFolder folder;
  const AudioBuffer original = random_audio(22050, 2, 70000, test_seed());
  {
    audio::AudioWriter writer(folder.path() / "blocks.wav", 22050, 2,
                              {audio::Container::wav, audio::SampleEncoding::float32});
    for (int64_t start = 0; start < original.frames; start += 30000) {  // blocks of 30000, 30000, 10000
      AudioBuffer block(22050, 2, std::min<int64_t>(30000, original.frames - start));
      for (int c = 0; c < 2; ++c)
        std::copy(original.channel(c) + start, original.channel(c) + start + block.frames, block.channel(c));
      writer.write(block);
    }
    EXPECT_FALSE(std::filesystem::exists(folder.path() / "blocks.wav"));  // not before commit
    writer.commit();
  }
  EXPECT_EQ(audio::read_audio(folder.path() / "blocks.wav").samples, original.samples);
  {
    audio::AudioWriter abandoned(folder.path() / "abandoned.wav", 22050, 2, {});
    abandoned.write(original);
    EXPECT_THROW(abandoned.write(AudioBuffer(22050, 1, 10)), audio::AudioError);  // wrong channel count
  }  // destroyed without commit: nothing left behind
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder.path()))
    names.push_back(entry.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"blocks.wav"});
}

TEST(AudioFiles, OggVorbisIsReadable) {
  TemporaryFolder folder;
  AudioBuffer tone(48000, 1, 48000);
  for (int64_t t = 0; t < tone.frames; ++t)
    tone.samples[t] = static_cast<float>(0.5 * std::sin(2 * M_PI * 440.0 * t / 48000.0));
  const auto path = folder.path() / "tone.ogg";
  audio::write_audio(path, tone, {audio::Container::ogg, audio::SampleEncoding::float32});
  const AudioBuffer back = audio::read_audio(path);
  EXPECT_EQ(back.sample_rate, 48000);
  EXPECT_EQ(back.frames, tone.frames);
  double energy = 0;  // lossy: only check that the tone's power survives
  for (float v : back.samples) energy += v * v;
  EXPECT_NEAR(energy / back.frames, 0.125, 0.01);
}

TEST(AudioFiles, ClearErrors) {
  TemporaryFolder folder;
  EXPECT_THROW(audio::read_audio(folder.path() / "missing.wav"), audio::AudioError);
  EXPECT_THROW(audio::read_audio(folder.path()), audio::AudioError);
  const auto garbage = folder.path() / "garbage.wav";
  write_file(garbage, "this is not a wav file at all, just text");
  try {
    audio::read_audio(garbage);
    ADD_FAILURE() << "garbage was read";
  } catch (const audio::AudioError& e) {
    EXPECT_NE(std::string(e.what()).find("garbage.wav"), std::string::npos) << e.what();
  }
  const AudioBuffer a = random_audio(16000, 1, 100, 1);
  EXPECT_THROW(audio::write_audio(folder.path() / "no" / "such" / "x.wav", a, {}), audio::AudioError);
  EXPECT_THROW(audio::write_audio(folder.path() / "x.flac", a,
                                  {audio::Container::flac, audio::SampleEncoding::float32}),
               audio::AudioError);
  EXPECT_THROW(audio::write_audio(folder.path() / "x.wav", AudioBuffer(), {}), audio::AudioError);
  if (::geteuid() != 0) {  // root writes anywhere
    const auto locked = folder.path() / "locked";
    std::filesystem::create_directories(locked);
    ::chmod(locked.c_str(), 0500);
    EXPECT_THROW(audio::write_audio(locked / "x.wav", a, {}), audio::AudioError);
    ::chmod(locked.c_str(), 0700);
  }
}

// Amplitude and phase of the component at `frequency` (least squares on sin/cos over whole periods).
std::complex<double> tone_component(const float* x, int64_t n, double rate, double frequency) {
  std::complex<double> sum = 0;
  for (int64_t t = 0; t < n; ++t)
    sum += static_cast<double>(x[t]) * std::polar(1.0, -2 * M_PI * frequency * t / rate);
  return 2.0 * sum / static_cast<double>(n);
}

TEST(AudioResample, SineKeepsFrequencyAndAmplitude) {
  const int from = 48000, to = 44100;
  const int64_t frames = 48000;  // 1 s: whole periods of 1 kHz at both rates
  AudioBuffer tone(from, 2, frames);
  for (int c = 0; c < 2; ++c)
    for (int64_t t = 0; t < frames; ++t)
      tone.channel(c)[t] = static_cast<float>((c ? 0.3 : 0.6) * std::sin(2 * M_PI * 1000.0 * t / from));
  const AudioBuffer out = audio::resample(tone, to);
  ASSERT_EQ(out.sample_rate, to);
  ASSERT_EQ(out.frames, 44100);
  for (int c = 0; c < 2; ++c) {
    // Skip the edges (filter start-up), compare the middle 0.8 s with the ideal sine at 44.1 kHz.
    const int64_t skip = 4410, n = 44100 - 2 * skip;
    std::vector<double> ref(n);
    std::vector<float> got(out.channel(c) + skip, out.channel(c) + skip + n);
    for (int64_t t = 0; t < n; ++t) ref[t] = (c ? 0.3 : 0.6) * std::sin(2 * M_PI * 1000.0 * (t + skip) / to);
    const double e = rel_l2(got, ref);
    const double amplitude = std::abs(tone_component(got.data(), n, to, 1000.0));
    EXPECT_LE(e, 1e-5) << "channel " << c;  // SOXR_HQ: 20-bit precision, 1 kHz deep in the passband
    EXPECT_NEAR(amplitude, c ? 0.3 : 0.6, 1e-5);
    EXPECT_LE(std::abs(tone_component(got.data(), n, to, 1100.0)), 1e-5);  // no energy moved to a neighbour
    std::printf("48k -> 44.1k channel %d: rel L2 to the ideal sine %.2e, amplitude %.6f\n", c, e, amplitude);
  }
  EXPECT_EQ(audio::resample(tone, from).samples, tone.samples);
  EXPECT_THROW(audio::resample(tone, 0), audio::AudioError);
}

TEST(AudioResample, ChannelConversion) {
  AudioBuffer stereo(8000, 2, 3);
  stereo.samples = {1, 2, 3, 5, 6, 7};
  const auto mono = audio::convert_channels(stereo, 1);
  EXPECT_EQ(mono.samples, (std::vector<float>{3, 4, 5}));
  const auto back = audio::convert_channels(mono, 2);
  EXPECT_EQ(back.samples, (std::vector<float>{3, 4, 5, 3, 4, 5}));
  EXPECT_THROW(audio::convert_channels(stereo, 3), audio::AudioError);
  EXPECT_THROW(audio::convert_channels(stereo, 0), audio::AudioError);
}

}  // namespace
}  // namespace onda::test
