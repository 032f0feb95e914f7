// Enhancement with a streaming model (`onda enhance --stream`): the audio goes through the model one
// frame of `hop` samples at a time, as a real-time host would feed it, with the model's state and
// cache outputs fed back as its inputs on the GPU (onda::Stream). The output is the concatenation of
// the output frames, so it equals a host loop over the same frames (any algorithmic delay of the
// model stays in it). The model description names the frame input and output ("input", "output"),
// the frame length ("segment", else the input's last dimension) and the state pairs ("state", else
// the names' rule); docs/audio.md.
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "onda/audio_description.h"
#include "onda/audio_file.h"
#include "onda/audio_separate.h"
#include "onda/stream.h"

namespace onda::audio {

struct StreamEnhanceOptions {
  std::filesystem::path model;
  std::optional<std::filesystem::path> description;  // a JSON file; default: next to the model / metadata
  SessionOptions session;
  AudioFormat format;  // of the written file
};

class StreamEnhancer {
 public:
  // Loads the description and opens the model; throws DescriptionError when the model's frame input
  // and output do not fit it (or it asks for a normalisation, which needs the whole file), and
  // onda::InputError when its states cannot be paired.
  explicit StreamEnhancer(const StreamEnhanceOptions& options);
  ~StreamEnhancer();

  const ModelDescription& description() const { return description_; }
  int64_t frame_length() const { return frame_; }
  const Stream& stream() const { return *stream_; }

  // `audio` at the model's rate and channel count in, the model's frames out (trimmed to its length);
  // the stream starts from its initial states. progress(frames done, frames) after each frame.
  AudioBuffer enhance(const AudioBuffer& audio, SeparateTimings* timings = nullptr,
                      const SegmentProgress& progress = {});
  // A file through convert_channels, resample and enhance() into `paths[0]` (written whole to a
  // temporary name, renamed when complete): the signature of Separator::write_files.
  void write_files(const std::filesystem::path& input, const std::vector<std::filesystem::path>& paths,
                   SeparateTimings* timings = nullptr, const SegmentProgress& progress = {});

 private:
  StreamEnhanceOptions options_;
  ModelDescription description_;
  std::unique_ptr<Stream> stream_;
  std::string input_name_, output_name_;
  Shape input_shape_;
  int64_t frame_ = 0;
};

}  // namespace onda::audio
