#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "onda/audio_description.h"

namespace onda::audio {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

template <typename T>
T required(const json& j, const char* key, const std::string& origin) {
  if (!j.contains(key))
    throw DescriptionError(fmt::format("model description {}: missing \"{}\"", origin, key));
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    throw DescriptionError(
        fmt::format("model description {}: \"{}\" has the wrong type ({})", origin, key, e.what()));
  }
}

template <typename T>
T optional(const json& j, const char* key, T fallback, const std::string& origin) {
  return j.contains(key) ? required<T>(j, key, origin) : fallback;
}

std::optional<std::string> metadata_description(const fs::path& model) {
  std::ifstream file(model, std::ios::binary);
  if (!file) return std::nullopt;
  onnx::ModelProto proto;
  if (!proto.ParseFromIstream(&file)) return std::nullopt;
  for (const auto& entry : proto.metadata_props())
    if (entry.key() == "onda") return entry.value();
  return std::nullopt;
}

}  // namespace

ModelDescription parse_model_description(const std::string& json_text, const std::string& origin) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    throw DescriptionError(fmt::format("model description {}: not valid JSON ({})", origin, e.what()));
  }
  if (!j.is_object())
    throw DescriptionError(fmt::format("model description {}: expected a JSON object", origin));
  ModelDescription d;
  d.sample_rate = required<int>(j, "sample_rate", origin);
  d.channels = required<int>(j, "channels", origin);
  d.segment = optional<int64_t>(j, "segment", 0, origin);
  d.overlap = optional<double>(j, "overlap", 0.25, origin);
  d.stems = required<std::vector<std::string>>(j, "stems", origin);
  d.input = optional<std::string>(j, "input", "", origin);
  d.output = optional<std::string>(j, "output", "", origin);
  d.state = optional<std::map<std::string, std::string>>(j, "state", {}, origin);
  for (const auto& [output, input] : d.state) {
    if (output.empty() || input.empty())
      throw DescriptionError(
          fmt::format("model description {}: \"state\" pairs need an output and an input name", origin));
  }
  if (d.sample_rate <= 0)
    throw DescriptionError(
        fmt::format("model description {}: sample_rate {} must be > 0", origin, d.sample_rate));
  if (d.channels <= 0)
    throw DescriptionError(fmt::format("model description {}: channels {} must be > 0", origin, d.channels));
  if (d.segment < 0)
    throw DescriptionError(fmt::format("model description {}: segment {} must be >= 0", origin, d.segment));
  if (!(d.overlap >= 0 && d.overlap < 1))
    throw DescriptionError(
        fmt::format("model description {}: overlap {} must be in [0, 1)", origin, d.overlap));
  if (d.stems.empty())
    throw DescriptionError(fmt::format("model description {}: \"stems\" is empty", origin));
  for (const auto& stem : d.stems) {
    if (stem.empty() || stem.find_first_of("/\\") != std::string::npos || stem == "." || stem == "..")
      throw DescriptionError(
          fmt::format("model description {}: stem name '{}' cannot be a file name", origin, stem));
  }
  const auto normalization = optional<std::string>(j, "normalize", "none", origin);
  if (normalization == "none")
    d.normalization = Normalization::none;
  else if (normalization == "mean_std")
    d.normalization = Normalization::mean_std;
  else if (normalization == "rms")
    d.normalization = Normalization::rms;
  else
    throw DescriptionError(fmt::format("model description {}: normalize '{}' is not none, mean_std or rms",
                                       origin, normalization));

  const auto kind = optional<std::string>(j, "kind", "waveform", origin);
  if (kind == "waveform") {
    d.kind = ProcessingKind::waveform;
  } else if (kind == "spectrogram") {
    d.kind = ProcessingKind::spectrogram;
    if (!j.contains("spectrogram") || !j["spectrogram"].is_object())
      throw DescriptionError(
          fmt::format("model description {}: kind \"spectrogram\" needs a \"spectrogram\" object", origin));
    const json& s = j["spectrogram"];
    auto& p = d.spectrogram;
    const std::string where = fmt::format("{} spectrogram", origin);
    p.n_fft = required<int64_t>(s, "n_fft", where);
    p.hop = required<int64_t>(s, "hop", where);
    p.window = optional<std::string>(s, "window", "hann", where);
    p.compression = optional<double>(s, "compression", 1.0, where);
    p.magnitude_input = required<std::string>(s, "magnitude_input", where);
    p.phase_input = required<std::string>(s, "phase_input", where);
    p.magnitude_output = required<std::string>(s, "magnitude_output", where);
    p.phase_output = required<std::string>(s, "phase_output", where);
    if (p.n_fft < 2 || p.hop <= 0 || p.hop > p.n_fft)
      throw DescriptionError(
          fmt::format("model description {}: n_fft {} and hop {} need n_fft >= 2 and 0 < hop <= n_fft",
                      origin, p.n_fft, p.hop));
    if (p.window != "hann" && p.window != "rectangular")
      throw DescriptionError(
          fmt::format("model description {}: window '{}' is not hann or rectangular", origin, p.window));
    if (!(p.compression > 0))
      throw DescriptionError(fmt::format("model description {}: compression must be > 0", origin));
    if (d.segment == 0 || d.segment % p.hop != 0)
      throw DescriptionError(
          fmt::format("model description {}: a spectrogram model needs \"segment\" as a multiple of hop {}",
                      origin, p.hop));
    if (d.stems.size() != 1 || d.channels != 1)
      throw DescriptionError(fmt::format(
          "model description {}: spectrogram models are mono with one output (enhancement)", origin));
  } else {
    throw DescriptionError(
        fmt::format("model description {}: kind '{}' is not waveform or spectrogram", origin, kind));
  }
  return d;
}

std::vector<fs::path> sidecar_candidates(const fs::path& model) {
  fs::path replaced = model;
  replaced.replace_extension(".onda.json");
  fs::path appended = model;
  appended += ".onda.json";
  return {replaced, appended};
}

ModelDescription load_model_description(const fs::path& model) {
  for (const auto& candidate : sidecar_candidates(model)) {
    std::error_code ec;
    if (!fs::is_regular_file(candidate, ec)) continue;
    std::ifstream file(candidate);
    std::stringstream text;
    text << file.rdbuf();
    if (!file) throw DescriptionError(fmt::format("cannot read model description '{}'", candidate.string()));
    return parse_model_description(text.str(), fmt::format("'{}'", candidate.string()));
  }
  if (auto text = metadata_description(model))
    return parse_model_description(*text, fmt::format("in the metadata of '{}'", model.string()));
  const auto candidates = sidecar_candidates(model);
  throw DescriptionError(fmt::format(
      "model '{}' has no description: write '{}' (sample_rate, channels, stems, ...; see docs/audio.md) "
      "or give --description FILE (onda's source ships them for its reference models in tools/descriptions/)",
      model.string(), candidates[0].string()));
}

}  // namespace onda::audio
