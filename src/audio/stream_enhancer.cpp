#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "onda/audio_resample.h"
#include "onda/audio_stream.h"

namespace onda::audio {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The frame tensor named in the description, else the only one; `what` is "input" or "output".
std::string pick(const std::vector<std::string>& names, const std::string& wanted, const char* what,
                 const std::string& model) {
  if (!wanted.empty()) {
    if (std::find(names.begin(), names.end(), wanted) == names.end())
      throw DescriptionError(fmt::format(
          "streaming model '{}': the description's {} '{}' is no frame {} of it", model, what, wanted, what));
    return wanted;
  }
  if (names.size() != 1) {
    std::string list;
    for (const auto& name : names) list += fmt::format("{}{}", list.empty() ? "" : ", ", name);
    throw DescriptionError(fmt::format(
        "streaming model '{}' has {} frame {}s ({}): name the audio one in the description's \"{}\"", model,
        names.size(), what, list, what));
  }
  return names.front();
}

}  // namespace

StreamEnhancer::StreamEnhancer(const StreamEnhanceOptions& options) : options_(options) {
  SeparateOptions separate;
  separate.model = options.model;
  separate.description = options.description;
  description_ = load_separate_description(separate);
  const std::string model = options.model.string();
  if (description_.kind != ProcessingKind::waveform)
    throw DescriptionError(
        fmt::format("--stream runs waveform models frame by frame; '{}' is a spectrogram model", model));
  if (description_.normalization != Normalization::none)
    throw DescriptionError(fmt::format(
        "--stream: '{}' asks for normalize, which needs the whole file; a streaming model's is \"none\"",
        model));
  if (description_.stems.size() != 1)
    throw DescriptionError(fmt::format("--stream needs a model with one output stem; '{}' has {}", model,
                                       description_.stems.size()));
  std::shared_ptr<Session> session = Session::open(options.model, options.session);
  StreamOptions stream_options;
  stream_options.state = description_.state;
  stream_ = std::make_unique<Stream>(session, stream_options);
  input_name_ = pick(stream_->frame_inputs(), description_.input, "input", model);
  output_name_ = pick(stream_->frame_outputs(), description_.output, "output", model);

  for (const auto& spec : session->inputs())
    if (spec.name == input_name_) input_shape_ = spec.shape;
  const bool static_shape = !input_shape_.empty() && std::all_of(input_shape_.begin(), input_shape_.end(),
                                                                 [](int64_t d) { return d > 0; });
  if (!static_shape)
    throw DescriptionError(fmt::format("streaming model '{}': frame input '{}' needs a static shape, has {}",
                                       model, input_name_, shape_to_string(input_shape_)));
  frame_ = input_shape_.back();
  if (description_.segment != 0 && description_.segment != frame_)
    throw DescriptionError(
        fmt::format("streaming model '{}': \"segment\" {} is not the frame input's length {}", model,
                    description_.segment, frame_));
  if (shape_numel(input_shape_) != description_.channels * frame_)
    throw DescriptionError(
        fmt::format("streaming model '{}': frame input '{}' {} is not {} channel(s) x {} samples", model,
                    input_name_, shape_to_string(input_shape_), description_.channels, frame_));
}

StreamEnhancer::~StreamEnhancer() = default;

AudioBuffer StreamEnhancer::enhance(const AudioBuffer& audio, SeparateTimings* timings,
                                    const SegmentProgress& progress) {
  const int channels = description_.channels;
  if (audio.channels != channels || audio.sample_rate != description_.sample_rate)
    throw AudioError(
        fmt::format("streaming enhance: audio of {} channel(s) at {} Hz, the model takes {} at {} Hz",
                    audio.channels, audio.sample_rate, channels, description_.sample_rate));
  stream_->reset();
  const int64_t frames = (audio.frames + frame_ - 1) / frame_;
  AudioBuffer out(audio.sample_rate, channels, audio.frames);
  std::vector<float> in_frame(static_cast<size_t>(channels * frame_));
  if (progress) progress(0, frames);
  const auto start = Clock::now();
  for (int64_t f = 0; f < frames; ++f) {
    const int64_t begin = f * frame_, count = std::min(frame_, audio.frames - begin);
    for (int c = 0; c < channels; ++c) {  // planar [channel][sample]; zeros past the end
      float* dst = in_frame.data() + static_cast<size_t>(c) * frame_;
      std::copy_n(audio.channel(c) + begin, count, dst);
      std::fill(dst + count, dst + frame_, 0.0f);
    }
    const auto outputs =
        stream_->step({{input_name_, HostTensor::view(DType::f32, input_shape_, in_frame.data(),
                                                      in_frame.size() * sizeof(float))}});
    const HostTensor& y = outputs.at(output_name_);
    if (y.dtype() != DType::f32 || y.numel() != channels * frame_)
      throw DescriptionError(
          fmt::format("streaming model '{}': output '{}' is {} {}, not {} channel(s) x {} floats",
                      options_.model.string(), output_name_, dtype_name(y.dtype()),
                      shape_to_string(y.shape()), channels, frame_));
    const auto values = y.values<float>();
    for (int c = 0; c < channels; ++c)
      std::copy_n(values.data() + static_cast<size_t>(c) * frame_, count, out.channel(c) + begin);
    if (progress) progress(f + 1, frames);
  }
  if (timings) {
    timings->model += seconds_since(start);
    timings->segments += frames;
    timings->model_calls += frames;
    timings->peak_gpu_bytes = std::max(timings->peak_gpu_bytes, stream_->last_run().peak_gpu_bytes);
  }
  return out;
}

void StreamEnhancer::write_files(const std::filesystem::path& input,
                                 const std::vector<std::filesystem::path>& paths, SeparateTimings* timings,
                                 const SegmentProgress& progress) {
  if (paths.size() != 1)
    throw std::invalid_argument(
        fmt::format("streaming enhance writes one file per input, {} given", paths.size()));
  SeparateTimings local;
  SeparateTimings& t = timings ? *timings : local;
  const auto start = Clock::now();
  auto step = Clock::now();
  AudioBuffer audio = read_audio(input);
  t.decode = seconds_since(step);
  t.audio_seconds = audio.seconds();
  step = Clock::now();
  audio = resample(convert_channels(std::move(audio), description_.channels), description_.sample_rate);
  t.resample = seconds_since(step);
  const AudioBuffer out = enhance(audio, &t, progress);
  step = Clock::now();
  write_audio(paths[0], out, options_.format);
  t.encode = seconds_since(step);
  t.total = seconds_since(start);
}

}  // namespace onda::audio
