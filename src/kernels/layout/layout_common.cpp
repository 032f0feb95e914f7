#include "kernels/layout/layout_common.h"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

#include "gpu/gpu_error.h"
#include "tensor/half.h"

namespace onda::kernels {

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t running = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = running;
    running *= shape[d];
  }
  return s;
}

uint32_t value_bits(DType dtype, double value) {
  switch (dtype) {
    case DType::f32: {
      const float f = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return bits;
    }
    case DType::f16:
      return float_to_half(static_cast<float>(value));
    case DType::i32:
    case DType::i64:
      return static_cast<uint32_t>(static_cast<int32_t>(value));
    case DType::u8:
      return static_cast<uint32_t>(value) & 0xFFu;
    case DType::boolean:
      return value != 0 ? 1u : 0u;
  }
  return 0;
}

void require_same_dtype(const std::string& op, const Tensor& input, const Tensor& output) {
  if (input.dtype() != output.dtype()) {
    throw std::invalid_argument(fmt::format("{}: output dtype {} differs from input dtype {}", op,
                                            dtype_name(output.dtype()), dtype_name(input.dtype())));
  }
}

void require_bindable(const KernelContext& kc, const Tensor& t, const std::string& name) {
  const uint64_t limit = kc.gpu.limits().maxStorageBufferBindingSize;
  if (t.device_bytes() + 256 > limit) {
    throw gpu::DeviceLimitError(
        fmt::format("{}: tensor {} of {} bytes exceeds the storage binding limit of {} bytes", name,
                    shape_string(t.shape()), t.device_bytes(), limit));
  }
}

}  // namespace onda::kernels
