// ONNX TensorProto files (input_N.pb / output_N.pb of ONNX's backend tests and of the model zoo's
// test_data_set folders) in: the CLI's second tensor file format. Host-only code.
#pragma once
#include <filesystem>
#include <string>

#include "onda/host_tensor.h"

namespace onda {

// A serialized onnx.TensorProto. Its name, if any, goes to *name. External data is resolved
// relative to the file's folder. Throws ModelError naming the file when it cannot be read.
HostTensor read_tensor_proto_file(const std::filesystem::path& path, std::string* name = nullptr);

}  // namespace onda
