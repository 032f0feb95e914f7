// Audio files in and out through libsndfile (WAV, FLAC, OGG/Vorbis and whatever else it reads),
// as planar float32 samples. Writing goes to a temporary name in the target folder and is renamed
// when complete, so an interrupted run never leaves a partial file that looks finished.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace onda::audio {

// Bad audio input or output: unreadable file, unsupported format, unwritable folder.
class AudioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Planar float samples: samples[c * frames + t] for channel c, time t. Full scale is [-1, 1].
struct AudioBuffer {
  int sample_rate = 0;
  int channels = 0;
  int64_t frames = 0;
  std::vector<float> samples;

  AudioBuffer() = default;
  AudioBuffer(int sample_rate, int channels, int64_t frames)
      : sample_rate(sample_rate),
        channels(channels),
        frames(frames),
        samples(static_cast<size_t>(channels * frames)) {}
  float* channel(int c) { return samples.data() + static_cast<size_t>(c) * frames; }
  const float* channel(int c) const { return samples.data() + static_cast<size_t>(c) * frames; }
  double seconds() const { return sample_rate > 0 ? static_cast<double>(frames) / sample_rate : 0.0; }
};

enum class SampleEncoding { pcm16, pcm24, float32 };
enum class Container { wav, flac, ogg, mp3 };

struct AudioFormat {
  Container container = Container::wav;
  SampleEncoding encoding = SampleEncoding::pcm16;
};

struct AudioInfo {
  int sample_rate = 0;
  int channels = 0;
  int64_t frames = 0;
  // Not empty when libsndfile's header check found the file shorter than its header says (a
  // truncated download or copy): libsndfile then reads the frames that are there, so this is a
  // warning to show, not an error.
  std::string truncation;
  double seconds() const { return sample_rate > 0 ? static_cast<double>(frames) / sample_rate : 0.0; }
};

// The header only (no decoding); throws AudioError like read_audio.
AudioInfo probe_audio(const std::filesystem::path& path);

// Throws AudioError naming the file and libsndfile's reason.
AudioBuffer read_audio(const std::filesystem::path& path);

// An audio file written block by block: samples go to a hidden temporary file in the target folder
// (`.NAME.PID.partial`), renamed to `path` by commit(); destroyed without commit() (an error, an
// interrupted run), it removes the temporary file; it also removes the temporary files of the same
// name left by processes that no longer exist (a run killed with SIGKILL). Integer encodings clip
// to [-1, 1]. FLAC supports pcm16/pcm24 only (float32 throws); OGG is Vorbis and MP3 is MPEG
// layer III (encoding ignored for both).
class AudioWriter {
 public:
  AudioWriter(const std::filesystem::path& path, int sample_rate, int channels, const AudioFormat& format);
  ~AudioWriter();
  AudioWriter(const AudioWriter&) = delete;
  AudioWriter& operator=(const AudioWriter&) = delete;

  void write(const AudioBuffer& block);  // block.channels must match
  void commit();

 private:
  struct File;
  std::filesystem::path path_, temporary_;
  int channels_ = 0;
  bool clip_ = true, committed_ = false;
  std::unique_ptr<File> file_;
};

// The whole of `audio` through an AudioWriter.
void write_audio(const std::filesystem::path& path, const AudioBuffer& audio, const AudioFormat& format);

// The extension a container's files use ("wav", "flac", "ogg", "mp3").
std::string container_extension(Container container);

// The container a file name's extension asks for (.wav, .flac, .ogg / .oga, .mp3; any case);
// throws AudioError naming the file for an extension onda cannot write, or MP3 when this
// libsndfile was built without an MP3 encoder.
Container container_for_path(const std::filesystem::path& path);

// The lower-case extensions (no dot) libsndfile reads on this machine, as folders are scanned for
// input files: its major formats' extensions plus the usual aliases (wave, aif, oga, opus, mp3).
std::vector<std::string> readable_audio_extensions();

}  // namespace onda::audio
