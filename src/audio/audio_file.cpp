#include "onda/audio_file.h"

#include <fmt/format.h>
#include <sndfile.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <memory>

namespace onda::audio {
namespace {

namespace fs = std::filesystem;

struct SndfileCloser {
  void operator()(SNDFILE* file) const { sf_close(file); }
};
using SndfileHandle = std::unique_ptr<SNDFILE, SndfileCloser>;

constexpr int64_t kFramesPerBlock = 1 << 16;  // interleaved staging block: bounded extra memory

int sndfile_format(const AudioFormat& format) {
  switch (format.container) {
    case Container::wav:
      switch (format.encoding) {
        case SampleEncoding::pcm16:
          return SF_FORMAT_WAV | SF_FORMAT_PCM_16;
        case SampleEncoding::pcm24:
          return SF_FORMAT_WAV | SF_FORMAT_PCM_24;
        case SampleEncoding::float32:
          return SF_FORMAT_WAV | SF_FORMAT_FLOAT;
      }
      break;
    case Container::flac:
      switch (format.encoding) {
        case SampleEncoding::pcm16:
          return SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
        case SampleEncoding::pcm24:
          return SF_FORMAT_FLAC | SF_FORMAT_PCM_24;
        case SampleEncoding::float32:
          throw AudioError("FLAC stores integer samples only: use 16 or 24 bits, not float32");
      }
      break;
    case Container::ogg:
      return SF_FORMAT_OGG | SF_FORMAT_VORBIS;
    case Container::mp3:
      return SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III;
  }
  throw AudioError("unknown audio format");
}

}  // namespace

std::string container_extension(Container container) {
  switch (container) {
    case Container::wav:
      return "wav";
    case Container::flac:
      return "flac";
    case Container::ogg:
      return "ogg";
    case Container::mp3:
      return "mp3";
  }
  return "wav";
}

static std::string lower_extension(const fs::path& path) {
  std::string extension = path.extension().string();
  if (!extension.empty()) extension.erase(0, 1);
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension;
}

Container container_for_path(const fs::path& path) {
  const std::string extension = lower_extension(path);
  Container container;
  if (extension == "wav" || extension == "wave") {
    container = Container::wav;
  } else if (extension == "flac") {
    container = Container::flac;
  } else if (extension == "ogg" || extension == "oga") {
    container = Container::ogg;
  } else if (extension == "mp3") {
    container = Container::mp3;
  } else {
    throw AudioError(fmt::format("cannot write '{}': {}; onda writes .wav, .flac, .ogg and .mp3",
                                 path.string(),
                                 extension.empty() ? "no extension names the format"
                                                   : fmt::format("unknown extension '.{}'", extension)));
  }
  // libsndfile builds without LAME (or Vorbis) exist: ask it rather than fail after the model run.
  SF_INFO info{};
  info.samplerate = 44100;
  info.channels = 2;
  info.format = sndfile_format({container, SampleEncoding::pcm16});
  if (!sf_format_check(&info))
    throw AudioError(
        fmt::format("cannot write '{}': this libsndfile cannot write .{} files", path.string(), extension));
  return container;
}

std::vector<std::string> readable_audio_extensions() {
  std::vector<std::string> extensions = {"wav", "wave", "aif", "aiff", "flac", "ogg", "oga", "opus", "mp3"};
  int count = 0;
  sf_command(nullptr, SFC_GET_FORMAT_MAJOR_COUNT, &count, sizeof count);
  for (int k = 0; k < count; ++k) {
    SF_FORMAT_INFO format{};
    format.format = k;
    if (sf_command(nullptr, SFC_GET_FORMAT_MAJOR, &format, sizeof format) != 0 || !format.extension) continue;
    const std::string extension = format.extension;
    // raw is header-less: any file "reads" as raw PCM, so a folder scan must not pick it up.
    if (extension == "raw" || extension == "m1a") continue;
    extensions.push_back(extension);
  }
  std::sort(extensions.begin(), extensions.end());
  extensions.erase(std::unique(extensions.begin(), extensions.end()), extensions.end());
  return extensions;
}

static SndfileHandle open_for_reading(const fs::path& path, SF_INFO& info) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw AudioError(fmt::format("cannot read audio '{}': no such file", path.string()));
  if (fs::is_directory(path, ec))
    throw AudioError(fmt::format("cannot read audio '{}': it is a folder", path.string()));
  info = SF_INFO{};
  SndfileHandle file(sf_open(path.c_str(), SFM_READ, &info));
  if (!file) throw AudioError(fmt::format("cannot read audio '{}': {}", path.string(), sf_strerror(nullptr)));
  if (info.channels <= 0 || info.samplerate <= 0)
    throw AudioError(fmt::format("cannot read audio '{}': {} channels at {} Hz", path.string(), info.channels,
                                 info.samplerate));
  return file;
}

AudioInfo probe_audio(const fs::path& path) {
  SF_INFO info{};
  SndfileHandle file = open_for_reading(path, info);
  AudioInfo result{info.samplerate, info.channels, info.frames, {}};
  // libsndfile logs a chunk whose declared size passes the end of the file as "data : 32000
  // (should be 15978)" and then reads what is there.
  std::string log(4096, '\0');
  sf_command(file.get(), SFC_GET_LOG_INFO, log.data(), static_cast<int>(log.size()));
  log.resize(log.find('\0'));
  std::string first, data;
  for (size_t begin = 0; begin < log.size();) {
    const size_t end = std::min(log.find('\n', begin), log.size());
    const std::string line = log.substr(begin, end - begin);
    if (line.find("(should be") != std::string::npos) {
      if (first.empty()) first = line;
      if (data.empty() && line.rfind("data", 0) == 0) data = line;
    }
    begin = end + 1;
  }
  if (!first.empty())
    result.truncation = fmt::format("its header promises more than the file holds (libsndfile: '{}')",
                                    data.empty() ? first : data);
  return result;
}

AudioBuffer read_audio(const fs::path& path) {
  SF_INFO info{};
  SndfileHandle file = open_for_reading(path, info);
  // Integer files come back scaled to [-1, 1) (libsndfile's default normalisation).
  AudioBuffer audio(info.samplerate, info.channels, info.frames);
  std::vector<float> block(static_cast<size_t>(kFramesPerBlock * info.channels));
  int64_t done = 0;
  while (done < info.frames) {
    const sf_count_t want = std::min<int64_t>(kFramesPerBlock, info.frames - done);
    const sf_count_t got = sf_readf_float(file.get(), block.data(), want);
    if (got <= 0) break;
    for (sf_count_t t = 0; t < got; ++t)
      for (int c = 0; c < info.channels; ++c) audio.channel(c)[done + t] = block[t * info.channels + c];
    done += got;
  }
  if (done != info.frames)
    throw AudioError(fmt::format("cannot read audio '{}': truncated after {} of {} frames ({})",
                                 path.string(), done, info.frames, sf_strerror(file.get())));
  return audio;
}

// A run killed outright (SIGKILL, a crash, a power cut) cannot remove its temporary file: the next
// writer of the same name removes those whose process no longer exists.
static void remove_stale_partials(const fs::path& folder, const std::string& name) {
  const std::string prefix = "." + name + ".", suffix = ".partial";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.size() <= prefix.size() + suffix.size() || file.rfind(prefix, 0) != 0 ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9)
      continue;
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) fs::remove(entry.path(), ec);
  }
}

struct AudioWriter::File {
  SndfileHandle handle;
};

AudioWriter::AudioWriter(const fs::path& path, int sample_rate, int channels, const AudioFormat& format)
    : path_(path), channels_(channels) {
  if (channels <= 0 || sample_rate <= 0)
    throw AudioError(
        fmt::format("cannot write '{}': {} channels at {} Hz", path.string(), channels, sample_rate));
  SF_INFO info{};
  info.samplerate = sample_rate;
  info.channels = channels;
  info.format = sndfile_format(format);
  if (!sf_format_check(&info))
    throw AudioError(fmt::format("cannot write '{}': libsndfile rejects {} channels at {} Hz in this format",
                                 path.string(), channels, sample_rate));
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw AudioError(fmt::format("cannot write '{}': no folder '{}'", path.string(), folder.string()));
  remove_stale_partials(folder, path.filename().string());
  // The temporary name starts with a dot and ends in .partial: never mistaken for a finished file.
  temporary_ = folder / fmt::format(".{}.{}.partial", path.filename().string(), ::getpid());
  file_ = std::make_unique<File>();
  file_->handle.reset(sf_open(temporary_.c_str(), SFM_WRITE, &info));
  if (!file_->handle)
    throw AudioError(fmt::format("cannot write '{}': {}", path.string(), sf_strerror(nullptr)));
  clip_ = format.encoding != SampleEncoding::float32 || format.container != Container::wav;
}

AudioWriter::~AudioWriter() {
  if (committed_) return;
  if (file_) file_->handle.reset();
  std::error_code ec;
  if (!temporary_.empty()) fs::remove(temporary_, ec);
}

void AudioWriter::write(const AudioBuffer& block) {
  if (committed_ || !file_)
    throw AudioError(fmt::format("cannot write '{}': already closed", path_.string()));
  if (block.channels != channels_)
    throw AudioError(fmt::format("cannot write {} channels to '{}' opened with {}", block.channels,
                                 path_.string(), channels_));
  std::vector<float> interleaved(
      static_cast<size_t>(std::min<int64_t>(kFramesPerBlock, block.frames) * channels_));
  for (int64_t start = 0; start < block.frames; start += kFramesPerBlock) {
    const int64_t n = std::min<int64_t>(kFramesPerBlock, block.frames - start);
    for (int c = 0; c < channels_; ++c) {
      const float* src = block.channel(c) + start;
      for (int64_t t = 0; t < n; ++t)
        interleaved[t * channels_ + c] = clip_ ? std::clamp(src[t], -1.0f, 1.0f) : src[t];
    }
    if (sf_writef_float(file_->handle.get(), interleaved.data(), n) != n)
      throw AudioError(
          fmt::format("cannot write '{}': {}", path_.string(), sf_strerror(file_->handle.get())));
  }
}

void AudioWriter::commit() {
  if (committed_ || !file_)
    throw AudioError(fmt::format("cannot write '{}': already closed", path_.string()));
  const int error = sf_close(file_->handle.release());  // flushes (FLAC/OGG encoders finish here)
  if (error != 0)
    throw AudioError(fmt::format("cannot write '{}': {}", path_.string(), sf_error_number(error)));
  std::error_code ec;
  fs::rename(temporary_, path_, ec);
  if (ec)
    throw AudioError(fmt::format("cannot write '{}': rename failed ({})", path_.string(), ec.message()));
  committed_ = true;
}

void write_audio(const fs::path& path, const AudioBuffer& audio, const AudioFormat& format) {
  AudioWriter writer(path, audio.sample_rate, audio.channels, format);
  writer.write(audio);
  writer.commit();
}

}  // namespace onda::audio
