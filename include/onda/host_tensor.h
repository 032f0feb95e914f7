// A tensor in host memory: dtype, shape and bytes in the ONNX / numpy layout (C order,
// little-endian, host_element_size(dtype) bytes per element). Public: Session::run takes and
// returns these (include/onda/tensor.h gives it its public name, onda::Tensor). Inside onda,
// initializers, constant-folded values, .npy files and TensorProto test data are all HostTensors.
//
// A HostTensor is a cheap handle: copies share the bytes. The bytes may be
// owned, or borrowed from something kept alive with them (a memory-mapped external-data file), so
// loading a model does not copy its weights. mutable_data() copies first when the bytes are
// borrowed (copy-on-write), so a mapped file is never written; view() wraps caller memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "onda/dtype.h"

namespace onda {

using Shape = std::vector<int64_t>;

// Elements of a static shape; throws ModelError on a negative dimension or overflow.
int64_t shape_numel(const Shape& shape);
std::string shape_to_string(const Shape& shape);  // "[2, 3, 4]"

class HostTensor {
 public:
  HostTensor() = default;
  // Owned, zero-filled storage.
  HostTensor(DType dtype, Shape shape);

  // Owned copy of `byte_count` bytes (must equal numel * element size).
  static HostTensor copy_of(DType dtype, Shape shape, const void* bytes, size_t byte_count);
  // Borrowed bytes kept alive by `owner` (e.g. a mapped file); copied when not aligned to the
  // element size, so typed access is always aligned.
  static HostTensor borrow(DType dtype, Shape shape, std::shared_ptr<const void> owner,
                           const std::byte* bytes, size_t byte_count);
  // Zero-copy view of caller memory (no owner: the caller keeps `bytes` alive and unmodified for as
  // long as the tensor, its copies or a run reading it exist). Copied when misaligned, as borrow().
  static HostTensor view(DType dtype, Shape shape, const void* bytes, size_t byte_count);
  // Elements converted to `dtype` (float -> int truncates toward zero, to bool: != 0, f16 rounds to
  // nearest even); the inverse of to_int64() / to_double().
  static HostTensor from_int64(DType dtype, Shape shape, const std::vector<int64_t>& values);
  static HostTensor from_double(DType dtype, Shape shape, const std::vector<double>& values);
  // From typed values: float -> f32, int32_t -> i32, int64_t -> i64, uint8_t -> u8, bool -> boolean.
  template <typename T>
  static HostTensor from_values(Shape shape, const std::vector<T>& values);

  bool defined() const { return defined_; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t byte_size() const { return byte_size_; }

  const std::byte* data() const { return data_.get(); }
  // Writable bytes; makes a private copy first when they are borrowed.
  std::byte* mutable_data();

  // Typed view; T must match the dtype: float f32, uint16_t f16 (bits), int32_t i32, int64_t i64,
  // uint8_t u8 or boolean. Throws ModelError otherwise.
  template <typename T>
  std::span<const T> values() const;

  // Every element widened, for shape arithmetic and tests: integers and bool as int64,
  // floats (f16 converted) as double. Any dtype.
  std::vector<int64_t> to_int64() const;
  std::vector<double> to_double() const;

  // Same bytes, new shape with the same element count.
  HostTensor reshaped(Shape shape) const;
  // Owned deep copy.
  HostTensor clone() const;

 private:
  DType dtype_ = DType::f32;
  Shape shape_;
  int64_t numel_ = 0;
  size_t byte_size_ = 0;
  bool defined_ = false;
  bool owned_ = false;                     // false: borrowed bytes, copy before writing
  std::shared_ptr<const std::byte> data_;  // aliasing pointer into the storage owner
};

template <typename T>
constexpr bool host_type_matches(DType dtype) {
  if constexpr (std::is_same_v<T, float>) return dtype == DType::f32;
  if constexpr (std::is_same_v<T, uint16_t>) return dtype == DType::f16;
  if constexpr (std::is_same_v<T, int32_t>) return dtype == DType::i32;
  if constexpr (std::is_same_v<T, int64_t>) return dtype == DType::i64;
  if constexpr (std::is_same_v<T, uint8_t>) return dtype == DType::u8 || dtype == DType::boolean;
  return false;
}

[[noreturn]] void throw_host_type_mismatch(DType dtype, size_t requested_size);

template <typename T>
std::span<const T> HostTensor::values() const {
  if (!host_type_matches<T>(dtype_)) throw_host_type_mismatch(dtype_, sizeof(T));
  return {reinterpret_cast<const T*>(data_.get()), static_cast<size_t>(numel_)};
}

template <typename T>
HostTensor HostTensor::from_values(Shape shape, const std::vector<T>& values) {
  DType dtype;
  if constexpr (std::is_same_v<T, float>)
    dtype = DType::f32;
  else if constexpr (std::is_same_v<T, int32_t>)
    dtype = DType::i32;
  else if constexpr (std::is_same_v<T, int64_t>)
    dtype = DType::i64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    dtype = DType::u8;
  else if constexpr (std::is_same_v<T, bool>)
    dtype = DType::boolean;
  else
    static_assert(sizeof(T) == 0, "no dtype for this element type");
  if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> is packed: widen to bytes
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return copy_of(dtype, std::move(shape), bytes.data(), bytes.size());
  } else {
    return copy_of(dtype, std::move(shape), values.data(), values.size() * sizeof(T));
  }
}

}  // namespace onda
