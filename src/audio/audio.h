// Audio files to stems: decoding/encoding (libsndfile), resampling (soxr), model descriptions and
// the segmented overlap-add that runs fixed-length models over audio of any length (docs/audio.md).
#pragma once
#include "audio/audio_file.h"         // onda::audio::read_audio, write_audio, AudioBuffer
#include "audio/model_description.h"  // onda::audio::ModelDescription, load_model_description
#include "audio/resample.h"           // onda::audio::resample, convert_channels
#include "audio/separate.h"           // onda::audio::Separator
