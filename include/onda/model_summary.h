// What an ONNX model file holds, read without a GPU and without its weights: what `onda inspect`
// prints. Inputs and outputs with dtypes and shapes (symbolic dims by name), IR version, producer,
// opset imports, how often each op occurs and whether onda runs it, and the external data files.
//
//   onda::ModelSummary s = onda::summarize_model("model.onnx");
//   for (const auto& op : s.ops) if (!op.supported) ...
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace onda {

struct ValueSummary {
  std::string name;
  std::string dtype;               // ONNX's name: "FLOAT", "INT64", ... ("" when undeclared)
  std::string carried_as;          // "float32" for DOUBLE, "int32" for INT8, ...: the wider type onda
                                   // computes it in and returns it as ("" when the type is its own)
  std::vector<std::string> shape;  // each dim: its size, its symbolic name, or "?"; empty: a scalar
  bool has_shape = false;          // false: the model declares no shape at all
};

struct OpCount {
  std::string domain;  // "" = ai.onnx
  std::string op_type;
  int64_t count = 0;       // nodes, subgraphs (If / Loop / Scan bodies) and model-local functions included
  bool supported = false;  // onda runs it at the model's opset for its domain (or a local function)
};

struct ExternalDataFile {
  std::string location;  // relative to the model's folder, as the model writes it
  uint64_t bytes = 0;    // referenced by the model's tensors (the sum of their lengths, when given)
  int64_t tensors = 0;
  bool present = false;  // the file exists next to the model
};

struct ModelSummary {
  int64_t ir_version = 0;
  std::string producer_name, producer_version, domain, doc_string;
  int64_t model_version = 0;
  std::map<std::string, int64_t> opsets;  // domain ("" = ai.onnx) -> version
  std::vector<ValueSummary> inputs;       // graph inputs that are not initializers
  std::vector<ValueSummary> outputs;
  std::vector<OpCount> ops;  // most frequent first, then by name
  int64_t nodes = 0;
  int64_t initializers = 0;
  uint64_t initializer_bytes =
      0;  // initializer bytes in the file itself (raw, or the typed fields' encoding)
  std::vector<ExternalDataFile> external_data;
  std::map<std::string, std::string> metadata;  // metadata_props
};

// Throws onda::ModelError for a file that is missing or not an ONNX model.
ModelSummary summarize_model(const std::filesystem::path& model);

}  // namespace onda
