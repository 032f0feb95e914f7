#include <fmt/format.h>
#include <soxr.h>

#include <cmath>

#include "onda/audio_resample.h"

namespace onda::audio {

AudioBuffer resample(AudioBuffer audio, int target_rate) {
  if (target_rate <= 0) throw AudioError(fmt::format("cannot resample to {} Hz", target_rate));
  if (audio.sample_rate <= 0) throw AudioError("cannot resample audio without a sample rate");
  if (audio.sample_rate == target_rate) return audio;  // moved out (a by-value parameter)
  const double ratio = static_cast<double>(target_rate) / audio.sample_rate;
  const auto out_frames = static_cast<int64_t>(std::llround(static_cast<double>(audio.frames) * ratio));
  AudioBuffer out(target_rate, audio.channels, out_frames);
  // Split channels (SOXR_SPLIT): planar in and out, no interleaving copy.
  const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_S, SOXR_FLOAT32_S);
  const soxr_quality_spec_t quality = soxr_quality_spec(SOXR_HQ, 0);
  const soxr_runtime_spec_t runtime = soxr_runtime_spec(1);
  std::vector<const float*> in_ptrs(audio.channels);
  std::vector<float*> out_ptrs(audio.channels);
  for (int c = 0; c < audio.channels; ++c) {
    in_ptrs[c] = audio.channel(c);
    out_ptrs[c] = out.channel(c);
  }
  size_t done = 0;
  // soxr_oneshot flushes the filter tail, so the output is aligned with the input (no delay).
  const soxr_error_t error =
      soxr_oneshot(audio.sample_rate, target_rate, audio.channels, in_ptrs.data(), audio.frames, nullptr,
                   out_ptrs.data(), out_frames, &done, &io, &quality, &runtime);
  if (error)
    throw AudioError(
        fmt::format("soxr: resampling {} Hz to {} Hz failed: {}", audio.sample_rate, target_rate, error));
  if (static_cast<int64_t>(done) < out_frames) {
    for (int c = 0; c < audio.channels; ++c)
      std::fill(out.channel(c) + done, out.channel(c) + out_frames, 0.0f);
  }
  return out;
}

AudioBuffer convert_channels(AudioBuffer audio, int target_channels) {
  if (target_channels <= 0)
    throw AudioError(fmt::format("cannot convert audio to {} channels", target_channels));
  if (audio.channels <= 0) throw AudioError("cannot convert audio without channels");
  if (audio.channels == target_channels) return audio;
  AudioBuffer out(audio.sample_rate, target_channels, audio.frames);
  if (target_channels == 1) {
    for (int c = 0; c < audio.channels; ++c)
      for (int64_t t = 0; t < audio.frames; ++t)
        out.channel(0)[t] += audio.channel(c)[t] / static_cast<float>(audio.channels);
  } else if (audio.channels == 1) {
    for (int c = 0; c < target_channels; ++c)
      std::copy(audio.channel(0), audio.channel(0) + audio.frames, out.channel(c));
  } else if (audio.channels > target_channels) {
    for (int c = 0; c < target_channels; ++c)
      std::copy(audio.channel(c), audio.channel(c) + audio.frames, out.channel(c));
  } else {
    throw AudioError(
        fmt::format("cannot convert {} channels to {}: the model needs more channels than the file has",
                    audio.channels, target_channels));
  }
  return out;
}

}  // namespace onda::audio
