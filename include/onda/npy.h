// NumPy .npy files (format versions 1.0, 2.0 and 3.0) as tensors: float32, float16, int32, int64,
// uint8 and bool, little-endian, C order. Anything else (big-endian, Fortran order, other dtypes, a
// short or overlong file) is an NpyError naming the file and the problem. Host-only code.
#pragma once
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

#include "onda/host_tensor.h"

namespace onda {

HostTensor read_npy(const std::filesystem::path& path);
void write_npy(const std::filesystem::path& path, const HostTensor& tensor);

// In memory; `what` names the source in error messages.
HostTensor parse_npy(std::span<const std::byte> bytes, const std::string& what);
std::string serialize_npy(const HostTensor& tensor);

}  // namespace onda
