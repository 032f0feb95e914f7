// Runs a fixed-length model over audio of any length, the way demucs' apply_model does
// (demucs/apply.py): the audio is cut into segments every (1 - overlap) * segment samples; a
// segment that runs past the end is centred in a window of `segment` samples read from the
// surrounding audio (zeros past the edges) and the model output is centre-trimmed back; segment
// outputs are summed with a triangular transition weight (1..segment/2 up, then down, divided by
// its maximum) and the sum divided by the summed weights. With shifts = N > 0 the whole input is
// padded by max_shift = 0.5 s of zeros on each side and separated N times at random offsets in
// [0, max_shift] (shift-equivariance averaging, Défossez et al. 2019); the N results are averaged.
//
// Only one batch of segments is in flight at a time: the model sees batch * channels * segment
// samples per call, whatever the audio length. The host keeps the input and the stem sums. The
// overlap-add of one batch runs on a worker thread while the model runs the next.
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "onda/audio_file.h"
#include "onda/audio_segments.h"  // SegmentOptions, SegmentProgress

namespace onda::audio {

// One batch's model output, read in place: `size` floats at `data`, kept alive by `owner` (the
// HostTensor a Session returned, say), so no copy is made.
struct SegmentOutput {
  std::shared_ptr<const void> owner;
  const float* data = nullptr;
  size_t size = 0;
};

// The model as the segmenter sees it: a batch of planar segments in, stems out.
class SegmentModel {
 public:
  virtual ~SegmentModel() = default;
  virtual int64_t segment_length() const = 0;
  virtual int channels() const = 0;
  virtual int stems() const = 0;
  // Largest batch one call takes (>= 1).
  virtual int max_batch() const = 0;
  // True when every call costs a full max_batch() (a static batch dim): then the segmenter fills
  // every call whatever SegmentOptions::batch says.
  virtual bool fixed_batch() const { return false; }
  // in: batch * channels * segment floats ([b][c][t]); returns batch * stems * channels * segment
  // floats ([b][s][c][t]).
  virtual SegmentOutput run(const std::vector<float>& in, int batch) = 0;
  // Pipelined use: submit() hands a batch to the model and may return before it is done;
  // collect() returns the oldest submitted batch's output. The segmenter submits batch k+1 before
  // collecting batch k, so a GPU model records the next batch while it runs the current one. The
  // default runs each batch synchronously in submit().
  virtual void submit(const std::vector<float>& in, int batch) { done_.push_back(run(in, batch)); }
  virtual SegmentOutput collect() {
    SegmentOutput out = std::move(done_.front());
    done_.pop_front();
    return out;
  }

 private:
  std::deque<SegmentOutput> done_;
};

// What the segmenter did and where its time went.
struct SegmentStats {
  int64_t segments = 0;
  int64_t model_calls = 0;
  double model_seconds = 0;  // inside SegmentModel::run
  double overlap_add_seconds =
      0;  // cutting segments out, waiting for the overlap-add worker, normalising the sums
};

// Receives finished output in order: block[s] holds every channel of stem s for frames
// [start, start + block[s].frames). Called from a worker thread, one call at a time.
using StemSink = std::function<void(int64_t start, const std::vector<AudioBuffer>& block)>;

// Separates `mix` (channels must equal the model's) into model.stems() buffers of mix's length.
std::vector<AudioBuffer> separate_segments(SegmentModel& model, const AudioBuffer& mix,
                                           const SegmentOptions& options, SegmentStats* stats = nullptr,
                                           const SegmentProgress& progress = {});

// Like separate_segments, but streams: finished samples go to `sink` as the segments advance, so
// the host holds about segment + batch * stride output samples per stem instead of the whole
// length. With shifts the passes are averaged in memory and handed over as one block.
void stream_segments(SegmentModel& model, const AudioBuffer& mix, const SegmentOptions& options,
                     const StemSink& sink, SegmentStats* stats = nullptr,
                     const SegmentProgress& progress = {});

// The shift offsets separate_segments uses for `shifts` and `seed`: deterministic per seed.
std::vector<int64_t> shift_offsets(int shifts, int64_t max_shift, uint64_t seed);

// The transition weight of demucs' apply_model for a segment length (before transition_power).
std::vector<float> transition_weight(int64_t segment);

}  // namespace onda::audio
