// From audio file to stems: decode, convert to the model's rate and channels, normalise, run the
// model segment by segment with overlap-add (segmenter.h), undo the normalisation, encode. What
// `onda separate` and `onda enhance` call.
//
//   onda::audio::SeparateOptions options;
//   options.model = "htdemucs6.onnx";
//   onda::audio::Separator separator(options);
//   auto files = separator.separate_file("song.wav", "stems");   // stems/song/<stem>.wav
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onda/audio_description.h"
#include "onda/audio_file.h"
#include "onda/audio_segments.h"
#include "onda/session.h"

namespace onda::audio {

class SessionSegmentModel;  // the model behind a Separator (src/audio/model_runner.h)

struct SeparateOptions {
  std::filesystem::path model;
  std::optional<std::filesystem::path> description;  // a JSON file; default: next to the model / metadata
  SessionOptions session;
  double segment_seconds = 0;     // 0: the model's segment
  SegmentOptions segments;        // batch, shifts, seed (its overlap is ignored: see below)
  std::optional<double> overlap;  // unset: the description's "overlap" (0.25 if it has none)
  std::string two_stems;          // "": every stem; NAME: NAME and no_NAME (the sum of the others)
  AudioFormat format;             // of the written files
};

// Where the time of one file went, in seconds.
struct SeparateTimings {
  double decode = 0, resample = 0, normalise = 0, model = 0, overlap_add = 0, encode = 0, total = 0;
  // Files (streamed): un-normalising and encoding each block runs on the overlap-add worker, partly
  // hidden behind the model runs, so it is inside overlap_add as far as it was waited for; `worker`
  // is its own time, `encode` only the closing and renaming of the files.
  bool streamed = false;
  double worker = 0;
  int64_t segments = 0, model_calls = 0;
  double audio_seconds = 0;  // length of the input
  uint64_t peak_gpu_bytes = 0;
};

struct Stem {
  std::string name;
  AudioBuffer audio;
};

class Separator {
 public:
  // Loads the description and opens the model; throws DescriptionError / ModelError / GpuError.
  explicit Separator(const SeparateOptions& options);
  ~Separator();

  const ModelDescription& description() const { return description_; }
  std::string adapter_name() const;
  // The names of the files one input gives, in order: the stems, or NAME and no_NAME (--two-stems).
  std::vector<std::string> output_names() const;
  // Segments one model call takes, and whether that is fixed by the model (options' batch ignored).
  int max_batch() const;
  bool fixed_batch() const;

  // In memory: `mix` at any rate and channel count in, the stems at the model's rate and channels out.
  std::vector<Stem> separate(AudioBuffer mix, SeparateTimings* timings = nullptr,
                             const SegmentProgress& progress = {});

  // Writes <output_dir>/<input file stem>/<stem>.<ext>; returns the paths written. Checks that the
  // output folder is writable before running the model. Streams: the stems are written block by
  // block as the segments advance (to temporary names, renamed at the end), so the host holds the
  // input and a window of about segment + batch * stride samples per stem, not the whole stems.
  std::vector<std::filesystem::path> separate_file(const std::filesystem::path& input,
                                                   const std::filesystem::path& output_dir,
                                                   SeparateTimings* timings = nullptr,
                                                   const SegmentProgress& progress = {});

  // A one-stem (enhancement) model: writes its output to `output` (a file name), streamed likewise.
  void enhance_file(const std::filesystem::path& input, const std::filesystem::path& output,
                    SeparateTimings* timings = nullptr, const SegmentProgress& progress = {});

  // The outputs of `input` to `paths` (one per output_names() entry, folders existing), streamed
  // likewise; each file appears under its name only when complete. What the command line calls
  // once it has planned and checked every output path itself.
  void write_files(const std::filesystem::path& input, const std::vector<std::filesystem::path>& paths,
                   SeparateTimings* timings = nullptr, const SegmentProgress& progress = {});

 private:
  // Channel and rate conversion and normalisation of the input; the affine to undo comes back.
  AudioBuffer prepare(AudioBuffer input, SeparateTimings& t, double& offset, double& scale) const;
  // Undoes the normalisation and applies --two-stems: model outputs (whole or one block) to stems.
  std::vector<Stem> finish(std::vector<AudioBuffer> outputs, double offset, double scale) const;

  SeparateOptions options_;
  ModelDescription description_;
  std::unique_ptr<SessionSegmentModel> model_;
};

// The model description `options` names (its description file, else the model's sidecar or
// metadata) without opening the model: what the command line checks before touching the GPU.
ModelDescription load_separate_description(const SeparateOptions& options);

// Throws AudioError when `folder` cannot be created or written to.
void check_writable_folder(const std::filesystem::path& folder);

}  // namespace onda::audio
