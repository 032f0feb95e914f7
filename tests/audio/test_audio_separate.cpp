// The separate pipeline through onda's Session on small ONNX models built here whose behaviour is
// known exactly (stem s = gain_s * mix; a spectrogram model that scales the compressed magnitude
// and turns the phase): the reconstructed stems must match to 1e-5 for audio shorter than, equal
// to and much longer than one segment, with and without shifts, through the library and through
// the `onda separate` / `onda enhance` command line; plus clear errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "audio/model_runner.h"
#include "audio/segmenter.h"
#include "audio/spectral_graphs.h"
#include "harness.h"
#include "onda/audio_resample.h"
#include "onda/audio_separate.h"
#include "test_onnx_support.h"
#include "test_paths.h"

namespace onda::test {
namespace {

namespace fs = std::filesystem;
using audio::AudioBuffer;

const int kSeparateRate = 8000;
const int64_t kSeparateSegment = 2000;
const std::vector<double> kGains = {1.0, -0.5, 0.25};
const std::vector<std::string> kStems = {"drums", "bass", "vocals"};

void add_floats(onnx::GraphProto* graph, const std::string& name, const std::vector<int64_t>& dims,
                const std::vector<double>& v) {
  auto* t = graph->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (double x : v) t->add_float_data(static_cast<float>(x));
}

void add_ints(onnx::GraphProto* graph, const std::string& name, const std::vector<int64_t>& v) {
  auto* t = graph->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
}

// mix [batch, channels, kSeparateSegment] -> sources [batch, 3, channels, kSeparateSegment] = gain_s * mix.
// batch < 0: a dynamic batch dim.
fs::path write_gain_model(const fs::path& folder, int64_t batch, int64_t channels,
                          const std::string& name = "gains", const std::string& metadata = "") {
  onnx::ModelProto model = empty_model();
  if (!metadata.empty()) {
    auto* entry = model.add_metadata_props();
    entry->set_key("onda");
    entry->set_value(metadata);
  }
  auto* graph = model.mutable_graph();
  auto* input =
      add_tensor_value(graph->mutable_input(), "mix", onnx::TensorProto::FLOAT, {batch, channels, kSeparateSegment});
  if (batch < 0)
    input->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  auto* output = graph->add_output();
  output->set_name("sources");
  output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  add_ints(graph, "axis1", {1});
  add_floats(graph, "gains", {1, 3, 1, 1}, kGains);
  add_node(graph, "Unsqueeze", {"mix", "axis1"}, {"mix4"});
  add_node(graph, "Mul", {"mix4", "gains"}, {"sources"});
  const fs::path path = folder / (name + ".onnx");
  write_file(path, model.SerializeAsString());
  return path;
}

void write_text(const fs::path& path, const std::string& text) {
  write_file(path, text);
}

std::string gain_description(int channels, const std::string& normalize = "none") {
  return "{\"sample_rate\": 8000, \"channels\": " + std::to_string(channels) +
         ", \"stems\": [\"drums\", \"bass\", \"vocals\"], \"input\": \"mix\", \"output\": \"sources\", "
         "\"normalize\": \"" +
         normalize + "\"}";
}

// Sines in three bands, different per channel, plus a DC offset (exercises mean_std).
AudioBuffer three_tones(int rate, int channels, int64_t frames) {
  AudioBuffer a(rate, channels, frames);
  for (int c = 0; c < channels; ++c)
    for (int64_t t = 0; t < frames; ++t) {
      const double time = static_cast<double>(t) / rate;
      a.channel(c)[t] = static_cast<float>(0.4 * std::sin(2 * M_PI * 55.0 * time + c) +
                                           0.2 * std::sin(2 * M_PI * 440.0 * time) +
                                           0.1 * std::sin(2 * M_PI * 2500.0 * time + 0.3 * c) + 0.05);
    }
  return a;
}

double stem_error(const AudioBuffer& got, const AudioBuffer& mix, double gain, double offset = 0.0) {
  std::vector<double> ref(mix.samples.size());
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = gain * (mix.samples[i] - offset) + offset;
  if (got.frames != mix.frames || got.channels != mix.channels) return INFINITY;
  return rel_l2(got.samples, ref);
}

TEST(AudioSeparate, GainModelReconstructsStems) {
  TemporaryFolder folder;
  const fs::path model = write_gain_model(folder.path(), 1, 2);
  write_text(folder.path() / "gains.onda.json", gain_description(2));
  audio::SeparateOptions options;
  options.model = model;
  struct Case {
    int64_t frames;
    int shifts;
  };
  for (const Case& c :
       {Case{700, 0}, Case{kSeparateSegment, 0}, Case{30000, 0}, Case{700, 1}, Case{kSeparateSegment, 2}, Case{30000, 2}}) {
    options.segments.shifts = c.shifts;
    options.segments.seed = test_seed();
    audio::Separator separator(options);
    const AudioBuffer mix = three_tones(kSeparateRate, 2, c.frames);
    audio::SeparateTimings timings;
    const auto stems = separator.separate(mix, &timings);
    ASSERT_EQ(stems.size(), 3u);
    for (size_t s = 0; s < 3; ++s) {
      EXPECT_EQ(stems[s].name, kStems[s]);
      const double e = stem_error(stems[s].audio, mix, kGains[s]);
      EXPECT_LE(e, 1e-5) << kStems[s] << ", " << c.frames << " frames, shifts " << c.shifts;
      std::printf("%-6s %6lld frames shifts %d (%lld segments): rel L2 %.2e\n", kStems[s].c_str(),
                  static_cast<long long>(c.frames), c.shifts, static_cast<long long>(timings.segments), e);
    }
  }
}

TEST(AudioSeparate, DynamicBatchResampleNormaliseAndTwoStems) {
  TemporaryFolder folder;
  const fs::path model = write_gain_model(folder.path(), -1, 2);
  write_text(folder.path() / "gains.onda.json", gain_description(2, "mean_std"));
  audio::SeparateOptions options;
  options.model = model;
  options.segments.batch = 4;
  audio::Separator separator(options);
  // 16 kHz mono in: converted to stereo and resampled to 8 kHz before the model.
  const AudioBuffer input = three_tones(16000, 1, 24000);
  const AudioBuffer mix = audio::resample(audio::convert_channels(input, 2), kSeparateRate);
  double mean = 0;
  for (int64_t t = 0; t < mix.frames; ++t)
    mean += mix.channel(0)[t];  // mono-made-stereo: both channels equal
  mean /= static_cast<double>(mix.frames);
  audio::SeparateTimings timings;
  const auto stems = separator.separate(input, &timings);
  EXPECT_LT(timings.model_calls, timings.segments);  // batched
  for (size_t s = 0; s < 3; ++s) {
    // demucs' normalisation: model((x - m) / sd) * sd + m = g (x - m) + m
    const double e = stem_error(stems[s].audio, mix, kGains[s], mean);
    EXPECT_LE(e, 1e-5) << kStems[s];
    std::printf("batch 4, mean_std, %s: rel L2 %.2e (%lld segments in %lld calls)\n", kStems[s].c_str(), e,
                static_cast<long long>(timings.segments), static_cast<long long>(timings.model_calls));
  }
  options.two_stems = "bass";
  options.description = folder.path() / "gains.onda.json";
  audio::Separator two(options);
  const auto pair = two.separate(input);
  ASSERT_EQ(pair.size(), 2u);
  EXPECT_EQ(pair[0].name, "bass");
  EXPECT_EQ(pair[1].name, "no_bass");
  EXPECT_LE(stem_error(pair[0].audio, mix, kGains[1], mean), 1e-5);
  // no_bass = drums + vocals = (g0 + g2)(x - m) + 2m
  std::vector<double> ref(mix.samples.size());
  for (size_t i = 0; i < ref.size(); ++i)
    ref[i] = (kGains[0] + kGains[2]) * (mix.samples[i] - mean) + 2 * mean;
  EXPECT_LE(rel_l2(pair[1].audio.samples, ref), 1e-5);
}

// A static batch dim of 2: every call feeds two segments, zeros fill the last call's second.
TEST(AudioSeparate, StaticBatchOfTwoPadsTheLastCall) {
  TemporaryFolder folder;
  audio::SeparateOptions options;
  options.model = write_gain_model(folder.path(), 2, 2, "pairs", gain_description(2));
  audio::Separator separator(options);
  const AudioBuffer mix = three_tones(kSeparateRate, 2, 3500);  // 3 segments: calls of 2 and 1 (+1 zero segment)
  audio::SeparateTimings timings;
  const auto stems = separator.separate(mix, &timings);
  EXPECT_EQ(timings.segments, 3);
  EXPECT_EQ(timings.model_calls, 2);
  for (size_t s = 0; s < 3; ++s) {
    const double e = stem_error(stems[s].audio, mix, kGains[s]);
    EXPECT_LE(e, 1e-5) << kStems[s];
    std::printf("static batch 2, %s: rel L2 %.2e\n", kStems[s].c_str(), e);
  }
}

// A model that fails on its first run (its output has one stem, the description says three): the
// command fails and leaves no file behind, not even a temporary one.
TEST(AudioSeparate, FailedRunLeavesNoFiles) {
  TemporaryFolder folder;
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "mix", onnx::TensorProto::FLOAT, {1, 2, kSeparateSegment});
  auto* output = graph->add_output();
  output->set_name("sources");
  output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  add_node(graph, "Identity", {"mix"}, {"sources"});
  write_file(folder.path() / "short.onnx", model.SerializeAsString());
  write_text(folder.path() / "short.onda.json", gain_description(2));
  audio::SeparateOptions options;
  options.model = folder.path() / "short.onnx";
  audio::Separator separator(options);
  audio::write_audio(folder.path() / "song.wav", three_tones(kSeparateRate, 2, 5000), {});
  EXPECT_THROW(separator.separate_file(folder.path() / "song.wav", folder.path() / "stems"),
               std::runtime_error);
  ASSERT_TRUE(fs::is_directory(folder.path() / "stems" / "song"));
  EXPECT_TRUE(fs::is_empty(folder.path() / "stems" / "song"));
}

TEST(AudioSeparate, DescriptionFromOnnxMetadata) {
  TemporaryFolder folder;
  audio::SeparateOptions options;
  options.model = write_gain_model(folder.path(), 1, 2, "described", gain_description(2));
  audio::Separator separator(options);
  EXPECT_EQ(separator.description().stems, kStems);
  const AudioBuffer mix = three_tones(kSeparateRate, 2, 3000);
  const auto stems = separator.separate(mix);
  for (size_t s = 0; s < 3; ++s) EXPECT_LE(stem_error(stems[s].audio, mix, kGains[s]), 1e-5) << kStems[s];
  // A sidecar wins over the metadata.
  write_text(folder.path() / "described.onda.json",
             "{\"sample_rate\": 8000, \"channels\": 2, \"stems\": [\"a\", \"b\", \"c\"]}");
  EXPECT_EQ(audio::Separator(options).description().stems, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(AudioSeparate, ClearErrors) {
  TemporaryFolder folder;
  const fs::path model = write_gain_model(folder.path(), 1, 2);
  audio::SeparateOptions options;
  options.model = folder.path() / "absent.onnx";
  EXPECT_THROW(audio::Separator{options}, std::invalid_argument);
  options.model = model;
  try {  // no description
    audio::Separator separator(options);
    ADD_FAILURE() << "a model without a description was accepted";
  } catch (const audio::DescriptionError& e) {
    EXPECT_NE(std::string(e.what()).find("gains.onda.json"), std::string::npos) << e.what();
  }
  write_text(folder.path() / "gains.onda.json", gain_description(3));  // the model takes 2 channels
  EXPECT_THROW(audio::Separator{options}, audio::DescriptionError);
  write_text(folder.path() / "gains.onda.json", "{\"sample_rate\": 8000, \"channels\": 2}");  // no stems
  EXPECT_THROW(audio::Separator{options}, audio::DescriptionError);
  write_text(folder.path() / "gains.onda.json",
             "{\"sample_rate\": 8000, \"channels\": 2, \"stems\": [\"a\", \"b\", \"c\"], \"overlap\": 1.5}");
  EXPECT_THROW(audio::Separator{options}, audio::DescriptionError);
  write_text(folder.path() / "gains.onda.json", "{not json");
  EXPECT_THROW(audio::Separator{options}, audio::DescriptionError);
  write_text(folder.path() / "gains.onda.json", gain_description(2));
  options.two_stems = "piano";
  EXPECT_THROW(audio::Separator{options}, std::invalid_argument);
  options.two_stems = "";
  audio::Separator separator(options);
  {  // stereo to a 3-channel model: no conversion rule (mono repeats, more channels keep the first)
    const fs::path three = write_gain_model(folder.path(), 1, 3, "three");
    write_text(folder.path() / "three.onda.json", gain_description(3));
    audio::SeparateOptions options3;
    options3.model = three;
    audio::Separator separator3(options3);
    EXPECT_THROW(separator3.separate(three_tones(kSeparateRate, 2, 100)), audio::AudioError);
    EXPECT_EQ(separator3.separate(three_tones(kSeparateRate, 1, 100)).size(), 3u);
  }
  EXPECT_THROW(separator.separate_file(folder.path() / "missing.wav", folder.path() / "out"),
               audio::AudioError);
  EXPECT_THROW(separator.enhance_file(folder.path() / "x.wav", folder.path() / "y.wav"),
               std::invalid_argument);  // 3 stems
  if (::geteuid() != 0) {
    const fs::path locked = folder.path() / "locked";
    fs::create_directories(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    audio::write_audio(folder.path() / "mix.wav", three_tones(kSeparateRate, 2, 100), {});
    EXPECT_THROW(separator.separate_file(folder.path() / "mix.wav", locked), audio::AudioError);
    fs::permissions(locked, fs::perms::owner_all);
  }
}

// The command line end to end: files written where demucs writes them, exit status and messages.
TEST(AudioSeparate, CommandLine) {
  const fs::path onda = test_binary_dir() / "onda";
  if (!fs::exists(onda)) GTEST_SKIP() << "no onda binary at " << onda;
  TemporaryFolder folder;
  const fs::path model = write_gain_model(folder.path(), 1, 2);
  write_text(folder.path() / "gains.onda.json", gain_description(2));
  const AudioBuffer mix = three_tones(kSeparateRate, 2, 9000);
  audio::write_audio(folder.path() / "song.wav", mix,
                     {audio::Container::wav, audio::SampleEncoding::float32});
  const fs::path out = folder.path() / "stems", log = folder.path() / "log.txt";
  const std::string command = onda.string() + " separate " + (folder.path() / "song.wav").string() + " -m " +
                              model.string() + " -o " + out.string() + " --float32 --shifts 1 --timings > " +
                              log.string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << read_file_bytes(log);
  const std::string printed = read_file_bytes(log);
  EXPECT_NE(printed.find("real time"), std::string::npos) << printed;
  for (size_t s = 0; s < 3; ++s) {
    const AudioBuffer stem = audio::read_audio(out / "song" / (kStems[s] + ".wav"));
    const double e = stem_error(stem, mix, kGains[s]);
    EXPECT_LE(e, 1e-5) << kStems[s];
    std::printf("onda separate: %s.wav rel L2 %.2e\n", kStems[s].c_str(), e);
  }
  // Streamed without shifts, --two-stems, 24-bit FLAC: bass = -0.5 x, no_bass = (1 + 0.25) x.
  const std::string two = onda.string() + " separate " + (folder.path() / "song.wav").string() + " -m " +
                          model.string() + " -o " + out.string() + " --two-stems bass --flac --int24 -q > " +
                          log.string() + " 2>&1";
  ASSERT_EQ(std::system(two.c_str()), 0) << read_file_bytes(log);
  const double e_bass = stem_error(audio::read_audio(out / "song" / "bass.flac"), mix, kGains[1]);
  const double e_rest =
      stem_error(audio::read_audio(out / "song" / "no_bass.flac"), mix, kGains[0] + kGains[2]);
  EXPECT_LE(e_bass, 1e-5);  // 24-bit quantisation: about 1e-7 of full scale
  EXPECT_LE(e_rest, 1e-5);
  std::printf("onda separate --two-stems bass --flac --int24: rel L2 %.2e, %.2e\n", e_bass, e_rest);
  // Errors: non-zero exit and a message naming the problem.
  const std::string missing = onda.string() + " separate " + (folder.path() / "nothing.wav").string() +
                              " -m " + model.string() + " -o " + out.string() + " > " + log.string() +
                              " 2>&1";
  EXPECT_NE(std::system(missing.c_str()), 0);
  EXPECT_NE(read_file_bytes(log).find("nothing.wav"), std::string::npos) << read_file_bytes(log);
  fs::remove(folder.path() / "gains.onda.json");
  const std::string undescribed = onda.string() + " separate " + (folder.path() / "song.wav").string() +
                                  " -m " + model.string() + " -o " + out.string() + " > " + log.string() +
                                  " 2>&1";
  EXPECT_NE(std::system(undescribed.c_str()), 0);
  EXPECT_NE(read_file_bytes(log).find("no description"), std::string::npos) << read_file_bytes(log);
}

// A spectrogram model (MP-SENet's interface, small): compressed magnitude m and phase p in,
// m * 0.5 and p + pi out. Through STFT -> model -> iSTFT the waveform must come back as
// -(0.5^(1/compression)) x: the compression, the phase, the window envelope and the framing all count.
fs::path write_spectral_model(const fs::path& folder, int64_t bins, int64_t frames) {
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "noisy_mag", onnx::TensorProto::FLOAT, {1, bins, frames});
  add_tensor_value(graph->mutable_input(), "noisy_pha", onnx::TensorProto::FLOAT, {1, bins, frames});
  for (const char* name : {"denoised_mag", "denoised_pha"}) {
    auto* output = graph->add_output();
    output->set_name(name);
    output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  add_floats(graph, "half", {}, {0.5});
  add_floats(graph, "pi", {}, {M_PI});
  add_node(graph, "Mul", {"noisy_mag", "half"}, {"denoised_mag"});
  add_node(graph, "Add", {"noisy_pha", "pi"}, {"denoised_pha"});
  const fs::path path = folder / "spectral.onnx";
  write_file(path, model.SerializeAsString());
  write_file(folder / "spectral.onda.json",
             "{\"sample_rate\": 8000, \"channels\": 1, \"segment\": 1024, \"stems\": [\"clean\"], \"kind\": "
             "\"spectrogram\","
             " \"normalize\": \"rms\", \"spectrogram\": {\"n_fft\": 64, \"hop\": 16, \"window\": \"hann\", "
             "\"compression\": 0.3,"
             " \"magnitude_input\": \"noisy_mag\", \"phase_input\": \"noisy_pha\", \"magnitude_output\": "
             "\"denoised_mag\","
             " \"phase_output\": \"denoised_pha\"}}");
  return path;
}

TEST(AudioSeparate, SpectrogramModelThroughGpuStftAndIstft) {
  TemporaryFolder folder;
  const fs::path model = write_spectral_model(folder.path(), 33, 1024 / 16 + 1);
  audio::SeparateOptions options;
  options.model = model;
  audio::Separator separator(options);
  const double gain = -std::pow(0.5, 1.0 / 0.3);
  for (int64_t frames : {500, 1024, 5000}) {
    const AudioBuffer mix = three_tones(kSeparateRate, 1, frames);
    const auto stems = separator.separate(mix);
    ASSERT_EQ(stems.size(), 1u);
    const double e = stem_error(stems[0].audio, mix, gain);
    // float32 STFT -> pow(0.3) -> pow(1/0.3) -> iSTFT, and MP-SENet's 1e-5 offset in atan2(im, re + 1e-5)
    EXPECT_LE(e, 1e-5) << frames << " frames";
    std::printf("spectrogram model, %lld frames: rel L2 %.2e\n", static_cast<long long>(frames), e);
  }
  // onda enhance writes one file.
  const fs::path onda = test_binary_dir() / "onda";
  if (fs::exists(onda)) {
    const AudioBuffer mix = three_tones(kSeparateRate, 1, 3000);
    audio::write_audio(folder.path() / "noisy.wav", mix,
                       {audio::Container::wav, audio::SampleEncoding::float32});
    const std::string command = onda.string() + " enhance " + (folder.path() / "noisy.wav").string() +
                                " -m " + model.string() + " -o " + (folder.path() / "clean.wav").string() +
                                " --float32 -q";
    ASSERT_EQ(std::system(command.c_str()), 0);
    const double e = stem_error(audio::read_audio(folder.path() / "clean.wav"), mix, gain);
    EXPECT_LE(e, 1e-5);
    std::printf("onda enhance: rel L2 %.2e\n", e);
  }
}

// The spectral chain passes the spectrograms between its three sessions on one Device (DeviceTensors):
// its output equals the chain run through host memory bit for bit, and it writes no file (the STFT and
// iSTFT graphs are opened from memory; TMPDIR names a folder that does not exist, where the earlier
// temporary-file route failed).
TEST(AudioSeparate, SpectralChainStaysOnTheGpuAndWritesNoFiles) {
  TemporaryFolder folder, temporary;
  const fs::path model = write_spectral_model(folder.path(), 33, 1024 / 16 + 1);
  const audio::ModelDescription description = audio::load_model_description(model);
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir ? old_tmpdir : "";
  auto restore_tmpdir = [&] { old_tmpdir ? setenv("TMPDIR", saved.c_str(), 1) : unsetenv("TMPDIR"); };
  setenv("TMPDIR", (temporary.path() / "missing").c_str(), 1);
  audio::RunnerOptions options;
  std::unique_ptr<audio::SessionSegmentModel> runner;
  try {
    runner = std::make_unique<audio::SessionSegmentModel>(model, description, options);
  } catch (...) {
    restore_tmpdir();
    throw;
  }
  restore_tmpdir();
  EXPECT_TRUE(fs::is_empty(temporary.path()));

  Random r(test_seed());
  const std::vector<float> wave = r.normal(1024, 0.0, 0.3);
  const audio::SegmentOutput out = runner->run(wave, 1);
  ASSERT_EQ(out.size, wave.size());

  // The same three graphs through host memory.
  const auto& p = description.spectrogram;
  auto bytes = [](const std::string& s) {
    return std::span<const std::byte>(reinterpret_cast<const std::byte*>(s.data()), s.size());
  };
  const std::string stft_bytes = audio::stft_model_bytes(p, 1024),
                    istft_bytes = audio::istft_model_bytes(p, 1024);
  auto stft = Session::open_bytes(bytes(stft_bytes));
  auto istft = Session::open_bytes(bytes(istft_bytes));
  auto net = Session::open(model);
  const auto analysed = stft->run({{"wave", HostTensor::from_values<float>({1, 1024}, wave)}});
  const Shape spectrogram{1, 33, 1024 / 16 + 1};
  const auto separated = net->run({{"noisy_mag", analysed.at("magnitude").reshaped(spectrogram)},
                                   {"noisy_pha", analysed.at("phase").reshaped(spectrogram)}});
  const auto host_chain = istft->run({{"magnitude", separated.at("denoised_mag").reshaped(spectrogram)},
                                      {"phase", separated.at("denoised_pha").reshaped(spectrogram)}});
  const HostTensor& expected = host_chain.at("wave");
  ASSERT_EQ(static_cast<size_t>(expected.numel()), out.size);
  EXPECT_EQ(std::memcmp(expected.data(), out.data, out.size * sizeof(float)), 0);
  double sum = 0;
  for (size_t i = 0; i < out.size; ++i) sum += std::fabs(out.data[i]);
  EXPECT_GT(sum, 0.0);  // not a zero signal that would match trivially
}

}  // namespace
}  // namespace onda::test
