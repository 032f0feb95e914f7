// ONNX's TensorProto.DataType numbers (onnx.proto) and the engine's DType: the loader maps tensors
// with them, and ops read them from attributes such as Cast's 'to'. Plain numbers, no protobuf.
//
// Some ONNX types are carried in a wider DType (WGSL has no f64 and no 8/16-bit integers): DOUBLE
// as float32, INT8 / INT16 / UINT16 as int32, UINT32 / UINT64 as int64. Their values are converted
// where they enter (initializers, constants, input files: to the carrier; a value the carrier cannot
// hold is an error) and a float64 output is returned as float32. Computing a DOUBLE graph in float32
// gives float32 accuracy (docs/conformance.md says why that is the choice); integer results equal
// the narrow type's wherever they stay in its range, and Cast to a narrow type wraps as numpy does.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "tensor/dtype.h"

namespace onda {

namespace onnx_type {
// onnx.proto's TensorProto.DataType numbers used by name in the engine.
constexpr int64_t kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6, kInt64 = 7,
                  kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12, kUint64 = 13;
}  // namespace onnx_type

// The DType holding an ONNX data type (its carrier for the carried types above), or nullopt for
// the ones the engine does not hold (string, complex, bfloat16, float8, int4, ...).
std::optional<DType> dtype_from_onnx(int64_t onnx_data_type);
// True for the ONNX types held in a wider DType (DOUBLE, INT8, INT16, UINT16, UINT32, UINT64).
bool is_carried_onnx_type(int64_t onnx_data_type);
// For a carried integer type: its width in bits and whether it is signed (Cast wraps to it);
// nullopt for every other type.
struct IntegerWidth {
  int bits;
  bool is_signed;
};
std::optional<IntegerWidth> carried_integer_width(int64_t onnx_data_type);
// The ONNX data type number of a DType.
int32_t onnx_data_type(DType dtype);
// "FLOAT", "DOUBLE", ... as onnx.proto spells it; "UNKNOWN(<n>)" otherwise.
std::string onnx_data_type_name(int64_t onnx_data_type);

}  // namespace onda
