// Sample-rate and channel-count conversion to what a model expects.
#pragma once
#include "onda/audio_file.h"

namespace onda::audio {

// Resamples every channel to `target_rate` with soxr's high-quality (SOXR_HQ: 20-bit precision,
// linear phase, 95% band) polyphase resampler; the output has round(frames * target / source)
// frames. Returns the input itself (moved, no copy) when the rates match.
AudioBuffer resample(AudioBuffer audio, int target_rate);

// Channel conversion the way demucs' convert_audio_channels does it: to mono by averaging, mono to
// N by repetition, N to fewer by keeping the first channels. Throws AudioError for the change it
// cannot make: from 2 or more channels to more channels than that.
AudioBuffer convert_channels(AudioBuffer audio, int target_channels);

}  // namespace onda::audio
