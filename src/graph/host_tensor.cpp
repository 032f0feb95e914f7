#include "graph/host_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "graph/model_error.h"
#include "tensor/half.h"

namespace onda {

int64_t shape_numel(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0) throw ModelError("shape " + shape_to_string(shape) + " has a negative or unknown dimension");
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim)
      throw ModelError("shape " + shape_to_string(shape) + " has too many elements");
    count *= dim;
  }
  return count;
}

std::string shape_to_string(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

namespace {

// A float as int64 without C++'s undefined behaviour for values out of range: truncated toward zero,
// saturated at the int64 range, NaN as 0 (ONNX leaves such casts unspecified).
int64_t float_to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (v < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// A value as int64: floats through float_to_int64, integers unchanged.
template <typename Value>
int64_t as_int64(Value v) {
  if constexpr (std::is_floating_point_v<Value>) {
    return float_to_int64(v);
  } else {
    return static_cast<int64_t>(v);
  }
}

size_t checked_byte_size(DType dtype, const Shape& shape) {
  const int64_t count = shape_numel(shape);
  const size_t element = host_element_size(dtype);
  if (static_cast<uint64_t>(count) > std::numeric_limits<size_t>::max() / element)
    throw ModelError("shape " + shape_to_string(shape) + " is too large");
  return static_cast<size_t>(count) * element;
}

std::shared_ptr<const std::byte> allocate_zeroed(size_t byte_count) {
  // At least one byte so data() is never null for an owned tensor; new[] aligns for any scalar.
  std::shared_ptr<std::byte[]> storage(new std::byte[byte_count ? byte_count : 1]());
  return std::shared_ptr<const std::byte>(storage, storage.get());
}

}  // namespace

HostTensor::HostTensor(DType dtype, Shape shape)
    : dtype_(dtype), shape_(std::move(shape)), defined_(true), owned_(true) {
  byte_size_ = checked_byte_size(dtype_, shape_);
  numel_ = shape_numel(shape_);
  data_ = allocate_zeroed(byte_size_);
}

HostTensor HostTensor::copy_of(DType dtype, Shape shape, const void* bytes, size_t byte_count) {
  HostTensor tensor(dtype, std::move(shape));
  if (byte_count != tensor.byte_size_)
    throw ModelError("a " + std::string(dtype_name(dtype)) + " tensor of shape " +
                     shape_to_string(tensor.shape_) + " needs " + std::to_string(tensor.byte_size_) +
                     " bytes, got " + std::to_string(byte_count));
  if (byte_count) std::memcpy(const_cast<std::byte*>(tensor.data_.get()), bytes, byte_count);
  return tensor;
}

HostTensor HostTensor::borrow(DType dtype, Shape shape, std::shared_ptr<const void> owner,
                              const std::byte* bytes, size_t byte_count) {
  const size_t expected = checked_byte_size(dtype, shape);
  if (byte_count != expected)
    throw ModelError("a " + std::string(dtype_name(dtype)) + " tensor of shape " + shape_to_string(shape) +
                     " needs " + std::to_string(expected) + " bytes, got " + std::to_string(byte_count));
  if (reinterpret_cast<uintptr_t>(bytes) % host_element_size(dtype) != 0)
    return copy_of(dtype, std::move(shape), bytes, byte_count);  // keep typed access aligned
  HostTensor tensor;
  tensor.dtype_ = dtype;
  tensor.shape_ = std::move(shape);
  tensor.numel_ = shape_numel(tensor.shape_);
  tensor.byte_size_ = byte_count;
  tensor.defined_ = true;
  tensor.owned_ = false;
  tensor.data_ = std::shared_ptr<const std::byte>(std::move(owner), bytes);
  return tensor;
}

HostTensor HostTensor::view(DType dtype, Shape shape, const void* bytes, size_t byte_count) {
  return borrow(dtype, std::move(shape), nullptr, static_cast<const std::byte*>(bytes), byte_count);
}

std::byte* HostTensor::mutable_data() {
  if (!defined_) throw ModelError("mutable_data() of an undefined HostTensor");
  if (!owned_) *this = clone();
  return const_cast<std::byte*>(data_.get());
}

void throw_host_type_mismatch(DType dtype, size_t requested_size) {
  throw ModelError("typed access of a " + std::string(dtype_name(dtype)) + " tensor as a " +
                   std::to_string(requested_size) + "-byte type that does not match it");
}

namespace {

// Element i of an array of T at `bytes` (memcpy: the bytes need not be aligned for T).
template <typename T>
T load(const std::byte* bytes, size_t i) {
  T value;
  std::memcpy(&value, bytes + sizeof(T) * i, sizeof(T));
  return value;
}

// Every element of `bytes` (`count` of `dtype`) read as its own C++ type (float for f16) and passed
// through `convert`.
template <typename Out, typename Convert>
std::vector<Out> converted_elements(DType dtype, const std::byte* bytes, size_t count, Convert convert) {
  std::vector<Out> out(count);
  for (size_t i = 0; i < count; ++i) {
    switch (dtype) {
      case DType::f32:
        out[i] = convert(load<float>(bytes, i));
        break;
      case DType::f16:
        out[i] = convert(half_to_float(load<uint16_t>(bytes, i)));
        break;
      case DType::i32:
        out[i] = convert(load<int32_t>(bytes, i));
        break;
      case DType::i64:
        out[i] = convert(load<int64_t>(bytes, i));
        break;
      case DType::u8:
        out[i] = convert(static_cast<uint8_t>(bytes[i]));
        break;
      case DType::boolean:
        out[i] = convert(bytes[i] != std::byte{0});
        break;
    }
  }
  return out;
}

}  // namespace

std::vector<int64_t> HostTensor::to_int64() const {
  return converted_elements<int64_t>(dtype_, data_.get(), static_cast<size_t>(numel_),
                                     [](auto value) { return as_int64(value); });
}

std::vector<double> HostTensor::to_double() const {
  return converted_elements<double>(dtype_, data_.get(), static_cast<size_t>(numel_),
                                    [](auto value) { return static_cast<double>(value); });
}

namespace {

template <typename Value>
HostTensor converted(DType dtype, Shape shape, const std::vector<Value>& values) {
  HostTensor tensor(dtype, std::move(shape));
  if (static_cast<int64_t>(values.size()) != tensor.numel())
    throw ModelError("shape " + shape_to_string(tensor.shape()) + " needs " + std::to_string(tensor.numel()) +
                     " values, got " + std::to_string(values.size()));
  std::byte* out = tensor.mutable_data();
  for (size_t i = 0; i < values.size(); ++i) {
    const Value value = values[i];
    switch (dtype) {
      case DType::f32: {
        const float f = static_cast<float>(value);
        std::memcpy(out + 4 * i, &f, 4);
        break;
      }
      case DType::f16: {
        const uint16_t bits = float_to_half(static_cast<float>(value));
        std::memcpy(out + 2 * i, &bits, 2);
        break;
      }
      case DType::i32: {
        const int32_t v = static_cast<int32_t>(as_int64(value));  // (wraps modulo 2^32)
        std::memcpy(out + 4 * i, &v, 4);
        break;
      }
      case DType::i64: {
        const int64_t v = as_int64(value);
        std::memcpy(out + 8 * i, &v, 8);
        break;
      }
      case DType::u8:
        out[i] = static_cast<std::byte>(static_cast<uint8_t>(as_int64(value)));
        break;
      case DType::boolean:
        out[i] = value != 0 ? std::byte{1} : std::byte{0};
        break;
    }
  }
  return tensor;
}

}  // namespace

HostTensor HostTensor::from_int64(DType dtype, Shape shape, const std::vector<int64_t>& values) {
  return converted(dtype, std::move(shape), values);
}

HostTensor HostTensor::from_double(DType dtype, Shape shape, const std::vector<double>& values) {
  return converted(dtype, std::move(shape), values);
}

HostTensor HostTensor::reshaped(Shape shape) const {
  if (shape_numel(shape) != numel_)
    throw ModelError("cannot reshape " + shape_to_string(shape_) + " to " + shape_to_string(shape));
  HostTensor view = *this;
  view.shape_ = std::move(shape);
  return view;
}

HostTensor HostTensor::clone() const {
  if (!defined_) return {};
  return copy_of(dtype_, shape_, data_.get(), byte_size_);
}

}  // namespace onda
