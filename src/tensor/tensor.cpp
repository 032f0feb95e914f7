#include "tensor/tensor.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <stdexcept>

#include "gpu/transfer.h"
#include "tensor/half.h"

namespace onda {

int64_t element_count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("negative dimension in shape " + shape_string(shape));
    n *= d;
  }
  return n;
}

std::string shape_string(const Shape& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

Tensor Tensor::empty(gpu::BufferPool& pool, DType dtype, Shape shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  // Round up to whole 16-byte units: kernels read f16 pairs and vec4s without running off the end.
  // A range of an activation arena when the pool follows a memory plan (gpu/buffer_pool.h).
  t.storage_ = pool.acquire_tensor(std::max<uint64_t>((t.device_bytes() + 15) & ~uint64_t{15}, 16));
  t.byte_offset_ = t.storage_->offset();
  return t;
}

std::vector<uint8_t> Tensor::to_device_layout(DType dtype, int64_t n, const void* host_data) {
  const auto* bytes = static_cast<const uint8_t*>(host_data);
  switch (dtype) {
    case DType::f32:
    case DType::f16:
    case DType::i32:
      return std::vector<uint8_t>(bytes, bytes + n * host_element_size(dtype));
    case DType::i64: {
      std::vector<uint8_t> narrow(4 * n);
      for (int64_t i = 0; i < n; ++i) {
        int64_t v;
        std::memcpy(&v, bytes + 8 * i, 8);
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
          throw std::out_of_range(
              fmt::format("int64 value {} at element {} does not fit the GPU's int32 storage", v, i));
        }
        const int32_t v32 = static_cast<int32_t>(v);
        std::memcpy(narrow.data() + 4 * i, &v32, 4);
      }
      return narrow;
    }
    case DType::u8:
    case DType::boolean: {
      std::vector<uint8_t> wide(4 * n);
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t v = dtype == DType::boolean ? (bytes[i] != 0) : bytes[i];
        std::memcpy(wide.data() + 4 * i, &v, 4);
      }
      return wide;
    }
  }
  return {};
}

namespace {

// Types whose host bytes are their device bytes: uploaded straight from the caller's memory (a
// model's weights: from the mapped file), without a converted copy first.
bool same_layout_on_device(DType dtype) {
  return dtype == DType::f32 || dtype == DType::f16 || dtype == DType::i32;
}

}  // namespace

template <typename Write>
Tensor Tensor::upload_with(gpu::BufferPool& pool, DType dtype, Shape shape, const void* host_data,
                           const Write& write) {
  Tensor t = empty(pool, dtype, std::move(shape));
  if (same_layout_on_device(dtype)) {
    write(t.buffer(), t.byte_offset_, host_data, t.numel() * host_element_size(dtype));
    return t;
  }
  const std::vector<uint8_t> device = to_device_layout(dtype, t.numel(), host_data);
  write(t.buffer(), t.byte_offset_, device.data(), device.size());
  return t;
}

Tensor Tensor::upload(gpu::Context& context, gpu::BufferPool& pool, DType dtype, Shape shape,
                      const void* host_data) {
  return upload_with(pool, dtype, std::move(shape), host_data,
                     [&](const wgpu::Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes) {
                       gpu::upload(context, buffer, offset, data, bytes);
                     });
}

Tensor Tensor::upload(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, DType dtype, Shape shape,
                      const void* host_data) {
  return upload_with(pool, dtype, std::move(shape), host_data,
                     [&](const wgpu::Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes) {
                       recorder.upload(buffer, offset, data, bytes);
                     });
}

Tensor Tensor::upload_once(gpu::Context& context, gpu::BufferPool& pool, DType dtype, Shape shape,
                           const void* host_data) {
  return upload_with(pool, dtype, std::move(shape), host_data,
                     [&](const wgpu::Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes) {
                       context.upload_ring().upload(context, buffer, offset, data, bytes);
                     });
}

Tensor Tensor::upload_staged(gpu::Context& context, gpu::BufferPool& pool, DType dtype, Shape shape,
                             const void* host_data) {
  return upload_with(pool, dtype, std::move(shape), host_data,
                     [&](const wgpu::Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes) {
                       if (context.upload_ring().upload_if_ready(context, buffer, offset, data, bytes)) {
                         context.upload_ring().flush(context);
                       } else {
                         gpu::upload(context, buffer, offset, data, bytes);
                       }
                     });
}

std::vector<uint8_t> Tensor::download_bytes(gpu::Context& context) const {
  return host_bytes_from_device(gpu::download(context, buffer(), byte_offset_, device_bytes()));
}

gpu::PendingDownload Tensor::begin_download(gpu::Context& context, gpu::CommandRecorder& recorder) const {
  return gpu::PendingDownload(context, recorder, buffer(), byte_offset_, device_bytes());
}

std::vector<uint8_t> Tensor::host_bytes_from_device(std::vector<uint8_t> device) const {
  const int64_t n = numel();
  switch (dtype_) {
    case DType::f32:
    case DType::f16:
    case DType::i32:
      return device;
    case DType::i64: {
      std::vector<uint8_t> host(8 * n);
      for (int64_t i = 0; i < n; ++i) {
        int32_t v;
        std::memcpy(&v, device.data() + 4 * i, 4);
        const int64_t wide = v;
        std::memcpy(host.data() + 8 * i, &wide, 8);
      }
      return host;
    }
    case DType::u8:
    case DType::boolean: {
      std::vector<uint8_t> host(n);
      for (int64_t i = 0; i < n; ++i) {
        uint32_t v;
        std::memcpy(&v, device.data() + 4 * i, 4);
        host[i] = static_cast<uint8_t>(dtype_ == DType::boolean ? (v != 0) : v);
      }
      return host;
    }
  }
  return device;
}

std::vector<float> Tensor::download_floats(gpu::Context& context) const {
  if (!is_float(dtype_))
    throw std::invalid_argument("download_floats on a " + std::string(dtype_name(dtype_)) + " tensor");
  std::vector<uint8_t> bytes = download_bytes(context);
  std::vector<float> result(numel());
  if (dtype_ == DType::f32) {
    std::memcpy(result.data(), bytes.data(), bytes.size());
  } else {
    for (size_t i = 0; i < result.size(); ++i) {
      uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      result[i] = half_to_float(h);
    }
  }
  return result;
}

gpu::BufferBinding Tensor::binding(const gpu::Context& context) const {
  const uint64_t alignment = context.limits().minStorageBufferOffsetAlignment;
  const uint64_t start = byte_offset_ / alignment * alignment;
  const uint64_t end =
      std::min<uint64_t>((byte_offset_ + device_bytes() + 15) & ~uint64_t{15}, storage_->end());
  return {buffer(), start, std::max<uint64_t>(end - start, 16)};
}

uint32_t Tensor::element_offset(const gpu::Context& context) const {
  const uint64_t alignment = context.limits().minStorageBufferOffsetAlignment;
  return static_cast<uint32_t>((byte_offset_ % alignment) / device_element_size(dtype_));
}

Tensor Tensor::reshape(Shape shape) const {
  if (element_count(shape) != numel()) {
    throw std::invalid_argument(
        fmt::format("cannot reshape {} to {}", shape_string(shape_), shape_string(shape)));
  }
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::slice_outer(int64_t begin, int64_t end) const {
  if (shape_.empty() || begin < 0 || end < begin || end > shape_[0]) {
    throw std::out_of_range(
        fmt::format("slice [{}, {}) of dimension 0 of {}", begin, end, shape_string(shape_)));
  }
  const int64_t row = numel() / std::max<int64_t>(shape_[0], 1);
  Tensor t = *this;
  t.byte_offset_ += static_cast<uint64_t>(begin * row) * device_element_size(dtype_);
  // f16 kernels write whole 32-bit words: a view must start on a word boundary.
  if (t.byte_offset_ % 4 != 0) throw std::invalid_argument("float16 view must start at an even element");
  t.shape_[0] = end - begin;
  return t;
}

}  // namespace onda
