#include "onnx/external_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "graph/model_error.h"

namespace onda::onnx_format {

namespace fs = std::filesystem;

fs::path resolve_external_location(const fs::path& model_dir, const std::string& location) {
  if (location.empty()) throw ModelError("external data with an empty location");
  const fs::path relative(location);
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory())
    throw ModelError("external data location '" + location +
                     "' is an absolute path; it must be relative to the model's folder");
  // Lexical check, as ONNX Runtime does: no component may climb out of the folder. Symbolic links
  // inside the folder are the user's choice and are followed.
  for (const fs::path& part : relative.lexically_normal())
    if (part == "..")
      throw ModelError("external data location '" + location + "' leaves the model's folder through '..'");
  return model_dir / relative.lexically_normal();
}

// A whole file mapped read-only, unmapped when the last tensor borrowing from it goes; or the
// bytes a resolver gave (`held`), freed then.
struct ExternalDataFiles::MappedFile {
  const std::byte* bytes = nullptr;
  uint64_t size = 0;
  fs::path path;
  std::vector<std::byte> held;

  ~MappedFile() {
    if (bytes && held.empty()) munmap(const_cast<std::byte*>(bytes), size);
  }
};

std::shared_ptr<const ExternalDataFiles::MappedFile> ExternalDataFiles::resolve(
    const std::string& tensor_name, const std::string& location) {
  const fs::path key = resolve_external_location(".", location);  // the same checks as on disk
  auto found = files_.find(key);
  if (found != files_.end()) return found->second;
  if (!resolver_)
    throw ModelError("missing external data: tensor '" + tensor_name + "' needs file '" + location +
                     "', and a model opened from memory has no folder (give an external-data resolver)");
  auto file = std::make_shared<MappedFile>();
  try {
    file->held = resolver_(location);
  } catch (const std::exception& error) {
    throw ModelError("missing external data: tensor '" + tensor_name + "' needs '" + location +
                     "', which the resolver could not give: " + error.what());
  }
  file->size = file->held.size();
  file->bytes = file->held.empty() ? nullptr : file->held.data();
  file->path = location;
  files_.emplace(key, file);
  return file;
}

std::shared_ptr<const ExternalDataFiles::MappedFile> ExternalDataFiles::map_file(
    const std::string& tensor_name, const std::string& location) {
  if (resolver_ || model_dir_.empty()) return resolve(tensor_name, location);
  const fs::path path = resolve_external_location(model_dir_, location);
  auto found = files_.find(path);
  if (found != files_.end()) return found->second;

  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) {
    const int error = errno;
    throw ModelError("missing external data: tensor '" + tensor_name + "' needs file '" + location + "' (" +
                     path.string() + "): " + std::strerror(error) +
                     (error == ENOENT ? " (materialize or copy the weights next to the model)" : ""));
  }
  struct stat info {};
  if (fstat(descriptor, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(descriptor);
    throw ModelError("external data file '" + path.string() + "' is not a regular file");
  }
  auto file = std::make_shared<MappedFile>();
  file->size = static_cast<uint64_t>(info.st_size);
  file->path = path;
  if (file->size > 0) {
    void* mapped = mmap(nullptr, file->size, PROT_READ, MAP_PRIVATE, descriptor, 0);
    if (mapped == MAP_FAILED) {
      const int error = errno;
      ::close(descriptor);
      throw ModelError("cannot map external data file '" + path.string() + "': " + std::strerror(error));
    }
    file->bytes = static_cast<const std::byte*>(mapped);
  }
  ::close(descriptor);  // the mapping stays valid
  files_.emplace(path, file);
  return file;
}

HostTensor ExternalDataFiles::read(const std::string& tensor_name, DType dtype, Shape shape,
                                   const std::string& location, uint64_t offset,
                                   std::optional<uint64_t> length) {
  std::shared_ptr<const MappedFile> file = map_file(tensor_name, location);
  if (offset > file->size)
    throw ModelError("external data of tensor '" + tensor_name + "': offset " + std::to_string(offset) +
                     " is past the end of '" + location + "' (" + std::to_string(file->size) + " bytes)");
  const uint64_t byte_count = length.value_or(file->size - offset);
  if (byte_count > file->size - offset)
    throw ModelError("external data of tensor '" + tensor_name + "': bytes [" + std::to_string(offset) +
                     ", " + std::to_string(offset + byte_count) + ") are past the end of '" + location +
                     "' (" + std::to_string(file->size) + " bytes; truncated weights file?)");
  const uint64_t expected = static_cast<uint64_t>(shape_numel(shape)) * host_element_size(dtype);
  if (byte_count != expected)
    throw ModelError("external data of tensor '" + tensor_name + "': length " + std::to_string(byte_count) +
                     " does not match its " + std::string(dtype_name(dtype)) + " shape " +
                     shape_to_string(shape) + " (" + std::to_string(expected) + " bytes)");
  const std::byte* bytes = file->bytes ? file->bytes + offset : nullptr;
  return HostTensor::borrow(dtype, std::move(shape), file, bytes, static_cast<size_t>(byte_count));
}

}  // namespace onda::onnx_format
