// `onda inspect model.onnx [--json]`: what a model holds and whether onda runs it, without a GPU or
// its weights (onda/model_summary.h), plus its audio description if it has one.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "onda/audio.h"
#include "onda/model_summary.h"

namespace onda::cli {
namespace {

std::string domain_name(const std::string& domain) {
  return domain.empty() ? "ai.onnx" : domain;
}

// "Conv" for ai.onnx, "com.example::Sharpen" for others.
std::string op_name(const OpCount& op) {
  return op.domain.empty() ? op.op_type : op.domain + "::" + op.op_type;
}

std::string shape_text(const ValueSummary& v) {
  if (!v.has_shape) return "(shape not declared)";
  std::string text;
  for (const auto& d : v.shape) text += (text.empty() ? "" : ", ") + d;
  return "[" + text + "]";
}

std::string bytes_text(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  if (bytes >= (uint64_t{1} << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / (1 << 10));
  return fmt::format("{} B", bytes);
}

// The description as onda separate would find it; "" and the reason when there is none.
std::optional<audio::ModelDescription> find_description(const std::string& model, const std::string& file,
                                                        std::string& problem) {
  audio::SeparateOptions options;
  options.model = model;
  if (!file.empty()) options.description = file;
  try {
    return audio::load_separate_description(options);
  } catch (const audio::DescriptionError& e) {
    if (!file.empty()) throw;  // asked for: its problems are errors
    problem =
        "none next to the model or in its metadata; --description FILE names one (onda's source has the "
        "reference models' in tools/descriptions/)";
    return std::nullopt;
  }
}

// WebGPU has no f64 and no 8/16-bit integers: such a value is computed and returned in a wider type.
std::string carried_text(const ValueSummary& v) {
  return v.carried_as.empty() ? "" : fmt::format("  (computed and returned as {})", v.carried_as);
}

nlohmann::json value_json(const ValueSummary& v) {
  nlohmann::json j = {{"name", v.name}, {"dtype", v.dtype}};
  if (!v.carried_as.empty()) j["carried_as"] = v.carried_as;
  j["shape"] = v.has_shape ? nlohmann::json(v.shape) : nlohmann::json(nullptr);
  return j;
}

void print_json(const std::string& model, const std::string& description, const ModelSummary& s) {
  nlohmann::json j;
  j["model"] = model;
  j["ir_version"] = s.ir_version;
  j["producer"] = {{"name", s.producer_name}, {"version", s.producer_version}};
  j["opsets"] = nlohmann::json::object();
  for (const auto& [domain, version] : s.opsets) j["opsets"][domain_name(domain)] = version;
  j["inputs"] = nlohmann::json::array();
  for (const auto& v : s.inputs) j["inputs"].push_back(value_json(v));
  j["outputs"] = nlohmann::json::array();
  for (const auto& v : s.outputs) j["outputs"].push_back(value_json(v));
  j["nodes"] = s.nodes;
  j["ops"] = nlohmann::json::array();
  j["unsupported_ops"] = nlohmann::json::array();
  for (const auto& op : s.ops) {
    j["ops"].push_back({{"domain", domain_name(op.domain)},
                        {"op_type", op.op_type},
                        {"count", op.count},
                        {"supported", op.supported}});
    if (!op.supported) j["unsupported_ops"].push_back(op_name(op));
  }
  j["initializers"] = s.initializers;
  j["initializer_bytes"] = s.initializer_bytes;
  j["external_data"] = nlohmann::json::array();
  for (const auto& f : s.external_data)
    j["external_data"].push_back(
        {{"location", f.location}, {"bytes", f.bytes}, {"tensors", f.tensors}, {"present", f.present}});
  j["metadata"] = s.metadata;
  std::string problem;
  if (auto d = find_description(model, description, problem)) {
    j["description"] = {{"sample_rate", d->sample_rate},
                        {"channels", d->channels},
                        {"segment", d->segment},
                        {"overlap", d->overlap},
                        {"stems", d->stems},
                        {"kind", d->kind == audio::ProcessingKind::spectrogram ? "spectrogram" : "waveform"}};
  } else {
    j["description"] = nullptr;
  }
  fmt::print("{}\n", j.dump(2));
}

void print_text(const std::string& model, const std::string& description, const ModelSummary& s) {
  fmt::print("model:     {}\n", model);
  std::string opsets;
  for (const auto& [domain, version] : s.opsets)
    opsets += fmt::format("{}{} {}", opsets.empty() ? "" : ", ", domain_name(domain), version);
  fmt::print("format:    IR {}, opsets {}\n", s.ir_version, opsets.empty() ? "(none)" : opsets);
  if (!s.producer_name.empty())
    fmt::print("producer:  {}{}\n", s.producer_name,
               s.producer_version.empty() ? "" : " " + s.producer_version);
  fmt::print("inputs:\n");
  for (const auto& v : s.inputs)
    fmt::print("  {:<24} {:<8} {}{}\n", v.name, v.dtype, shape_text(v), carried_text(v));
  fmt::print("outputs:\n");
  for (const auto& v : s.outputs)
    fmt::print("  {:<24} {:<8} {}{}\n", v.name, v.dtype, shape_text(v), carried_text(v));
  size_t unsupported = 0;
  for (const auto& op : s.ops) unsupported += !op.supported;
  fmt::print("ops:       {} nodes, {} op types{}\n", s.nodes, s.ops.size(),
             unsupported ? fmt::format(", {} NOT supported by onda", unsupported) : "");
  for (const auto& op : s.ops) {
    const std::string name = op_name(op);
    fmt::print("  {:<28} {:>6}{}\n", name, op.count, op.supported ? "" : "  UNSUPPORTED");
  }
  fmt::print("weights:   {} initializers, {} in the file\n", s.initializers, bytes_text(s.initializer_bytes));
  for (const auto& f : s.external_data)
    fmt::print("  external data '{}': {} tensors, {}{}\n", f.location, f.tensors, bytes_text(f.bytes),
               f.present ? "" : " (MISSING next to the model)");
  for (const auto& [key, value] : s.metadata)
    fmt::print("metadata:  {} = {}\n", key, value.size() > 60 ? value.substr(0, 57) + "..." : value);
  std::string problem;
  if (auto d = find_description(model, description, problem)) {
    std::string stems;
    for (const auto& stem : d->stems) stems += (stems.empty() ? "" : ", ") + stem;
    fmt::print("audio:     {} Hz, {} channel(s), segment {}, overlap {}, {} model, stems: {}\n",
               d->sample_rate, d->channels,
               d->segment ? std::to_string(d->segment) + " samples" : "from the model", d->overlap,
               d->kind == audio::ProcessingKind::spectrogram ? "spectrogram" : "waveform", stems);
  } else {
    fmt::print("audio:     no description: {}\n", problem);
  }
  if (unsupported) {
    std::string names;
    for (const auto& op : s.ops)
      if (!op.supported) names += (names.empty() ? "" : ", ") + op_name(op);
    fmt::print("onda cannot run this model yet: unsupported {} (see 'onda ops')\n", names);
  }
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "inspect",
      "Show a model's inputs, outputs, opsets, ops (unsupported ones marked) and audio description");
  auto model = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto description = std::make_shared<std::string>();
  command->add_option("model", *model, "The .onnx file (weights not needed)")->required();
  command->add_option("--description", *description,
                      "Its model description JSON (default: the sidecar or metadata)");
  command->add_flag("--json", *json, "Print JSON instead");
  command->callback([model, json, description] {
    const ModelSummary s = summarize_model(*model);
    if (*json) {
      print_json(*model, *description, s);
    } else {
      print_text(*model, *description, s);
    }
  });
}

}  // namespace onda::cli
