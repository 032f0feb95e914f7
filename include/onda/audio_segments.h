// How onda::audio runs a fixed-length model over audio of any length (demucs' apply_model, see
// audio_separate.h): the segmentation options and the progress callback.
#pragma once
#include <cstdint>
#include <functional>

namespace onda::audio {

struct SegmentOptions {
  double overlap = 0.25;  // fraction of a segment shared with the next, in [0, 1)
  int batch = 1;          // segments per model call (clamped to the model's max_batch; a fixed batch wins)
  int shifts = 0;         // random time shifts to average (0: none)
  uint64_t seed = 0;      // for the shift offsets
  double max_shift_seconds = 0.5;
  double transition_power = 1.0;  // the triangle weight is raised to this power (demucs' default 1)
};

// Called once with done = 0 before the first model call, then after each model call: segments done
// so far, segments in total. It may throw to stop the run (an interrupted command line): the
// exception leaves the segmenter after the overlap-add worker has finished.
using SegmentProgress = std::function<void(int64_t done, int64_t total)>;

}  // namespace onda::audio
