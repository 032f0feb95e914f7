// Loading ONNX model files (and TensorProto .pb files) into the graph IR.
//
// What the loader guarantees on success: IR version and opsets recorded; every initializer (inline,
// typed fields or external data) is a HostTensor of a supported dtype; Constant nodes are
// initializers; every value with a declared type has a supported dtype; nodes are topologically
// sorted and each input is produced before use. Anything else is a ModelError naming the file and
// the problem, raised before any work on a device.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "graph/graph.h"
#include "graph/host_tensor.h"

namespace onda {

struct OnnxLoadOptions {
  // IR 3 (ONNX 1.0) and later: every IR that has opset imports. A graph input that also has an
  // initializer (IR < 4 requires one for each) is a constant, not an input to give; a node whose domain
  // the model imports no opset for is an error (exporters of IR 3-6 left some out). ONNX's own
  // ConvTranspose node tests and PyTorch 1.x exports are IR 6.
  int64_t minimum_ir_version = 3;
  // Turn Constant nodes (default domain) into initializers.
  bool constants_to_initializers = true;
  // Where external data files are looked up instead of the model's folder (e.g. weights
  // materialized into a writable folder next to a read-only model). Locations still may not
  // leave this folder.
  std::optional<std::filesystem::path> external_data_dir;
};

// Reads `path`; external data is resolved relative to the model's folder.
Graph load_onnx_model(const std::filesystem::path& path, const OnnxLoadOptions& options = {});
// From serialized bytes; `model_dir` is where external data lives, `what` names the source in messages.
Graph parse_onnx_model(std::string_view bytes, const std::filesystem::path& model_dir,
                       const std::string& what, const OnnxLoadOptions& options = {});

// A serialized onnx.TensorProto (the conformance tests' input_N.pb / output_N.pb). Its name, if
// any, goes to *name. External data is resolved relative to the file's folder.
HostTensor read_tensor_proto_file(const std::filesystem::path& path, std::string* name = nullptr);

}  // namespace onda
