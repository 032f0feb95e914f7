// Element types of onda tensors and their size in host memory (the ONNX / numpy layout).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace onda {

enum class DType : uint8_t { f32, f16, i32, i64, u8, boolean };

// Bytes per element in host memory (the ONNX / numpy layout).
constexpr size_t host_element_size(DType t) {
  switch (t) {
    case DType::f32:
      return 4;
    case DType::f16:
      return 2;
    case DType::i32:
      return 4;
    case DType::i64:
      return 8;
    case DType::u8:
      return 1;
    case DType::boolean:
      return 1;
  }
  return 0;
}

constexpr bool is_float(DType t) {
  return t == DType::f32 || t == DType::f16;
}

// numpy's names: "float32", "float16", "int32", "int64", "uint8", "bool".
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "float32";
    case DType::f16:
      return "float16";
    case DType::i32:
      return "int32";
    case DType::i64:
      return "int64";
    case DType::u8:
      return "uint8";
    case DType::boolean:
      return "bool";
  }
  return "?";
}

}  // namespace onda
