// Loading ONNX model files (and TensorProto .pb files) into the graph IR.
//
// What the loader guarantees on success: IR version and opsets recorded; every initializer (inline,
// typed fields or external data) is a HostTensor of a supported dtype; Constant nodes are
// initializers; every value with a declared type has a supported dtype; nodes are topologically
// sorted and each input is produced before use. Anything else is a ModelError naming the file and
// the problem, raised before any work on a device.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "graph/host_tensor.h"
#include "onda/tensor_proto.h"

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
  // Models from memory (Session::open_bytes): the bytes of an external-data file by its location,
  // instead of reading the folder. Unset and no folder (an empty model_dir): external data is an error.
  std::function<std::vector<std::byte>(const std::string& location)> external_data_resolver;
};

// Reads `path`; external data is resolved relative to the model's folder.
Graph load_onnx_model(const std::filesystem::path& path, const OnnxLoadOptions& options = {});
// From serialized bytes; `model_dir` is where external data lives (empty: none, unless
// options.external_data_resolver gives it), `what` names the source in messages.
Graph parse_onnx_model(std::string_view bytes, const std::filesystem::path& model_dir,
                       const std::string& what, const OnnxLoadOptions& options = {});

// read_tensor_proto_file: public, include/onda/tensor_proto.h.

}  // namespace onda
