#include "graph/onnx_data_type.h"

#include <string>

namespace onda {

std::optional<DType> dtype_from_onnx(int64_t onnx_data_type) {
  switch (onnx_data_type) {
    case 1:
      return DType::f32;
    case 2:
      return DType::u8;
    case 6:
      return DType::i32;
    case 7:
      return DType::i64;
    case 9:
      return DType::boolean;
    case 10:
      return DType::f16;
    case onnx_type::kDouble:
      return DType::f32;
    case onnx_type::kInt8:
    case onnx_type::kInt16:
    case onnx_type::kUint16:
      return DType::i32;
    case onnx_type::kUint32:
    case onnx_type::kUint64:
      return DType::i64;
    default:
      return std::nullopt;
  }
}

bool is_carried_onnx_type(int64_t onnx_data_type) {
  return onnx_data_type == onnx_type::kDouble || carried_integer_width(onnx_data_type).has_value();
}

std::optional<IntegerWidth> carried_integer_width(int64_t onnx_data_type) {
  switch (onnx_data_type) {
    case onnx_type::kInt8:
      return IntegerWidth{8, true};
    case onnx_type::kInt16:
      return IntegerWidth{16, true};
    case onnx_type::kUint16:
      return IntegerWidth{16, false};
    case onnx_type::kUint32:
      return IntegerWidth{32, false};
    case onnx_type::kUint64:
      return IntegerWidth{64, false};
    default:
      return std::nullopt;
  }
}

int32_t onnx_data_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return 1;
    case DType::u8:
      return 2;
    case DType::i32:
      return 6;
    case DType::i64:
      return 7;
    case DType::boolean:
      return 9;
    case DType::f16:
      return 10;
  }
  return 0;
}

std::string onnx_data_type_name(int64_t onnx_data_type) {
  static constexpr const char* kNames[] = {
      "UNDEFINED",      "FLOAT",      "UINT8",          "INT8",       "UINT16",   "INT16",
      "INT32",          "INT64",      "STRING",         "BOOL",       "FLOAT16",  "DOUBLE",
      "UINT32",         "UINT64",     "COMPLEX64",      "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN",
      "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",      "INT4"};
  if (onnx_data_type >= 0 && onnx_data_type < static_cast<int64_t>(std::size(kNames)))
    return kNames[onnx_data_type];
  return "UNKNOWN(" + std::to_string(onnx_data_type) + ")";
}

}  // namespace onda
