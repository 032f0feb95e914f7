// What the command-line tests (tests/cli/*.sh) need and a fresh clone has: tiny ONNX models with
// model descriptions, test tones, and a look at the files onda wrote.
//
//   onda_cli_fixtures models DIR                       gain.onnx, split.onnx, unsupported.onnx, stream.onnx
//                                                      (+ .onda.json)
//   onda_cli_fixtures tone FILE SECONDS RATE CHANNELS  a 440 Hz tone, format by FILE's extension
//   onda_cli_fixtures probe FILE                       "<format> <channels> <rate> <frames>" as libsndfile
//   reads it
//   onda_cli_fixtures comb IN OUT DELAY                the largest |OUT - (IN + IN delayed)/2|: what
//   stream.onnx's frames give in a host loop
#include <onnx/onnx_pb.h>
#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "onda/audio.h"

namespace {

namespace fs = std::filesystem;

void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
               const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* value = list->Add();
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::NodeProto* add_node(onnx::GraphProto* graph, const std::string& op, std::vector<std::string> inputs,
                          std::vector<std::string> outputs) {
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(op + "_" + std::to_string(graph->node_size()));
  for (const auto& input : inputs) node->add_input(input);
  for (const auto& output : outputs) node->add_output(output);
  return node;
}

void add_scalar(onnx::GraphProto* graph, const std::string& name, float value) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_float_data(value);
}

void add_axes(onnx::GraphProto* graph, const std::string& name, int64_t axis) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_dims(1);
  tensor->add_int64_data(axis);
}

onnx::ModelProto new_model() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("onda_cli_fixtures");
  model.add_opset_import()->set_version(17);
  model.mutable_graph()->set_name("cli");
  return model;
}

void save(const onnx::ModelProto& model, const fs::path& path, const std::string& description) {
  std::ofstream file(path, std::ios::binary);
  model.SerializeToOstream(&file);
  std::ofstream json(fs::path(path).replace_extension(".onda.json"));
  json << description;
}

// mix [1, channels, samples] -> gain * mix as one stem per gain: [1, stems, channels, samples].
onnx::ModelProto gains_model(int channels, int64_t samples, const std::vector<float>& gains) {
  onnx::ModelProto model = new_model();
  auto* g = model.mutable_graph();
  add_value(g->mutable_input(), "mix", {1, channels, samples});
  add_axes(g, "stem_axis", 1);
  std::vector<std::string> stems;
  for (size_t s = 0; s < gains.size(); ++s) {
    const std::string n = std::to_string(s);
    add_scalar(g, "gain" + n, gains[s]);
    add_node(g, "Mul", {"mix", "gain" + n}, {"scaled" + n});
    add_node(g, "Unsqueeze", {"scaled" + n, "stem_axis"}, {"stem" + n});
    stems.push_back("stem" + n);
  }
  if (stems.size() == 1) {
    g->mutable_node(g->node_size() - 1)->set_output(0, "stems");
  } else {
    auto* concat = add_node(g, "Concat", stems, {"stems"});
    auto* axis = concat->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(1);
  }
  add_value(g->mutable_output(), "stems", {1, static_cast<int64_t>(gains.size()), channels, samples});
  return model;
}

// A streaming comb filter, one frame of `frame` samples per run: y = (frame + cache_in) / 2 and
// cache_out = frame, so the output is y[t] = (x[t] + x[t - frame]) / 2 over the whole stream.
onnx::ModelProto stream_model(int64_t frame) {
  onnx::ModelProto model = new_model();
  auto* g = model.mutable_graph();
  add_value(g->mutable_input(), "frame", {1, 1, frame});
  add_value(g->mutable_input(), "cache_in", {1, 1, frame});
  add_scalar(g, "half", 0.5f);
  add_node(g, "Add", {"frame", "cache_in"}, {"sum"});
  add_node(g, "Mul", {"sum", "half"}, {"clean"});
  add_node(g, "Identity", {"frame"}, {"cache_out"});
  add_value(g->mutable_output(), "clean", {1, 1, frame});
  add_value(g->mutable_output(), "cache_out", {1, 1, frame});
  return model;
}

void write_models(const fs::path& dir) {
  fs::create_directories(dir);
  // Enhancement: mono 16 kHz, 0.1 s segments, one stem.
  save(gains_model(1, 1600, {0.5f}), dir / "gain.onnx",
       R"({"sample_rate": 16000, "channels": 1, "stems": ["clean"]})");
  // Separation: stereo 8 kHz, 0.4 s segments, two stems, a static batch of 1.
  save(gains_model(2, 3200, {0.25f, 0.75f}), dir / "split.onnx",
       R"({"sample_rate": 8000, "channels": 2, "stems": ["low", "high"]})");
  // An op onda does not have, in a domain of its own.
  onnx::ModelProto model = gains_model(1, 1600, {0.5f});
  auto* opset = model.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  auto* node = model.mutable_graph()->mutable_node(0);
  node->set_op_type("Sharpen");
  node->set_domain("com.example");
  save(model, dir / "unsupported.onnx", R"({"sample_rate": 16000, "channels": 1, "stems": ["clean"]})");
  // Streaming: mono 16 kHz, 10 ms frames, the state pair named in the description.
  save(stream_model(160), dir / "stream.onnx",
       R"({"sample_rate": 16000, "channels": 1, "stems": ["clean"], "input": "frame", "output": "clean",
           "state": {"cache_out": "cache_in"}})");
}

int write_tone(const fs::path& path, double seconds, int rate, int channels) {
  const auto frames = static_cast<int64_t>(seconds * rate);
  onda::audio::AudioBuffer audio(rate, channels, frames);
  for (int c = 0; c < channels; ++c)
    for (int64_t t = 0; t < frames; ++t)
      audio.channel(c)[t] = 0.5f * static_cast<float>(std::sin(2 * M_PI * 440.0 * (t + 7 * c) / rate));
  onda::audio::AudioFormat format;
  format.container = onda::audio::container_for_path(path);
  onda::audio::write_audio(path, audio, format);
  return 0;
}

int probe(const fs::path& path) {
  SF_INFO info{};
  SNDFILE* file = sf_open(path.c_str(), SFM_READ, &info);
  if (!file) {
    std::fprintf(stderr, "cannot read %s: %s\n", path.c_str(), sf_strerror(nullptr));
    return 1;
  }
  SF_FORMAT_INFO format{};
  format.format = info.format & SF_FORMAT_TYPEMASK;
  sf_command(file, SFC_GET_FORMAT_INFO, &format, sizeof format);
  std::string name = format.name ? format.name : "?";
  name = name.substr(0, name.find(' '));
  std::vector<float> block(4096 * static_cast<size_t>(info.channels));
  float peak = 0;
  for (sf_count_t got; (got = sf_readf_float(file, block.data(), 4096)) > 0;)
    for (sf_count_t i = 0; i < got * info.channels; ++i) peak = std::max(peak, std::fabs(block[i]));
  std::printf("%s %d %d %lld %.4f\n", name.c_str(), info.channels, info.samplerate,
              static_cast<long long>(info.frames), static_cast<double>(peak));
  sf_close(file);
  return 0;
}

int comb(const fs::path& in, const fs::path& out, int64_t delay) {
  const onda::audio::AudioBuffer x = onda::audio::read_audio(in), y = onda::audio::read_audio(out);
  if (x.channels != 1 || y.channels != 1 || x.frames != y.frames) {
    std::fprintf(stderr, "comb: %d x %lld in, %d x %lld out\n", x.channels, static_cast<long long>(x.frames),
                 y.channels, static_cast<long long>(y.frames));
    return 1;
  }
  double worst = 0;
  for (int64_t t = 0; t < x.frames; ++t) {
    const double expected =
        0.5 * (static_cast<double>(x.samples[t]) + (t >= delay ? x.samples[t - delay] : 0.0));
    worst = std::max(worst, std::fabs(y.samples[t] - expected));
  }
  std::printf("%.3g\n", worst);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  try {
    if (command == "models" && argc == 3) {
      write_models(argv[2]);
      return 0;
    }
    if (command == "tone" && argc == 6)
      return write_tone(argv[2], std::stod(argv[3]), std::stoi(argv[4]), std::stoi(argv[5]));
    if (command == "probe" && argc == 3) return probe(argv[2]);
    if (command == "comb" && argc == 5) return comb(argv[2], argv[3], std::stoll(argv[4]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onda_cli_fixtures: %s\n", e.what());
    return 1;
  }
  std::fprintf(
      stderr,
      "usage: onda_cli_fixtures models DIR | tone FILE SECONDS RATE CHANNELS | probe FILE | comb IN OUT "
      "DELAY\n");
  return 2;
}
