// The segmented overlap-add (src/audio/segmenter.h) on the CPU, with models whose behaviour is
// known exactly: an identity model must give the input back for any length, overlap, batch and
// shift count; a model whose output depends on the position inside the segment must match a
// float64 transcription of demucs' apply_model (TensorChunk.padded, center_trim, triangle weights,
// shifts), which catches any misplaced segment or trim.
#include <gtest/gtest.h>

#include <cmath>

#include "audio/segmenter.h"
#include "harness.h"

namespace onda::test {
namespace {

using audio::AudioBuffer;

// out[b][s][c][k] = f(s, c, k, in[b][c][k]) for a fixed function.
class FunctionModel : public audio::SegmentModel {
 public:
  using Function = double (*)(int s, int c, int64_t k, int64_t segment, double x, double other_channel);
  FunctionModel(int64_t segment, int channels, int stems, int max_batch, Function f)
      : segment_(segment), channels_(channels), stems_(stems), max_batch_(max_batch), f_(f) {}
  int64_t segment_length() const override { return segment_; }
  int channels() const override { return channels_; }
  int stems() const override { return stems_; }
  int max_batch() const override { return max_batch_; }
  audio::SegmentOutput run(const std::vector<float>& in, int batch) override {
    EXPECT_LE(batch, max_batch_);
    EXPECT_EQ(in.size(), static_cast<size_t>(batch) * channels_ * segment_);
    batches.push_back(batch);
    auto values = std::make_shared<std::vector<float>>(
        static_cast<size_t>(batch) * stems_ * channels_ * segment_, 0.0f);
    std::vector<float>& out = *values;
    for (int b = 0; b < batch; ++b)
      for (int s = 0; s < stems_; ++s)
        for (int c = 0; c < channels_; ++c)
          for (int64_t k = 0; k < segment_; ++k) {
            const double x = in[(static_cast<size_t>(b) * channels_ + c) * segment_ + k];
            const double y = in[(static_cast<size_t>(b) * channels_ + (channels_ - 1 - c)) * segment_ + k];
            out[((static_cast<size_t>(b) * stems_ + s) * channels_ + c) * segment_ + k] =
                static_cast<float>(f_(s, c, k, segment_, x, y));
          }
    return {values, values->data(), values->size()};
  }
  std::vector<int> batches;

 private:
  int64_t segment_;
  int channels_, stems_, max_batch_;
  Function f_;
};

double identity(int, int, int64_t, int64_t, double x, double) {
  return x;
}

// Position-dependent and channel-mixing: a misaligned segment or trim changes the result.
double positional(int s, int, int64_t k, int64_t segment, double x, double other) {
  if (s == 0) return x * (1.0 + 0.5 * static_cast<double>(k) / static_cast<double>(segment));
  return 0.5 * other - 0.25 * x + 0.1;
}

AudioBuffer sines(int rate, int channels, int64_t frames) {
  AudioBuffer a(rate, channels, frames);
  for (int c = 0; c < channels; ++c)
    for (int64_t t = 0; t < frames; ++t) {
      const double time = static_cast<double>(t) / rate;
      a.channel(c)[t] = static_cast<float>(0.5 * std::sin(2 * M_PI * 13.0 * time + c) +
                                           0.25 * std::sin(2 * M_PI * 170.0 * time));
    }
  return a;
}

// float64 transcription of demucs/apply.py apply_model (split=True, shifts) for one model call
// per segment; line[c] holds the underlying tensor that TensorChunk.padded reads.
using Planes = std::vector<std::vector<double>>;  // [channel][time]

std::vector<Planes> reference_split(const Planes& line, int64_t view_offset, int64_t length, int64_t segment,
                                    double overlap, int stems, FunctionModel::Function f) {
  const int channels = static_cast<int>(line.size());
  const int64_t total = static_cast<int64_t>(line[0].size());
  std::vector<Planes> out(stems, Planes(channels, std::vector<double>(length, 0.0)));
  std::vector<double> sum_weight(length, 0.0), weight(segment);
  for (int64_t i = 0; i < segment; ++i) weight[i] = i < segment / 2 ? i + 1 : segment - i;
  const double max_weight = *std::max_element(weight.begin(), weight.end());
  for (auto& w : weight) w /= max_weight;
  const auto stride = static_cast<int64_t>((1 - overlap) * static_cast<double>(segment));
  for (int64_t offset = 0; offset < length; offset += stride) {
    const int64_t chunk_length = std::min(length - offset, segment);  // TensorChunk(mix, offset, segment)
    const int64_t delta = segment - chunk_length;                     // .padded(segment)
    const int64_t start = view_offset + offset - delta / 2;
    Planes padded(channels, std::vector<double>(segment, 0.0));
    for (int c = 0; c < channels; ++c)
      for (int64_t k = 0; k < segment; ++k)
        if (start + k >= 0 && start + k < total) padded[c][k] = line[c][start + k];
    for (int s = 0; s < stems; ++s)
      for (int c = 0; c < channels; ++c)
        for (int64_t k = 0; k < chunk_length; ++k) {  // center_trim(model(padded), chunk_length)
          const int64_t j = k + delta / 2;
          const double y = f(s, c, j, segment, static_cast<float>(padded[c][j]),
                             static_cast<float>(padded[channels - 1 - c][j]));
          out[s][c][offset + k] += weight[k] * y;
        }
    for (int64_t k = 0; k < chunk_length; ++k) sum_weight[offset + k] += weight[k];
  }
  for (auto& stem : out)
    for (auto& channel : stem)
      for (int64_t t = 0; t < length; ++t) channel[t] /= sum_weight[t];
  return out;
}

std::vector<Planes> reference_apply(const AudioBuffer& mix, int64_t segment, double overlap, int stems,
                                    FunctionModel::Function f, const std::vector<int64_t>& shifts,
                                    int64_t max_shift) {
  const int64_t n = mix.frames;
  Planes line(mix.channels);
  if (shifts.empty()) {
    for (int c = 0; c < mix.channels; ++c) line[c].assign(mix.channel(c), mix.channel(c) + n);
    return reference_split(line, 0, n, segment, overlap, stems, f);
  }
  for (int c = 0; c < mix.channels; ++c) {  // padded_mix = mix.padded(n + 2 max_shift)
    line[c].assign(n + 2 * max_shift, 0.0);
    std::copy(mix.channel(c), mix.channel(c) + n, line[c].begin() + max_shift);
  }
  std::vector<Planes> out(stems, Planes(mix.channels, std::vector<double>(n, 0.0)));
  for (int64_t offset : shifts) {
    const auto shifted = reference_split(line, offset, n + max_shift - offset, segment, overlap, stems, f);
    for (int s = 0; s < stems; ++s)
      for (int c = 0; c < mix.channels; ++c)
        for (int64_t t = 0; t < n; ++t)
          out[s][c][t] += shifted[s][c][t + max_shift - offset] / static_cast<double>(shifts.size());
  }
  return out;
}

struct Case {
  int64_t frames;
  double overlap;
  int batch, shifts;
};

const int kRate = 2000;  // max shift 0.5 s = 1000 samples
const int64_t kSegment = 1000;
const std::vector<Case> kCases = {
    {300, 0.25, 1, 0}, {1000, 0.25, 1, 0}, {1001, 0.25, 2, 0}, {25000, 0.25, 3, 0}, {25000, 0.5, 4, 0},
    {7777, 0.0, 1, 0}, {300, 0.25, 1, 2},  {1000, 0.25, 2, 1}, {25000, 0.25, 3, 3}, {5, 0.25, 1, 2}};

TEST(AudioSegmenter, IdentityModelReconstructsInput) {
  for (const auto& c : kCases) {
    FunctionModel model(kSegment, 2, 2, 4, identity);
    const AudioBuffer mix = sines(kRate, 2, c.frames);
    audio::SegmentOptions options;
    options.overlap = c.overlap;
    options.batch = c.batch;
    options.shifts = c.shifts;
    options.seed = test_seed();
    audio::SegmentStats stats;
    int64_t last_done = 0, last_total = 0, calls = 0;
    const auto stems =
        audio::separate_segments(model, mix, options, &stats, [&](int64_t done, int64_t total) {
          // First done = 0 (before any model call, so a progress line shows at once), then rising.
          if (calls++ == 0) {
            EXPECT_EQ(done, 0);
          } else {
            EXPECT_GT(done, last_done);
          }
          last_done = done, last_total = total;
        });
    ASSERT_EQ(stems.size(), 2u);
    std::vector<double> ref(mix.samples.begin(), mix.samples.end());
    double worst = 0;
    for (const auto& stem : stems) {
      ASSERT_EQ(stem.frames, mix.frames);
      ASSERT_EQ(stem.sample_rate, kRate);
      worst = std::max(worst, rel_l2(stem.samples, ref));
    }
    EXPECT_LE(worst, 1e-6) << c.frames << " frames, overlap " << c.overlap << ", shifts " << c.shifts;
    EXPECT_EQ(last_done, last_total);
    EXPECT_EQ(stats.segments, last_total);
    for (int b : model.batches) EXPECT_LE(b, c.batch);
    std::printf("identity %6lld frames overlap %.2f batch %d shifts %d: %lld segments, rel L2 %.2e\n",
                static_cast<long long>(c.frames), c.overlap, c.batch, c.shifts,
                static_cast<long long>(stats.segments), worst);
  }
}

TEST(AudioSegmenter, PositionalModelMatchesDemucsApplyModel) {
  for (const auto& c : kCases) {
    FunctionModel model(kSegment, 2, 2, 4, positional);
    const AudioBuffer mix = sines(kRate, 2, c.frames);
    audio::SegmentOptions options;
    options.overlap = c.overlap;
    options.batch = c.batch;
    options.shifts = c.shifts;
    options.seed = test_seed();
    const auto stems = audio::separate_segments(model, mix, options);
    const auto ref = reference_apply(mix, kSegment, c.overlap, 2, positional,
                                     audio::shift_offsets(c.shifts, kRate / 2, options.seed), kRate / 2);
    for (int s = 0; s < 2; ++s) {
      std::vector<double> flat;
      for (const auto& channel : ref[s]) flat.insert(flat.end(), channel.begin(), channel.end());
      const double e = rel_l2(stems[s].samples, flat);
      EXPECT_LE(e, 1e-5) << "stem " << s << ", " << c.frames << " frames, overlap " << c.overlap
                         << ", shifts " << c.shifts;
      std::printf("positional stem %d %6lld frames overlap %.2f shifts %d: rel L2 %.2e\n", s,
                  static_cast<long long>(c.frames), c.overlap, c.shifts, e);
    }
  }
}

// Streaming hands over contiguous blocks of bounded size whose concatenation is the in-memory result.
TEST(AudioSegmenter, StreamingMatchesInMemory) {
  for (const auto& c : kCases) {
    FunctionModel model(kSegment, 2, 2, 4, positional);
    const AudioBuffer mix = sines(kRate, 2, c.frames);
    audio::SegmentOptions options;
    options.overlap = c.overlap;
    options.batch = c.batch;
    options.shifts = c.shifts;
    options.seed = test_seed();
    const auto whole = audio::separate_segments(model, mix, options);
    std::vector<AudioBuffer> streamed(2, AudioBuffer(kRate, 2, c.frames));
    for (auto& stem : streamed) std::fill(stem.samples.begin(), stem.samples.end(), NAN);  // unwritten fails
    int64_t next = 0, largest = 0, blocks = 0;
    audio::stream_segments(model, mix, options, [&](int64_t start, const std::vector<AudioBuffer>& block) {
      ASSERT_EQ(block.size(), 2u);
      EXPECT_EQ(start, next);
      for (int s = 0; s < 2; ++s) {
        ASSERT_EQ(block[s].frames, block[0].frames);
        ASSERT_EQ(block[s].channels, 2);
        ASSERT_LE(start + block[s].frames, c.frames);
        for (int ch = 0; ch < 2; ++ch)
          std::copy(block[s].channel(ch), block[s].channel(ch) + block[s].frames,
                    streamed[s].channel(ch) + start);
      }
      next += block[0].frames;
      largest = std::max(largest, block[0].frames);
      ++blocks;
    });
    EXPECT_EQ(next, c.frames);
    const auto stride = static_cast<int64_t>((1 - c.overlap) * kSegment);
    if (c.shifts == 0) {
      EXPECT_LE(largest, kSegment + c.batch * stride) << "the window must stay bounded";
    }
    double worst = 0;
    for (int s = 0; s < 2; ++s) {
      const std::vector<double> ref(whole[s].samples.begin(), whole[s].samples.end());
      worst = std::max(worst, rel_l2(streamed[s].samples, ref));
    }
    EXPECT_LE(worst, 1e-6) << c.frames << " frames, shifts " << c.shifts;
    std::printf(
        "streaming %6lld frames overlap %.2f batch %d shifts %d: %lld blocks, largest %lld, rel L2 %.2e\n",
        static_cast<long long>(c.frames), c.overlap, c.batch, c.shifts, static_cast<long long>(blocks),
        static_cast<long long>(largest), worst);
  }
}

TEST(AudioSegmenter, TransitionWeightIsDemucsTriangle) {
  const auto w = audio::transition_weight(6);  // arange(1, 4) ++ arange(3, 0, -1), / 3
  const std::vector<float> expected = {1.f / 3, 2.f / 3, 1.f, 1.f, 2.f / 3, 1.f / 3};
  ASSERT_EQ(w.size(), expected.size());
  for (size_t i = 0; i < w.size(); ++i) EXPECT_FLOAT_EQ(w[i], expected[i]);
  const auto odd = audio::transition_weight(5);  // arange(1, 3) ++ arange(3, 0, -1), / 3
  const std::vector<float> expected_odd = {1.f / 3, 2.f / 3, 1.f, 2.f / 3, 1.f / 3};
  for (size_t i = 0; i < odd.size(); ++i) EXPECT_FLOAT_EQ(odd[i], expected_odd[i]);
}

TEST(AudioSegmenter, ShiftsAreSeededAndBounded) {
  const auto a = audio::shift_offsets(50, 22050, 7), b = audio::shift_offsets(50, 22050, 7),
             c = audio::shift_offsets(50, 22050, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (int64_t o : a) {
    EXPECT_GE(o, 0);
    EXPECT_LE(o, 22050);
  }
}

TEST(AudioSegmenter, RejectsBadOptions) {
  FunctionModel model(kSegment, 2, 1, 1, identity);
  const AudioBuffer mix = sines(kRate, 2, 100), mono = sines(kRate, 1, 100);
  audio::SegmentOptions options;
  EXPECT_THROW(audio::separate_segments(model, mono, options), std::invalid_argument);
  options.overlap = 1.0;
  EXPECT_THROW(audio::separate_segments(model, mix, options), std::invalid_argument);
  options.overlap = 0.25;
  options.shifts = -1;
  EXPECT_THROW(audio::separate_segments(model, mix, options), std::invalid_argument);
  options.shifts = 0;
  options.batch = 0;
  EXPECT_THROW(audio::separate_segments(model, mix, options), std::invalid_argument);
}

}  // namespace
}  // namespace onda::test
