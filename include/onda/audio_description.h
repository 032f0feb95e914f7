// What a separation / enhancement model expects around its tensors: sample rate, channels,
// segment length, stem names and its pre/post-processing. Read from a JSON sidecar next to the
// model (`model.onda.json` or `model.onnx.onda.json`) or from the ONNX metadata_props entry
// "onda" holding the same JSON. docs/audio.md describes every field.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onda/audio_file.h"

namespace onda::audio {

// A description that is missing, unreadable or inconsistent with the model.
class DescriptionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ProcessingKind {
  waveform,     // input [batch, channels, samples] (or [batch, samples] for mono) -> [batch, stems, channels,
                // samples]
  spectrogram,  // waveform -> STFT -> (magnitude^compression, phase) -> model -> (magnitude, phase) -> iSTFT
};

// How the whole input is scaled before the model and the outputs after it (undone exactly).
enum class Normalization {
  none,
  mean_std,  // demucs' separate.py: (x - mean(mono)) / std(mono), outputs * std + mean
  rms,       // MP-SENet's inference: x * sqrt(N / sum(x^2)) over the mono mix, outputs divided back
};

struct SpectrogramProcessing {
  int64_t n_fft = 0;
  int64_t hop = 0;
  std::string window = "hann";               // "hann" (periodic, torch.hann_window) or "rectangular"
  double compression = 1.0;                  // the model sees magnitude^compression and returns it compressed
  std::string magnitude_input, phase_input;  // model input names
  std::string magnitude_output, phase_output;  // model output names
};

struct ModelDescription {
  int sample_rate = 0;
  int channels = 0;
  int64_t segment = 0;    // samples per model call (0: the model input's static length)
  double overlap = 0.25;  // default overlap between segments (the model's own inference code's)
  std::vector<std::string> stems;
  ProcessingKind kind = ProcessingKind::waveform;
  Normalization normalization = Normalization::none;
  std::string input;                  // waveform: the model's input name ("" = its only input)
  std::string output;                 // waveform: the model's output name ("" = its only/first output)
  SpectrogramProcessing spectrogram;  // kind == spectrogram only
  // Streaming models (onda enhance --stream, onda::Stream): which output feeds which input on the
  // next frame, output -> input ("state": {"state_out": "state_in"}); empty: the names' rule
  // (onda::default_state_pairs). `segment` is then the frame length (the hop), 0: the input's.
  std::map<std::string, std::string> state;
};

// Parses and checks a description's JSON text; `origin` names it in errors.
ModelDescription parse_model_description(const std::string& json_text, const std::string& origin);

// The sidecar next to `model` if there is one, else the model's "onda" metadata_props entry;
// throws DescriptionError saying where it looked when there is neither.
ModelDescription load_model_description(const std::filesystem::path& model);

// Where load_model_description looks for a sidecar, in order.
std::vector<std::filesystem::path> sidecar_candidates(const std::filesystem::path& model);

}  // namespace onda::audio
