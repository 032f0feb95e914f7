// onda's audio layer, public: audio files in and out (libsndfile), resampling (soxr), model
// descriptions, separation and enhancement of files of any length (segmented overlap-add) and
// streaming enhancement frame by frame. What `onda separate` / `onda enhance` are built on
// (docs/audio.md); libonda holds it.
#pragma once
#include "onda/audio_description.h"  // onda::audio::ModelDescription, load_model_description
#include "onda/audio_file.h"         // onda::audio::read_audio, write_audio, AudioWriter, AudioBuffer
#include "onda/audio_resample.h"     // onda::audio::resample, convert_channels
#include "onda/audio_segments.h"     // onda::audio::SegmentOptions, SegmentProgress
#include "onda/audio_separate.h"     // onda::audio::Separator, SeparateOptions
#include "onda/audio_stream.h"       // onda::audio::StreamEnhancer (onda enhance --stream)
