// ONNX external data (https://onnx.ai/onnx/repo-docs/ExternalData.html): a tensor's bytes live in a
// file beside the model, at `location` (relative to the model's folder), from `offset` for `length`
// bytes. Files are memory-mapped once per load and shared by the tensors that point into them, so
// loading a 240 MB weights file copies nothing until the runtime uploads it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/host_tensor.h"

namespace onda::onnx_format {

// The file a `location` names, inside `model_dir`. Rejects (ModelError) an empty or absolute
// location and one that leaves the folder through '..', as ONNX Runtime does, so a model cannot
// read arbitrary files of the machine it runs on.
std::filesystem::path resolve_external_location(const std::filesystem::path& model_dir,
                                                const std::string& location);

class ExternalDataFiles {
 public:
  using Resolver = std::function<std::vector<std::byte>(const std::string& location)>;
  // Files in `model_dir`, or (when set) the bytes `resolver` gives for a location. With neither (an
  // empty folder and no resolver) every external tensor is a ModelError.
  explicit ExternalDataFiles(std::filesystem::path model_dir, Resolver resolver = nullptr)
      : model_dir_(std::move(model_dir)), resolver_(std::move(resolver)) {}

  // The bytes of one tensor; `length` defaults to the rest of the file and must equal the tensor's
  // size. ModelError (naming the tensor and the file) for a missing file or a range past its end.
  HostTensor read(const std::string& tensor_name, DType dtype, Shape shape, const std::string& location,
                  uint64_t offset, std::optional<uint64_t> length);

 private:
  struct MappedFile;
  std::shared_ptr<const MappedFile> map_file(const std::string& tensor_name, const std::string& location);

  std::shared_ptr<const MappedFile> resolve(const std::string& tensor_name, const std::string& location);

  std::filesystem::path model_dir_;
  Resolver resolver_;
  std::map<std::filesystem::path, std::shared_ptr<const MappedFile>> files_;
};

}  // namespace onda::onnx_format
