#include "audio/model_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "audio/spectral_graphs.h"

namespace onda::audio {
namespace {

namespace fs = std::filesystem;

constexpr int kDynamicBatchLimit = 64;  // a dynamic batch dim still gets at most this many segments

const TensorSpec& find_spec(const std::vector<TensorSpec>& specs, const std::string& name, const char* what,
                            const fs::path& model) {
  if (name.empty()) {
    if (specs.size() != 1)
      throw DescriptionError(fmt::format("model '{}' has {} {}s: name the one to use in its description",
                                         model.string(), specs.size(), what));
    return specs[0];
  }
  for (const auto& spec : specs)
    if (spec.name == name) return spec;
  std::string names;
  for (const auto& spec : specs) names += fmt::format("{}{}", names.empty() ? "" : ", ", spec.name);
  throw DescriptionError(
      fmt::format("model '{}' has no {} '{}' (it has: {})", model.string(), what, name, names));
}

HostTensor float_tensor(Shape shape, const float* data) {
  const size_t bytes = static_cast<size_t>(shape_numel(shape)) * sizeof(float);
  return HostTensor::copy_of(DType::f32, std::move(shape), data, bytes);
}

// An output's floats, and a handle that keeps them alive (HostTensor bytes are shared).
std::pair<std::shared_ptr<const void>, std::span<const float>> float_values(
    const std::map<std::string, HostTensor>& outputs, const std::string& name) {
  auto it = outputs.find(name);
  if (it == outputs.end()) throw std::runtime_error(fmt::format("the model returned no output '{}'", name));
  if (it->second.dtype() != DType::f32)
    throw std::runtime_error(
        fmt::format("model output '{}' is {}, not float32", name, dtype_name(it->second.dtype())));
  auto owner = std::make_shared<const HostTensor>(it->second);
  return {owner, owner->values<float>()};
}

// Opens a generated model from memory on the model's Device.
std::unique_ptr<Session> open_generated(const std::string& bytes, const SessionOptions& options,
                                        const std::shared_ptr<Device>& device) {
  const std::span<const std::byte> model(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  return Session::open_bytes(model, options, device);
}

}  // namespace

struct SessionSegmentModel::Spectral {
  std::unique_ptr<Session> stft, istft;
  Shape magnitude_shape, phase_shape;  // the model's spectrogram inputs, batch dim set per call
  int64_t bins = 0, frames = 0;
};

SessionSegmentModel::SessionSegmentModel(const fs::path& model, const ModelDescription& description,
                                         const RunnerOptions& options)
    : description_(description) {
  // One Device for the model and its STFT / iSTFT sessions: the spectrograms pass between them on the GPU.
  DeviceOptions device;
  device.adapter = options.session.adapter;
  device.max_storage_binding_bytes = options.session.max_storage_binding_bytes;
  session_ = Session::open(model, options.session, Device::open(device));
  const int channels = description.channels;
  const int stems = static_cast<int>(description.stems.size());

  auto batch_of = [&](const TensorSpec& spec) {
    if (spec.shape.empty()) throw DescriptionError(fmt::format("model input '{}' is a scalar", spec.name));
    if (spec.shape[0] > 0) {
      fixed_batch_ = true;
      max_batch_ = static_cast<int>(spec.shape[0]);
    } else {
      max_batch_ = std::clamp(options.batch, 1, kDynamicBatchLimit);
    }
  };

  if (description.kind == ProcessingKind::waveform) {
    const TensorSpec& in = find_spec(session_->inputs(), description.input, "input", model);
    const TensorSpec& out = find_spec(session_->outputs(), description.output, "output", model);
    input_name_ = in.name;
    output_name_ = out.name;
    if (in.dtype != DType::f32)
      throw DescriptionError(
          fmt::format("model input '{}' is {}, not float32", in.name, dtype_name(in.dtype)));
    const bool mono_layout = in.shape.size() == 2;
    if (!(in.shape.size() == 3 || (mono_layout && channels == 1)))
      throw DescriptionError(
          fmt::format("model input '{}' has shape {}: a waveform model takes [batch, channels, samples]{}",
                      in.name, shape_to_string(in.shape), channels == 1 ? " or [batch, samples]" : ""));
    if (!mono_layout && in.shape[1] > 0 && in.shape[1] != channels)
      throw DescriptionError(fmt::format("model input '{}' has {} channels, its description says {}", in.name,
                                         in.shape[1], channels));
    const int64_t static_length = in.shape.back();
    segment_ = options.segment > 0       ? options.segment
               : description.segment > 0 ? description.segment
                                         : static_length;
    if (segment_ <= 0)
      throw DescriptionError(
          fmt::format("model input '{}' has a dynamic length: give the segment length (description "
                      "\"segment\" or --segment)",
                      in.name));
    if (static_length > 0 && segment_ != static_length)
      throw DescriptionError(
          fmt::format("model input '{}' takes exactly {} samples ({} s at {} Hz) per segment, not {}{}",
                      in.name, static_length, static_cast<double>(static_length) / description.sample_rate,
                      description.sample_rate, segment_,
                      options.segment > 0 ? ": leave --segment out (the model's length is fixed)" : ""));
    batch_of(in);
    input_shape_ = mono_layout ? Shape{max_batch_, segment_} : Shape{max_batch_, channels, segment_};
    int64_t per_item =
        out.shape.size() >= 2 ? 1 : -1;  // an output declared without a shape is checked per run
    for (size_t d = 1; d < out.shape.size(); ++d)
      per_item = out.shape[d] > 0 && per_item > 0 ? per_item * out.shape[d] : -1;
    if (per_item > 0 && per_item != static_cast<int64_t>(stems) * channels * segment_)
      throw DescriptionError(
          fmt::format("model output '{}' has shape {}: expected {} stems x {} channels x {} samples per item",
                      out.name, shape_to_string(out.shape), stems, channels, segment_));
    return;
  }

  // Spectrogram model: compressed magnitude and phase in and out, [batch, bins, frames].
  const auto& p = description.spectrogram;
  spectral_ = std::make_unique<Spectral>();
  segment_ = options.segment > 0 ? options.segment : description.segment;
  if (segment_ % p.hop != 0)
    throw DescriptionError(fmt::format("segment {} is not a multiple of hop {}", segment_, p.hop));
  spectral_->bins = p.n_fft / 2 + 1;
  spectral_->frames = segment_ / p.hop + 1;
  for (const std::string* name : {&p.magnitude_input, &p.phase_input}) {
    const TensorSpec& spec = find_spec(session_->inputs(), *name, "input", model);
    if (spec.shape.size() != 3)
      throw DescriptionError(
          fmt::format("model input '{}' has shape {}: a spectrogram model takes [batch, bins, frames]",
                      spec.name, shape_to_string(spec.shape)));
    if ((spec.shape[1] > 0 && spec.shape[1] != spectral_->bins) ||
        (spec.shape[2] > 0 && spec.shape[2] != spectral_->frames))
      throw DescriptionError(fmt::format(
          "model input '{}' has shape {}, but n_fft {} / hop {} over {} samples gives [batch, {}, {}]",
          spec.name, shape_to_string(spec.shape), p.n_fft, p.hop, segment_, spectral_->bins,
          spectral_->frames));
    batch_of(spec);
  }
  find_spec(session_->outputs(), p.magnitude_output, "output", model);
  find_spec(session_->outputs(), p.phase_output, "output", model);
  spectral_->stft = open_generated(stft_model_bytes(p, segment_), options.session, session_->device());
  spectral_->istft = open_generated(istft_model_bytes(p, segment_), options.session, session_->device());
}

SessionSegmentModel::~SessionSegmentModel() = default;

std::string SessionSegmentModel::adapter_name() const {
  return session_->adapter_name();
}

SegmentOutput SessionSegmentModel::run(const std::vector<float>& in, int batch) {
  if (batch < 1 || batch > max_batch_)
    throw std::invalid_argument(fmt::format("batch {} outside 1..{}", batch, max_batch_));
  return description_.kind == ProcessingKind::waveform ? run_waveform(in, batch) : run_spectrogram(in, batch);
}

SegmentOutput SessionSegmentModel::run_waveform(const std::vector<float>& in, int batch) {
  submit_waveform(in, batch);
  return collect_waveform(batch);
}

void SessionSegmentModel::submit_waveform(const std::vector<float>& in, int batch) {
  const int fed = fixed_batch_ ? max_batch_ : batch;  // a static batch dim: zero segments fill the rest
  const size_t item = static_cast<size_t>(channels()) * segment_;
  std::vector<float> padded;
  const float* data = in.data();
  if (fed != batch) {
    padded.assign(fed * item, 0.0f);
    std::copy(in.begin(), in.begin() + batch * item, padded.begin());
    data = padded.data();
  }
  Shape shape = input_shape_;
  shape[0] = fed;
  session_->submit({{input_name_, float_tensor(shape, data)}});
}

SegmentOutput SessionSegmentModel::collect_waveform(int batch) {
  const int fed = fixed_batch_ ? max_batch_ : batch;
  const size_t item = static_cast<size_t>(channels()) * segment_;
  const auto outputs = session_->collect();
  peak_gpu_bytes_ = std::max(peak_gpu_bytes_, session_->last_run().peak_gpu_bytes);
  const auto [owner, values] = float_values(outputs, output_name_);
  const size_t out_item = static_cast<size_t>(stems()) * item;
  if (values.size() != fed * out_item)
    throw std::runtime_error(fmt::format("model output '{}' has {} values for a batch of {}: expected {}",
                                         output_name_, values.size(), fed, fed * out_item));
  return {owner, values.data(), batch * out_item};  // the first `batch` items: the rest padded a static batch
}

void SessionSegmentModel::submit(const std::vector<float>& in, int batch) {
  if (description_.kind != ProcessingKind::waveform) return SegmentModel::submit(in, batch);
  submit_waveform(in, batch);
  submitted_batches_.push_back(batch);
}

SegmentOutput SessionSegmentModel::collect() {
  if (description_.kind != ProcessingKind::waveform) return SegmentModel::collect();
  const int batch = submitted_batches_.front();
  submitted_batches_.pop_front();
  return collect_waveform(batch);
}

SegmentOutput SessionSegmentModel::run_spectrogram(const std::vector<float>& in, int batch) {
  const auto& p = description_.spectrogram;
  const int fed = fixed_batch_ ? max_batch_ : batch;
  std::vector<float> wave(static_cast<size_t>(fed) * segment_, 0.0f);
  std::copy(in.begin(), in.begin() + static_cast<size_t>(batch) * segment_, wave.begin());
  // STFT -> model -> iSTFT with the spectrograms on the GPU: only the waveforms cross to the host.
  auto analysed = spectral_->stft->run_device({{"wave", float_tensor({fed, segment_}, wave.data())}}, {});
  const Shape spectrogram{fed, spectral_->bins, spectral_->frames};
  auto separated =
      session_->run_device({}, {{p.magnitude_input, analysed.at("magnitude").reshaped(spectrogram)},
                                {p.phase_input, analysed.at("phase").reshaped(spectrogram)}});
  peak_gpu_bytes_ = std::max(peak_gpu_bytes_, session_->last_run().peak_gpu_bytes);
  auto magnitude = separated.at(p.magnitude_output), phase = separated.at(p.phase_output);
  if (magnitude.numel() != shape_numel(spectrogram) || phase.numel() != shape_numel(spectrogram))
    throw std::runtime_error(fmt::format("model outputs '{}' {} and '{}' {}: expected {}", p.magnitude_output,
                                         shape_to_string(magnitude.shape()), p.phase_output,
                                         shape_to_string(phase.shape()), shape_to_string(spectrogram)));
  auto synthesised = spectral_->istft->run(
      {}, {{"magnitude", magnitude.reshaped(spectrogram)}, {"phase", phase.reshaped(spectrogram)}});
  const auto [owner, values] = float_values(synthesised, "wave");
  return {owner, values.data(), static_cast<size_t>(batch) * segment_};
}

}  // namespace onda::audio
