// `onda separate song.wav -m model.onnx -o stems/` and `onda enhance noisy.wav -m model.onnx -o
// clean.wav`: audio files through a separation or enhancement model, any length (docs/audio.md).
// The options follow demucs' command line (--segment, --overlap, --shifts, --two-stems,
// --float32, --int24, --flac).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>

#include "commands.h"
#include "audio/audio.h"

namespace onda::cli {
namespace {

struct AudioArguments {
  std::vector<std::string> inputs;
  std::string model, description, output;
  double segment = 0;
  std::optional<double> overlap;
  int batch = 1, shifts = 0;
  uint64_t seed = 0;
  std::string two_stems;
  bool float32 = false, int24 = false, flac = false, timings = false, quiet = false;
  std::string adapter;
};

// One line redrawn in place on a terminal: segments done and audio seconds per wall second.
class ProgressLine {
 public:
  ProgressLine(std::string label, double audio_seconds, bool enabled)
      : label_(std::move(label)),
        audio_seconds_(audio_seconds),
        enabled_(enabled),
        start_(std::chrono::steady_clock::now()) {}
  ~ProgressLine() {
    if (drawn_) fmt::print(stderr, "\n");
  }
  void update(int64_t done, int64_t total) {
    if (!enabled_ || total <= 0) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double fraction = static_cast<double>(done) / static_cast<double>(total);
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    const double speed = elapsed > 0 ? fraction * audio_seconds_ / elapsed : 0.0;
    fmt::print(stderr, "\r{} [{}{}] {}/{} segments, {:.1f} s audio/s", label_, std::string(filled, '#'),
               std::string(kWidth - filled, ' '), done, total, speed);
    std::fflush(stderr);
    drawn_ = true;
  }

 private:
  std::string label_;
  double audio_seconds_;
  bool enabled_, drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

audio::SeparateOptions separate_options(const AudioArguments& a) {
  if (a.float32 + a.int24 > 1) throw std::invalid_argument("--float32 and --int24 exclude each other");
  if (a.flac && a.float32) throw std::invalid_argument("--flac stores 16 or 24-bit integers: drop --float32");
  audio::SeparateOptions o;
  o.model = a.model;
  if (!a.description.empty()) o.description = a.description;
  o.session.adapter = a.adapter;
  o.segment_seconds = a.segment;
  o.overlap = a.overlap;
  o.segments.batch = a.batch;
  o.segments.shifts = a.shifts;
  o.segments.seed = a.seed;
  o.two_stems = a.two_stems;
  o.format.container = a.flac ? audio::Container::flac : audio::Container::wav;
  o.format.encoding = a.float32 ? audio::SampleEncoding::float32
                      : a.int24 ? audio::SampleEncoding::pcm24
                                : audio::SampleEncoding::pcm16;
  return o;
}

void print_timings(const std::string& input, const audio::SeparateTimings& t) {
  const double outside = t.total - t.model;
  fmt::print(
      "{}: {:.2f} s of audio in {:.3f} s = {:.1f}x real time ({} segments in {} model calls, peak GPU {:.1f} "
      "MiB)\n",
      input, t.audio_seconds, t.total, t.total > 0 ? t.audio_seconds / t.total : 0.0, t.segments,
      t.model_calls, static_cast<double>(t.peak_gpu_bytes) / (1 << 20));
  auto line = [&](const char* what, double seconds) {
    fmt::print("  {:<12} {:>9.3f} s {:>6.1f}%\n", what, seconds, t.total > 0 ? 100 * seconds / t.total : 0.0);
  };
  line("decode", t.decode);
  line("resample", t.resample);
  line("normalise", t.normalise);
  line("model (GPU)", t.model);
  line("overlap-add", t.overlap_add);
  line(t.streamed ? "close files" : "encode", t.encode);
  line("other", t.total - (t.decode + t.resample + t.normalise + t.model + t.overlap_add + t.encode));
  if (t.streamed)
    fmt::print(
        "  (un-normalising and encoding the streamed stems took {:.3f} s on the overlap-add worker, "
        "overlapping the model runs; only its waits count above)\n",
        t.worker);
  fmt::print("  outside the model: {:.3f} s ({:.1f}%)\n", outside,
             t.total > 0 ? 100 * outside / t.total : 0.0);
}

void add_common_options(CLI::App* command, AudioArguments& a) {
  command->add_option("-m,--model", a.model, "The .onnx model (its description: MODEL.onda.json or metadata)")
      ->required();
  command->add_option("--description", a.description, "The model description JSON (instead of the sidecar)");
  command->add_option("--segment", a.segment,
                      "Segment length in seconds (models with a dynamic length only)");
  command->add_option(
      "--overlap", a.overlap,
      "Overlap between segments, fraction of a segment (default: the description's, else 0.25)");
  command->add_option("--batch", a.batch, "Segments per model call (models with a dynamic batch dim)")
      ->capture_default_str();
  command->add_option("--shifts", a.shifts, "Random time shifts (up to 0.5 s) to average; 0: none")
      ->capture_default_str();
  command->add_option("--seed", a.seed, "Seed of the shift offsets")->capture_default_str();
  command->add_flag("--float32", a.float32, "Write 32-bit float samples");
  command->add_flag("--int24", a.int24, "Write 24-bit integer samples");
  command->add_option("--adapter", a.adapter, "Adapter index or name substring");
  command->add_flag("--timings", a.timings, "Print where the time went");
  command->add_flag("-q,--quiet", a.quiet, "No progress line");
}

void separate(const AudioArguments& a) {
  audio::Separator separator(separate_options(a));
  const bool tty = !a.quiet && ::isatty(STDERR_FILENO);
  for (const auto& input : a.inputs) {
    const audio::AudioInfo info = audio::probe_audio(input);
    audio::SeparateTimings timings;
    std::vector<std::filesystem::path> written;
    {
      ProgressLine progress(std::filesystem::path(input).filename().string(), info.seconds(), tty);
      written = separator.separate_file(input, a.output, &timings,
                                        [&](int64_t done, int64_t total) { progress.update(done, total); });
    }
    if (!a.quiet) {
      for (const auto& path : written) fmt::print("wrote {}\n", path.string());
    }
    if (a.timings) print_timings(input, timings);
  }
}

void enhance(const AudioArguments& a) {
  audio::SeparateOptions options = separate_options(a);
  // The container follows the output's extension (clean.flac, clean.ogg) unless --flac says so.
  const std::string extension = std::filesystem::path(a.output).extension().string();
  if (extension == ".flac") options.format.container = audio::Container::flac;
  if (extension == ".ogg") options.format.container = audio::Container::ogg;
  if (options.format.container == audio::Container::flac &&
      options.format.encoding == audio::SampleEncoding::float32)
    throw std::invalid_argument("FLAC stores 16 or 24-bit integers: drop --float32");
  audio::Separator separator(options);
  const bool tty = !a.quiet && ::isatty(STDERR_FILENO);
  const audio::AudioInfo info = audio::probe_audio(a.inputs[0]);
  audio::SeparateTimings timings;
  {
    ProgressLine progress(std::filesystem::path(a.inputs[0]).filename().string(), info.seconds(), tty);
    separator.enhance_file(a.inputs[0], a.output, &timings,
                           [&](int64_t done, int64_t total) { progress.update(done, total); });
  }
  if (!a.quiet) fmt::print("wrote {}\n", a.output);
  if (a.timings) print_timings(a.inputs[0], timings);
}

}  // namespace

void add_separate_command(CLI::App& app) {
  auto* command = app.add_subcommand("separate", "Split audio files into stems: OUT/<track>/<stem>.wav");
  auto a = std::make_shared<AudioArguments>();
  a->output = "separated";
  command->add_option("inputs", a->inputs, "Audio files (WAV, FLAC, OGG, ...)")->required();
  command->add_option("-o,--out", a->output, "Output folder")->capture_default_str();
  command->add_option("--two-stems", a->two_stems,
                      "Write only NAME and no_NAME (the sum of the other stems)");
  command->add_flag("--flac", a->flac, "Write FLAC instead of WAV");
  add_common_options(command, *a);
  command->callback([a] { separate(*a); });
}

void add_enhance_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("enhance", "Clean a recording with a one-output model (speech enhancement)");
  auto a = std::make_shared<AudioArguments>();
  command->add_option("input", a->inputs, "The audio file")->required()->expected(1);
  command->add_option("-o,--out", a->output, "The output file (.wav, .flac or .ogg by its extension)")
      ->required();
  command->add_flag("--flac", a->flac, "Write FLAC instead of WAV");
  add_common_options(command, *a);
  command->callback([a] { enhance(*a); });
}

}  // namespace onda::cli
