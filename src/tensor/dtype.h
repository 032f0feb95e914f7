// Element types of tensors, and how each is stored on the GPU.
//
// WGSL has no 64-bit or 8-bit integers, and f16 arithmetic needs the optional shader-f16 feature.
// So on the GPU: f16 is stored as packed halves (two per 32-bit word; kernels unpack to f32, which
// works on every adapter); i64 is stored as i32 (ONNX int64 tensors in audio models are shapes and
// indices; upload rejects values out of i32 range); u8 and bool are stored as one u32 per element.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace onda {

enum class DType : uint8_t { f32, f16, i32, i64, u8, boolean };

// Bytes per element in host memory (the ONNX / numpy layout).
constexpr size_t host_element_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f16: return 2;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::u8: return 1;
    case DType::boolean: return 1;
  }
  return 0;
}

// Bytes per element in a GPU buffer.
constexpr size_t device_element_size(DType t) { return t == DType::f16 ? 2 : 4; }

constexpr bool is_float(DType t) { return t == DType::f32 || t == DType::f16; }

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::f16: return "float16";
    case DType::i32: return "int32";
    case DType::i64: return "int64";
    case DType::u8: return "uint8";
    case DType::boolean: return "bool";
  }
  return "?";
}

}  // namespace onda
