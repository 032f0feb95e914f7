#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <future>
#include <sstream>

#include "audio/model_runner.h"
#include "audio/segmenter.h"
#include "onda/audio_resample.h"
#include "onda/audio_separate.h"

namespace onda::audio {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// x -> (x - offset) * scale before the model; outputs -> y / scale + offset after it.
struct Affine {
  double offset = 0, scale = 1;
};

Affine normalisation(const AudioBuffer& mix, Normalization kind) {
  if (kind == Normalization::none || mix.frames == 0) return {};
  const int64_t n = mix.frames;
  std::vector<double> mono(static_cast<size_t>(n), 0.0);
  for (int c = 0; c < mix.channels; ++c)
    for (int64_t t = 0; t < n; ++t) mono[t] += mix.channel(c)[t] / static_cast<double>(mix.channels);
  if (kind ==
      Normalization::mean_std) {  // demucs separate.py: ref = wav.mean(0); (wav - ref.mean()) / ref.std()
    double mean = 0;
    for (double v : mono) mean += v;
    mean /= static_cast<double>(n);
    double var = 0;
    for (double v : mono) var += (v - mean) * (v - mean);
    const double std = n > 1 ? std::sqrt(var / static_cast<double>(n - 1)) : 0.0;  // torch.std: unbiased
    return {mean, std > 1e-8 ? 1.0 / std : 1.0};  // digital silence: no scaling instead of 0/0
  }
  // MP-SENet inference: norm_factor = sqrt(len / sum(wav^2)) of the mono signal.
  double energy = 0;
  for (double v : mono) energy += v * v;
  return {0.0, energy > 0 ? std::sqrt(static_cast<double>(n) / energy) : 1.0};
}

void apply(AudioBuffer& audio, const Affine& a, bool inverse) {
  if (a.offset == 0 && a.scale == 1) return;
  for (float& x : audio.samples)
    x = static_cast<float>(inverse ? x / a.scale + a.offset : (x - a.offset) * a.scale);
}

}  // namespace

ModelDescription load_separate_description(const SeparateOptions& options) {
  std::error_code ec;
  if (!fs::is_regular_file(options.model, ec))
    throw std::invalid_argument(fmt::format("no model file '{}'", options.model.string()));
  if (!options.description) return load_model_description(options.model);
  std::ifstream file(*options.description);
  if (!file)
    throw DescriptionError(fmt::format("cannot read model description '{}'", options.description->string()));
  std::stringstream text;
  text << file.rdbuf();
  return parse_model_description(text.str(), fmt::format("'{}'", options.description->string()));
}

void check_writable_folder(const fs::path& folder) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec || !fs::is_directory(folder))
    throw AudioError(fmt::format("output folder '{}' cannot be created: {}", folder.string(),
                                 ec ? ec.message() : "not a folder"));
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw AudioError(fmt::format("output folder '{}' is not writable", folder.string()));
}

Separator::Separator(const SeparateOptions& options)
    : options_(options), description_(load_separate_description(options)) {
  if (!options.two_stems.empty()) {
    bool found = false;
    for (const auto& stem : description_.stems) found = found || stem == options.two_stems;
    if (!found) {
      std::string names;
      for (const auto& stem : description_.stems)
        names += fmt::format("{}{}", names.empty() ? "" : ", ", stem);
      throw std::invalid_argument(
          fmt::format("--two-stems {}: the model's stems are {}", options.two_stems, names));
    }
  }
  if (options.segment_seconds < 0)
    throw std::invalid_argument(fmt::format("segment {} s must be > 0", options.segment_seconds));
  options_.segments.overlap = options.overlap.value_or(description_.overlap);
  RunnerOptions runner;
  runner.session = options.session;
  runner.batch = options.segments.batch;
  runner.segment = static_cast<int64_t>(std::llround(options.segment_seconds * description_.sample_rate));
  model_ = std::make_unique<SessionSegmentModel>(options.model, description_, runner);
}

Separator::~Separator() = default;

std::string Separator::adapter_name() const {
  return model_->adapter_name();
}

int Separator::max_batch() const {
  return model_->max_batch();
}

bool Separator::fixed_batch() const {
  return model_->fixed_batch();
}

AudioBuffer Separator::prepare(AudioBuffer input, SeparateTimings& t, double& offset, double& scale) const {
  t.audio_seconds = input.seconds();
  auto start = Clock::now();
  AudioBuffer mix =
      resample(convert_channels(std::move(input), description_.channels), description_.sample_rate);
  t.resample = seconds_since(start);
  start = Clock::now();
  const Affine affine = normalisation(mix, description_.normalization);
  apply(mix, affine, false);
  offset = affine.offset;
  scale = affine.scale;
  t.normalise = seconds_since(start);
  return mix;
}

std::vector<Stem> Separator::finish(std::vector<AudioBuffer> outputs, double offset, double scale) const {
  const Affine affine{offset, scale};
  std::vector<std::future<void>> restores;  // one task per stem: memory-bound, independent
  for (auto& out : outputs)
    restores.push_back(std::async(std::launch::async, [&out, &affine] { apply(out, affine, true); }));
  for (auto& restore : restores) restore.get();
  std::vector<Stem> stems;
  if (options_.two_stems.empty()) {
    for (size_t s = 0; s < outputs.size(); ++s)
      stems.push_back({description_.stems[s], std::move(outputs[s])});
    return stems;
  }
  // demucs --two-stems: the stem and the sum of every other stem
  const AudioBuffer& shape = outputs.front();
  Stem chosen{options_.two_stems, {}}, rest{fmt::format("no_{}", options_.two_stems),
                                            AudioBuffer(shape.sample_rate, shape.channels, shape.frames)};
  for (size_t s = 0; s < outputs.size(); ++s) {
    if (description_.stems[s] == options_.two_stems) {
      chosen.audio = std::move(outputs[s]);
    } else {
      for (size_t i = 0; i < rest.audio.samples.size(); ++i) rest.audio.samples[i] += outputs[s].samples[i];
    }
  }
  stems.push_back(std::move(chosen));
  stems.push_back(std::move(rest));
  return stems;
}

std::vector<std::string> Separator::output_names() const {
  if (options_.two_stems.empty()) return description_.stems;
  return {options_.two_stems, fmt::format("no_{}", options_.two_stems)};
}

std::vector<Stem> Separator::separate(AudioBuffer input, SeparateTimings* timings,
                                      const SegmentProgress& progress) {
  SeparateTimings t;
  double offset = 0, scale = 1;
  const AudioBuffer mix = prepare(std::move(input), t, offset, scale);
  SegmentStats stats;
  auto start = Clock::now();
  std::vector<AudioBuffer> outputs = separate_segments(*model_, mix, options_.segments, &stats, progress);
  t.model = stats.model_seconds;
  t.overlap_add = seconds_since(start) - stats.model_seconds;  // all segmenter work outside model calls
  t.segments = stats.segments;
  t.model_calls = stats.model_calls;
  t.peak_gpu_bytes = model_->peak_gpu_bytes();
  start = Clock::now();
  std::vector<Stem> stems = finish(std::move(outputs), offset, scale);
  t.normalise += seconds_since(start);
  if (timings) *timings = t;
  return stems;
}

void Separator::write_files(const fs::path& input, const std::vector<fs::path>& paths,
                            SeparateTimings* timings, const SegmentProgress& progress) {
  if (paths.size() != output_names().size())
    throw std::invalid_argument(
        fmt::format("{} output paths for {} outputs", paths.size(), output_names().size()));
  const auto total_start = Clock::now();
  SeparateTimings t;
  auto start = Clock::now();
  AudioBuffer decoded = read_audio(input);
  t.decode = seconds_since(start);
  double offset = 0, scale = 1;
  const AudioBuffer mix = prepare(std::move(decoded), t, offset, scale);

  // One writer per output; each streamed block is un-normalised, combined (--two-stems) and
  // appended on the overlap-add worker, one thread per file, while the model runs the next batch.
  std::vector<std::unique_ptr<AudioWriter>> writers;
  for (const auto& path : paths)
    writers.push_back(std::make_unique<AudioWriter>(path, mix.sample_rate, mix.channels, options_.format));
  const StemSink sink = [&](int64_t, const std::vector<AudioBuffer>& block) {
    const auto worker_start = Clock::now();
    std::vector<Stem> stems = finish(block, offset, scale);
    std::vector<std::future<void>> encoders;
    for (size_t i = 0; i < stems.size(); ++i)
      encoders.push_back(std::async(std::launch::async, [&, i] { writers[i]->write(stems[i].audio); }));
    for (auto& encoder : encoders) encoder.wait();
    for (auto& encoder : encoders) encoder.get();  // the first error, after every thread is done
    t.worker += seconds_since(worker_start);
  };
  SegmentStats stats;
  start = Clock::now();
  stream_segments(*model_, mix, options_.segments, sink, &stats, progress);
  t.model = stats.model_seconds;
  t.overlap_add = seconds_since(start) - stats.model_seconds;
  t.segments = stats.segments;
  t.model_calls = stats.model_calls;
  t.peak_gpu_bytes = model_->peak_gpu_bytes();

  start = Clock::now();
  for (auto& writer : writers) writer->commit();  // only now do the files get their names
  t.encode = seconds_since(start);
  t.streamed = true;
  t.total = seconds_since(total_start);
  if (timings) *timings = t;
}

std::vector<fs::path> Separator::separate_file(const fs::path& input, const fs::path& output_dir,
                                               SeparateTimings* timings, const SegmentProgress& progress) {
  const fs::path track_dir = output_dir / input.stem();
  check_writable_folder(track_dir);
  std::vector<fs::path> paths;
  for (const auto& name : output_names())
    paths.push_back(track_dir / fmt::format("{}.{}", name, container_extension(options_.format.container)));
  write_files(input, paths, timings, progress);
  return paths;
}

void Separator::enhance_file(const fs::path& input, const fs::path& output, SeparateTimings* timings,
                             const SegmentProgress& progress) {
  if (description_.stems.size() != 1)
    throw std::invalid_argument(
        fmt::format("enhance needs a model with one output stem; this one has {} (use separate)",
                    description_.stems.size()));
  check_writable_folder(output.has_parent_path() ? output.parent_path() : fs::path("."));
  write_files(input, {output}, timings, progress);
}

}  // namespace onda::audio
