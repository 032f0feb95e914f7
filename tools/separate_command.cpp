// `onda separate song.wav music/ -m model.onnx -o stems/` and `onda enhance noisy.wav -m model.onnx -o
// clean.wav`: audio files and folders through a separation or enhancement model, any length
// (docs/audio.md). The options follow demucs' command line (--segment, --overlap, --shifts,
// --two-stems, --float32, --int24, --flac, --filename). Everything that can be checked is checked
// before the model is opened (audio_jobs.h); a file that fails is reported and the others still run.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <optional>

#include "audio_jobs.h"
#include "commands.h"
#include "interrupt.h"
#include "onda/audio.h"
#include "progress_line.h"

namespace onda::cli {
namespace {

namespace fs = std::filesystem;

struct AudioArguments {
  bool enhance = false;
  std::vector<std::string> inputs;
  std::string model, description, output, filename;
  double segment = 0;
  std::optional<double> overlap;
  int batch = 1, shifts = 0;
  uint64_t seed = 0;
  std::string two_stems;
  bool float32 = false, int24 = false, flac = false, overwrite = false, timings = false, quiet = false;
  bool stream = false;  // enhance --stream: frame by frame with a streaming model (audio::StreamEnhancer)
  std::string adapter;
};

constexpr int kMaxBatch = 64;    // the runner's limit for a dynamic batch dim
constexpr int kMaxShifts = 100;  // each shift is a whole extra pass over the audio

void check_ranges(const AudioArguments& a) {
  if (!(a.segment >= 0) || !std::isfinite(a.segment))
    throw std::invalid_argument(fmt::format("--segment {}: give seconds > 0 (or leave it out)", a.segment));
  if (a.overlap && !(*a.overlap >= 0 && *a.overlap < 1))
    throw std::invalid_argument(
        fmt::format("--overlap {}: give a fraction of a segment in [0, 1)", *a.overlap));
  if (a.batch < 1 || a.batch > kMaxBatch)
    throw std::invalid_argument(
        fmt::format("--batch {}: give 1 to {} segments per model call", a.batch, kMaxBatch));
  if (a.shifts < 0 || a.shifts > kMaxShifts)
    throw std::invalid_argument(fmt::format("--shifts {}: give 0 to {}", a.shifts, kMaxShifts));
  if (a.float32 && a.int24) throw std::invalid_argument("--float32 and --int24 exclude each other: give one");
  if (a.stream && (a.segment > 0 || a.overlap || a.batch != 1 || a.shifts != 0))
    throw std::invalid_argument(
        "--stream feeds the model one frame at a time: --segment, --overlap, --batch and --shifts do not "
        "apply");
}

// The container of the files written, from their extension; --flac, --float32 and --int24 must agree.
audio::AudioFormat output_format(const AudioArguments& a, const fs::path& sample_file,
                                 const std::string& named_by) {
  audio::AudioFormat format;
  format.container = audio::container_for_path(sample_file);
  const std::string extension = audio::container_extension(format.container);
  if (a.flac && format.container != audio::Container::flac)
    throw std::invalid_argument(
        fmt::format("--flac contradicts {}, which names .{} files: drop one of them", named_by, extension));
  const bool lossy = format.container == audio::Container::ogg || format.container == audio::Container::mp3;
  if (a.float32 && format.container != audio::Container::wav)
    throw std::invalid_argument(
        fmt::format("--float32 writes WAV only; {} names .{} files", named_by, extension));
  if (a.int24 && lossy)
    throw std::invalid_argument(fmt::format(
        "--int24 sets integer WAV / FLAC samples; {} names lossy .{} files", named_by, extension));
  format.encoding = a.float32 ? audio::SampleEncoding::float32
                    : a.int24 ? audio::SampleEncoding::pcm24
                              : audio::SampleEncoding::pcm16;
  return format;
}

audio::SeparateOptions separate_options(const AudioArguments& a, const audio::AudioFormat& format) {
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
  o.format = format;
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

void warn(const std::string& text) {
  fmt::print(stderr, "onda: warning: {}\n", text);
}

// The names of one input's outputs: the stems, or NAME and no_NAME (--two-stems).
std::vector<std::string> output_names(const AudioArguments& a, const audio::ModelDescription& d) {
  if (a.enhance) {
    if (d.stems.size() != 1)
      throw std::invalid_argument(
          fmt::format("enhance needs a model with one output stem; '{}' has {} (use onda separate)", a.model,
                      d.stems.size()));
    return d.stems;
  }
  if (a.two_stems.empty()) return d.stems;
  if (std::find(d.stems.begin(), d.stems.end(), a.two_stems) == d.stems.end()) {
    std::string names;
    for (const auto& stem : d.stems) names += fmt::format("{}{}", names.empty() ? "" : ", ", stem);
    throw std::invalid_argument(fmt::format("--two-stems {}: the model's stems are {}", a.two_stems, names));
  }
  return {a.two_stems, "no_" + a.two_stems};
}

struct Failure {
  std::string input, reason;
};

// How outputs are named: enhance -o FILE.ext (one input), else -o FOLDER with a --filename template;
// and the one format every output is written in.
struct OutputNaming {
  fs::path out;
  bool single_file = false;
  std::string pattern;  // the --filename template (empty for a single file)
  audio::AudioFormat format;
};

OutputNaming output_naming(const AudioArguments& a, size_t input_count) {
  OutputNaming n;
  std::error_code ec;
  n.out = a.output;
  n.single_file = a.enhance && n.out.has_extension() && !fs::is_directory(n.out, ec);
  n.pattern = a.filename;
  if (n.single_file) {
    if (!a.filename.empty())
      throw std::invalid_argument(fmt::format("--filename needs -o FOLDER; -o '{}' names a file", a.output));
    if (input_count != 1)
      throw std::invalid_argument(fmt::format(
          "-o '{}' names one file but {} inputs were given: give -o FOLDER", a.output, input_count));
    n.format = output_format(a, n.out, fmt::format("-o '{}'", a.output));
  } else {
    if (n.pattern.empty()) n.pattern = a.enhance ? "{track}.{ext}" : "{track}/{stem}.{ext}";
    check_filename_template(n.pattern);
    const fs::path sample =
        expand_filename(n.pattern, {"x.wav", "x", "", "wav"}, "stem", a.flac ? "flac" : "wav");
    n.format = output_format(a, sample, fmt::format("--filename '{}'", n.pattern));
  }
  return n;
}

// Every input's output files, one per name (stem), in the naming's format.
std::vector<std::vector<fs::path>> output_paths(const OutputNaming& n, const std::vector<AudioInput>& inputs,
                                                const std::vector<std::string>& names) {
  const std::string extension = audio::container_extension(n.format.container);
  std::vector<std::vector<fs::path>> outputs;
  for (const auto& input : inputs) {
    std::vector<fs::path> files;
    for (const auto& name : names)
      files.push_back(n.single_file ? n.out : n.out / expand_filename(n.pattern, input, name, extension));
    // One format for the run: a template whose extension varies per input ({input_ext}) is refused.
    for (const auto& file : files)
      if (audio::container_for_path(file) != n.format.container)
        throw std::invalid_argument(
            fmt::format("--filename '{}' gives '{}', not a .{} file: give every output "
                        "the same extension",
                        n.pattern, file.string(), extension));
    outputs.push_back(files);
  }
  return outputs;
}

// Every input's header, before the model: unreadable files fail here (a single one stops the
// command; of several, each is reported and added to `failures`), truncated and empty ones are warned
// about. Returns the headers, empty for the inputs that failed.
std::vector<std::optional<audio::AudioInfo>> probe_inputs(const std::vector<AudioInput>& inputs,
                                                          std::vector<Failure>& failures) {
  std::vector<std::optional<audio::AudioInfo>> infos(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    try {
      infos[i] = audio::probe_audio(inputs[i].path);
    } catch (const audio::AudioError& e) {
      if (inputs.size() == 1) throw;
      fmt::print(stderr, "onda: error: {}\n", e.what());
      failures.push_back({inputs[i].path.string(), e.what()});
      continue;
    }
    const std::string name = inputs[i].path.string();
    if (!infos[i]->truncation.empty())
      warn(fmt::format("'{}' looks truncated: {}; reading the {} frames there", name, infos[i]->truncation,
                       infos[i]->frames));
    if (infos[i]->frames == 0)
      warn(fmt::format("'{}' holds no audio (0 frames): its outputs will be empty", name));
  }
  return infos;
}

// Several inputs: how many were done, how fast, and which failed.
void print_summary(size_t input_count, size_t done, double audio_seconds,
                   std::chrono::steady_clock::time_point start, const std::vector<Failure>& failures) {
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("{} of {} files done: {} s of audio in {} s ({}x real time)", done, input_count,
             three_digits(audio_seconds), three_digits(wall),
             three_digits(wall > 0 ? audio_seconds / wall : 0.0));
  fmt::print("{}\n", failures.empty() ? "" : fmt::format("; {} failed", failures.size()));
  for (const auto& f : failures) fmt::print(stderr, "  failed: {}: {}\n", f.input, f.reason);
}

void run_audio(const AudioArguments& a) {
  check_ranges(a);
  const std::vector<AudioInput> inputs = expand_inputs(a.inputs);
  const OutputNaming naming = output_naming(a, inputs.size());
  audio::SeparateOptions options = separate_options(a, naming.format);

  // The description (no GPU yet) gives the stems, hence every output path, all checked now.
  const audio::ModelDescription description = audio::load_separate_description(options);
  const std::vector<std::vector<fs::path>> outputs =
      output_paths(naming, inputs, output_names(a, description));
  check_outputs(inputs, outputs, a.overwrite);
  std::vector<Failure> failures;
  const std::vector<std::optional<audio::AudioInfo>> infos = probe_inputs(inputs, failures);

  if (failures.size() == inputs.size()) throw ExitStatus{1};  // each reported above; no model to open
  // Opens the model: unsupported ops, device limits fail here.
  std::unique_ptr<audio::Separator> separator;
  std::unique_ptr<audio::StreamEnhancer> streamer;
  if (a.stream) {
    streamer = std::make_unique<audio::StreamEnhancer>(
        audio::StreamEnhanceOptions{options.model, options.description, options.session, options.format});
  } else {
    separator = std::make_unique<audio::Separator>(options);
  }
  // From here on a signal stops at the next segment (before, nothing is written and the default
  // action, an immediate exit, is what a user pressing Ctrl-C during a long model load wants).
  install_interrupt_handlers();
  if (separator && a.batch > 1 && separator->fixed_batch() && separator->max_batch() != a.batch)
    warn(fmt::format("--batch {} ignored: the model's batch dimension is fixed at {}", a.batch,
                     separator->max_batch()));
  else if (separator && a.batch > separator->max_batch())
    warn(fmt::format("--batch {}: the model takes at most {} segments per call; using {}", a.batch,
                     separator->max_batch(), separator->max_batch()));

  const bool tty = !a.quiet && ::isatty(STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  double audio_seconds = 0;
  size_t done = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!infos[i]) continue;
    stop_if_interrupted();
    const std::string name = inputs[i].path.string();
    audio::SeparateTimings timings;
    try {
      OutputFolders folders(outputs[i]);
      {
        ProgressLine progress(inputs[i].path.filename().string(), infos[i]->seconds(), tty);
        const audio::SegmentProgress update = [&](int64_t segments, int64_t total) {
          stop_if_interrupted();
          progress.update(segments, total);
        };
        if (streamer)
          streamer->write_files(inputs[i].path, outputs[i], &timings, update);
        else
          separator->write_files(inputs[i].path, outputs[i], &timings, update);
      }
      folders.keep();
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception& e) {
      if (inputs.size() == 1) throw;
      fmt::print(stderr, "onda: error: {}: {}\n", name, e.what());
      failures.push_back({name, e.what()});
      continue;
    }
    ++done;
    audio_seconds += timings.audio_seconds;
    if (!a.quiet)
      for (const auto& path : outputs[i]) fmt::print("wrote {}\n", path.string());
    if (a.timings) print_timings(name, timings);
  }

  if (inputs.size() > 1) print_summary(inputs.size(), done, audio_seconds, start, failures);
  if (!failures.empty()) throw ExitStatus{1};
}

void add_common_options(CLI::App* command, AudioArguments& a) {
  command->add_option("-m,--model", a.model, "The .onnx model (its description: MODEL.onda.json or metadata)")
      ->required();
  command->add_option(
      "--description", a.description,
      "The model description JSON (instead of the sidecar; tools/descriptions/ has the reference "
      "models')");
  command->add_option("--filename", a.filename,
                      "Output names below -o: {track} {stem} {ext} {folder} {input_ext} (default: " +
                          std::string(a.enhance ? "{track}.{ext}" : "{track}/{stem}.{ext}") +
                          "); the extension picks WAV, FLAC, OGG or MP3");
  command->add_flag("--overwrite", a.overwrite,
                    "Replace outputs that exist (default: refuse before any work)");
  command->add_flag("--flac", a.flac, "Write FLAC instead of WAV ({ext} = flac)");
  command->add_option("--segment", a.segment,
                      "Segment length in seconds (models with a dynamic length only)");
  command->add_option(
      "--overlap", a.overlap,
      "Overlap between segments, fraction of a segment in [0, 1) (default: the description's, else 0.25)");
  command->add_option("--batch", a.batch, "Segments per model call, 1-64 (models with a dynamic batch dim)")
      ->capture_default_str();
  command->add_option("--shifts", a.shifts, "Random time shifts (up to 0.5 s) to average, 0-100; 0: none")
      ->capture_default_str();
  command->add_option("--seed", a.seed, "Seed of the shift offsets")->capture_default_str();
  command->add_flag("--float32", a.float32, "Write 32-bit float samples (WAV)");
  command->add_flag("--int24", a.int24, "Write 24-bit integer samples (WAV, FLAC)");
  command->add_option("--adapter", a.adapter, "Adapter index or name substring");
  command->add_flag("--timings", a.timings, "Print where the time went");
  command->add_flag("-q,--quiet", a.quiet, "No progress line and no 'wrote' lines");
}

}  // namespace

void add_separate_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "separate", "Split audio files and folders into stems: OUT/<track>/<stem>.wav (--filename to change)");
  auto a = std::make_shared<AudioArguments>();
  a->output = "separated";
  command
      ->add_option("inputs", a->inputs,
                   "Audio files and folders (searched recursively): WAV, FLAC, OGG, MP3, ...")
      ->required();
  command->add_option("-o,--out", a->output, "Output folder")->capture_default_str();
  command->add_option("--two-stems", a->two_stems,
                      "Write only NAME and no_NAME (the sum of the other stems)");
  add_common_options(command, *a);
  command->callback([a] { run_audio(*a); });
}

void add_enhance_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "enhance",
      "Clean recordings with a one-output model (speech enhancement): a file, or files and folders");
  auto a = std::make_shared<AudioArguments>();
  a->enhance = true;
  command->add_option("inputs", a->inputs, "Audio files and folders (searched recursively)")->required();
  command
      ->add_option("-o,--out", a->output,
                   "The output file (one input; .wav, .flac, .ogg or .mp3 picks the format) or folder")
      ->required();
  command->add_flag("--stream", a->stream,
                    "Run a streaming model frame by frame, its states fed back on the GPU (docs/audio.md)");
  add_common_options(command, *a);
  command->callback([a] { run_audio(*a); });
}

}  // namespace onda::cli
