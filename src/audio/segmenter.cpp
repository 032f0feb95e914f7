#include "audio/segmenter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <optional>
#include <random>

namespace onda::audio {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The mix placed at `pad` in a line of `total` samples, zeros elsewhere: demucs' padded_mix, read
// through TensorChunk.padded, which takes real neighbouring samples where the line has them.
struct PaddedLine {
  const AudioBuffer& mix;
  int64_t pad = 0;
  int64_t total = 0;

  // Copies line samples [start, start + n) of channel c into dst (zeros outside the mix).
  void read(int c, int64_t start, int64_t n, float* dst) const {
    // Mix samples exist at line positions [pad, min(pad + frames, total)); zeros elsewhere.
    const int64_t first = std::clamp(pad - start, int64_t{0}, n);
    const int64_t end = std::clamp(std::min(pad + mix.frames, total) - start, first, n);
    std::fill(dst, dst + first, 0.0f);
    if (end > first)
      std::copy(mix.channel(c) + (start + first - pad), mix.channel(c) + (start + end - pad), dst + first);
    std::fill(dst + end, dst + n, 0.0f);
  }
};

struct PassResult {
  std::vector<AudioBuffer> sum;  // per stem, [channels][length]: weighted sums
  std::vector<float> weight;     // [length]: summed weights
};

int64_t segment_count(int64_t length, int64_t stride) {
  return (length + stride - 1) / stride;
}

// One apply_model(split=True) over the view [view_offset, view_offset + length) of the line.
class SplitPass {
 public:
  SplitPass(SegmentModel& model, const PaddedLine& line, const std::vector<float>& weight, int batch,
            int64_t stride, SegmentStats& stats, const std::function<void()>& after_call)
      : model_(model),
        line_(line),
        weight_(weight),
        batch_(batch),
        stride_(stride),
        stats_(stats),
        after_call_(after_call) {}

  // Without a sink: returns the weighted sums over the whole view. With a sink: keeps a window of
  // segment + batch * stride samples and hands every finished stretch (positions before the next
  // batch's first segment), divided by its summed weights, to the sink; returns nothing.
  PassResult run(int64_t view_offset, int64_t length, const StemSink* sink = nullptr) {
    const int64_t segment = model_.segment_length();
    const int channels = model_.channels(), stems = model_.stems();
    const int64_t capacity = sink ? std::min(length, segment + batch_ * stride_) : length;
    int64_t base = 0;  // view position of the accumulators' first sample
    PassResult result;
    result.sum.assign(stems, AudioBuffer(line_.mix.sample_rate, channels, capacity));
    result.weight.assign(static_cast<size_t>(capacity), 0.0f);
    std::vector<int64_t> offsets;
    for (int64_t p = 0; p < length; p += stride_) offsets.push_back(p);
    // The overlap-add of one batch runs on a worker thread while the model runs the next batch
    // (the worker holds that batch's output); the main thread only waits for it before starting another.
    std::vector<float> in;
    std::future<void> pending;
    auto wait_pending = [&] {
      if (!pending.valid()) return;
      const auto start = Clock::now();
      pending.get();
      stats_.overlap_add_seconds += seconds_since(start);
    };
    // Hands the output of the batch at `first` (n segments) to the overlap-add worker.
    auto finish_batch = [&](size_t first, int n) {
      auto start = Clock::now();
      const SegmentOutput out = model_.collect();
      stats_.model_seconds += seconds_since(start);
      ++stats_.model_calls;
      const size_t expected = static_cast<size_t>(n) * stems * channels * segment;
      if (out.size != expected || !out.data)
        throw std::runtime_error(fmt::format(
            "segment model returned {} values for a batch of {} (expected {})", out.size, n, expected));

      wait_pending();
      pending = std::async(std::launch::async, [&, out, first, n, length] {
        add_batch(out, offsets, first, n, length, base, result);
        if (sink)
          flush(first + n < offsets.size() ? offsets[first + n] : length, capacity, base, result, *sink);
      });
      stats_.segments += n;
      after_call_();
    };
    // The batch the model is running while the next one is cut and submitted.
    std::optional<std::pair<size_t, int>> in_flight;
    try {
      for (size_t first = 0; first < offsets.size(); first += batch_) {
        const int n = static_cast<int>(std::min<size_t>(batch_, offsets.size() - first));
        auto start = Clock::now();
        cut_batch(view_offset, length, offsets, first, n, in);
        stats_.overlap_add_seconds += seconds_since(start);

        start = Clock::now();
        model_.submit(in, n);
        stats_.model_seconds += seconds_since(start);
        if (in_flight) finish_batch(in_flight->first, in_flight->second);
        in_flight = std::make_pair(first, n);
      }
      if (in_flight) finish_batch(in_flight->first, in_flight->second);
      wait_pending();
    } catch (...) {
      if (pending.valid()) pending.wait();  // never leave the worker writing into a dying result
      throw;
    }
    if (sink) return {};
    return result;
  }

 private:
  // The n segments from offsets[first] of the view at `view_offset` (`length` long) into `in`, [n,
  // channels, segment]: a last segment shorter than `segment` is centred, as demucs pads it.
  void cut_batch(int64_t view_offset, int64_t length, const std::vector<int64_t>& offsets, size_t first,
                 int n, std::vector<float>& in) const {
    const int64_t segment = model_.segment_length();
    const int channels = model_.channels();
    in.assign(static_cast<size_t>(n) * channels * segment, 0.0f);
    for (int b = 0; b < n; ++b) {
      const int64_t p = offsets[first + b];
      const int64_t chunk = std::min(length - p, segment);
      const int64_t delta = segment - chunk;
      for (int c = 0; c < channels; ++c)
        line_.read(c, view_offset + p - delta / 2, segment,
                   in.data() + (static_cast<size_t>(b) * channels + c) * segment);
    }
  }

  // Adds the model's output for the n segments from offsets[first], weighted, into the accumulators
  // (whose first sample is view position `base`), trimmed to the view's `length`.
  void add_batch(const SegmentOutput& out, const std::vector<int64_t>& offsets, size_t first, int n,
                 int64_t length, int64_t base, PassResult& result) const {
    const int64_t segment = model_.segment_length();
    const int channels = model_.channels(), stems = model_.stems();
    for (int b = 0; b < n; ++b) {
      const int64_t p = offsets[first + b] - base;
      const int64_t chunk = std::min(length - offsets[first + b], segment);
      const int64_t trim = (segment - chunk) / 2;  // demucs center_trim
      for (int s = 0; s < stems; ++s) {
        for (int c = 0; c < channels; ++c) {
          const float* src =
              out.data + ((static_cast<size_t>(b) * stems + s) * channels + c) * segment + trim;
          float* dst = result.sum[s].channel(c) + p;
          for (int64_t k = 0; k < chunk; ++k) dst[k] += weight_[k] * src[k];
        }
      }
      for (int64_t k = 0; k < chunk; ++k) result.weight[p + k] += weight_[k];
    }
  }

  // Hands view positions [base, to) of the accumulators (`capacity` long), divided by their summed
  // weights, to the sink and slides the window by that much.
  void flush(int64_t to, int64_t capacity, int64_t& base, PassResult& result, const StemSink& sink) const {
    const int64_t m = to - base;
    if (m <= 0) return;
    const int channels = model_.channels(), stems = model_.stems();
    std::vector<AudioBuffer> block(stems, AudioBuffer(line_.mix.sample_rate, channels, m));
    for (int s = 0; s < stems; ++s) {
      for (int c = 0; c < channels; ++c) {
        float* plane = result.sum[s].channel(c);
        float* dst = block[s].channel(c);
        for (int64_t k = 0; k < m; ++k) dst[k] = plane[k] / result.weight[k];
        std::copy(plane + m, plane + capacity, plane);
        std::fill(plane + capacity - m, plane + capacity, 0.0f);
      }
    }
    std::copy(result.weight.begin() + m, result.weight.end(), result.weight.begin());
    std::fill(result.weight.end() - m, result.weight.end(), 0.0f);
    sink(base, block);
    base = to;
  }

  SegmentModel& model_;
  const PaddedLine& line_;
  const std::vector<float>& weight_;
  int batch_;
  int64_t stride_;
  SegmentStats& stats_;
  const std::function<void()>& after_call_;
};

}  // namespace

std::vector<float> transition_weight(int64_t segment) {
  // torch.cat([arange(1, segment // 2 + 1), arange(segment - segment // 2, 0, -1)]) / max
  std::vector<float> w(static_cast<size_t>(segment));
  const int64_t half = segment / 2;
  for (int64_t i = 0; i < half; ++i) w[i] = static_cast<float>(i + 1);
  for (int64_t i = half; i < segment; ++i) w[i] = static_cast<float>(segment - i);
  const float max = *std::max_element(w.begin(), w.end());
  for (auto& x : w) x /= max;
  return w;
}

std::vector<int64_t> shift_offsets(int shifts, int64_t max_shift, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> dist(0, max_shift);  // random.randint(0, max_shift): inclusive
  std::vector<int64_t> offsets(static_cast<size_t>(std::max(shifts, 0)));
  for (auto& o : offsets) o = dist(rng);
  return offsets;
}

namespace {

// separate_segments (sink == nullptr) and stream_segments (sink given) in one.
std::vector<AudioBuffer> separate_or_stream(SegmentModel& model, const AudioBuffer& mix,
                                            const SegmentOptions& options, SegmentStats* stats_out,
                                            const SegmentProgress& progress, const StemSink* sink) {
  const int64_t segment = model.segment_length();
  const int channels = model.channels(), stems = model.stems();
  if (segment <= 0) throw std::invalid_argument(fmt::format("segment length {} must be > 0", segment));
  if (mix.channels != channels)
    throw std::invalid_argument(
        fmt::format("the mix has {} channels, the model takes {}", mix.channels, channels));
  if (!(options.overlap >= 0 && options.overlap < 1))
    throw std::invalid_argument(fmt::format("overlap {} must be in [0, 1)", options.overlap));
  if (options.shifts < 0) throw std::invalid_argument(fmt::format("shifts {} must be >= 0", options.shifts));
  if (options.batch < 1) throw std::invalid_argument(fmt::format("batch {} must be >= 1", options.batch));
  const auto stride = static_cast<int64_t>((1.0 - options.overlap) * static_cast<double>(segment));
  if (stride < 1)
    throw std::invalid_argument(
        fmt::format("overlap {} leaves no stride for segment {}", options.overlap, segment));
  const int batch =
      model.fixed_batch() ? model.max_batch() : std::max(1, std::min(options.batch, model.max_batch()));

  std::vector<float> weight = transition_weight(segment);
  if (options.transition_power != 1.0)
    for (auto& w : weight) w = std::pow(w, static_cast<float>(options.transition_power));

  SegmentStats stats;
  if (mix.frames == 0) {
    if (stats_out) *stats_out = stats;
    std::vector<AudioBuffer> empty(stems, AudioBuffer(mix.sample_rate, channels, 0));
    if (sink) (*sink)(0, empty);
    return empty;
  }
  const int64_t n = mix.frames;
  const int64_t max_shift = static_cast<int64_t>(options.max_shift_seconds * mix.sample_rate);
  const std::vector<int64_t> shifts = shift_offsets(options.shifts, max_shift, options.seed);

  int64_t total = 0;
  if (shifts.empty()) total = segment_count(n, stride);
  for (int64_t o : shifts) total += segment_count(n + max_shift - o, stride);
  const std::function<void()> after_call = [&] {
    if (progress) progress(stats.segments, total);
  };
  // At once, before the first (possibly long) model call: a progress line shows from the start and
  // a callback that stops the run (it throws) is asked before any work.
  if (progress) progress(0, total);

  // Each stem channel of a pass, divided by the summed weights and scaled: in place when the pass
  // is the result (no shifts), else added to `result` from line position `skip` on. One task per
  // plane: the work is memory-bound and the planes are independent.
  std::vector<AudioBuffer> result;
  auto normalise = [&](PassResult& pass, int64_t skip, float scale, bool in_place) {
    const auto start = Clock::now();
    std::vector<float> factor(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) factor[t] = scale / pass.weight[skip + t];
    std::vector<std::future<void>> planes;
    for (int s = 0; s < stems; ++s) {
      for (int c = 0; c < channels; ++c) {
        planes.push_back(std::async(std::launch::async, [&, s, c] {
          float* sum = pass.sum[s].channel(c) + skip;
          if (in_place) {
            for (int64_t t = 0; t < n; ++t) sum[t] *= factor[t];
          } else {
            float* dst = result[s].channel(c);
            for (int64_t t = 0; t < n; ++t) dst[t] += sum[t] * factor[t];
          }
        }));
      }
    }
    for (auto& plane : planes) plane.get();
    stats.overlap_add_seconds += seconds_since(start);
  };

  if (shifts.empty() && sink) {
    const PaddedLine line{mix, 0, n};
    SplitPass pass(model, line, weight, batch, stride, stats, after_call);
    pass.run(0, n, sink);
  } else if (shifts.empty()) {
    const PaddedLine line{mix, 0, n};
    SplitPass pass(model, line, weight, batch, stride, stats, after_call);
    PassResult whole = pass.run(0, n);
    normalise(whole, 0, 1.0f, true);
    result = std::move(whole.sum);
  } else {
    // demucs: padded_mix = mix padded to n + 2 max_shift; shifted = chunk(padded_mix, offset,
    // n + max_shift - offset); out += apply(shifted)[..., max_shift - offset:]; out /= shifts.
    result.assign(stems, AudioBuffer(mix.sample_rate, channels, n));
    const PaddedLine line{mix, max_shift, n + 2 * max_shift};
    SplitPass pass(model, line, weight, batch, stride, stats, after_call);
    for (int64_t offset : shifts) {
      PassResult shifted = pass.run(offset, n + max_shift - offset);
      normalise(shifted, max_shift - offset, 1.0f / static_cast<float>(shifts.size()), false);
    }
    if (sink) (*sink)(0, result);
  }
  if (stats_out) *stats_out = stats;
  return result;
}

}  // namespace

std::vector<AudioBuffer> separate_segments(SegmentModel& model, const AudioBuffer& mix,
                                           const SegmentOptions& options, SegmentStats* stats,
                                           const SegmentProgress& progress) {
  return separate_or_stream(model, mix, options, stats, progress, nullptr);
}

void stream_segments(SegmentModel& model, const AudioBuffer& mix, const SegmentOptions& options,
                     const StemSink& sink, SegmentStats* stats, const SegmentProgress& progress) {
  separate_or_stream(model, mix, options, stats, progress, &sink);
}

}  // namespace onda::audio
