// ONNX's TensorProto.DataType numbers (onnx.proto) and the engine's DType: the loader maps tensors
// with them, and ops read them from attributes such as Cast's 'to'. Plain numbers, no protobuf.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "tensor/dtype.h"

namespace onda {

// The DType holding an ONNX data type, or nullopt for the ones the engine does not hold
// (double, int8, int16, uint16, uint32, uint64, string, complex, bfloat16, float8, ...).
std::optional<DType> dtype_from_onnx(int64_t onnx_data_type);
// The ONNX data type number of a DType.
int32_t onnx_data_type(DType dtype);
// "FLOAT", "DOUBLE", ... as onnx.proto spells it; "UNKNOWN(<n>)" otherwise.
std::string onnx_data_type_name(int64_t onnx_data_type);

}  // namespace onda
