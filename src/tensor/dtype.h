// Element types of tensors (include/onda/dtype.h), and how each is stored on the GPU.
//
// WGSL has no 64-bit or 8-bit integers, and f16 arithmetic needs the optional shader-f16 feature.
// So on the GPU: f16 is stored as packed halves (two per 32-bit word; kernels unpack to f32, which
// works on every adapter); i64 is stored as i32 (ONNX int64 tensors in audio models are shapes and
// indices; upload rejects values out of i32 range); u8 and bool are stored as one u32 per element.
#pragma once
#include "onda/dtype.h"

namespace onda {

// Bytes per element in a GPU buffer.
constexpr size_t device_element_size(DType t) {
  return t == DType::f16 ? 2 : 4;
}

}  // namespace onda
