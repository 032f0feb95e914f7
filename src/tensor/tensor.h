// A tensor on the GPU: a dtype, a shape, and a byte range of a (pooled) buffer. Tensors are cheap
// handles; views (reshape, outer slices) share the buffer.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "gpu/context.h"
#include "gpu/transfer.h"
#include "tensor/dtype.h"

namespace onda {

using Shape = std::vector<int64_t>;

int64_t element_count(const Shape& shape);
std::string shape_string(const Shape& shape);  // "[2, 3, 4]"

class Tensor {
 public:
  Tensor() = default;

  // Uninitialised storage from the pool.
  static Tensor empty(gpu::BufferPool& pool, DType dtype, Shape shape);
  // Storage from the pool filled with `host_data` in host layout (host_element_size(dtype) per element),
  // written by a queue write (before any later submit): for uploads outside recording.
  static Tensor upload(gpu::Context& context, gpu::BufferPool& pool, DType dtype, Shape shape,
                       const void* host_data);
  // The same, written in recording order by `recorder`: for uploads while a run is being recorded.
  static Tensor upload(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, DType dtype, Shape shape,
                       const void* host_data);
  // The same for data that goes to the GPU once (weights), queued in the context's upload ring
  // (gpu/upload_ring.h): call its flush() before submitting work that reads the tensor.
  static Tensor upload_once(gpu::Context& context, gpu::BufferPool& pool, DType dtype, Shape shape,
                            const void* host_data);
  // The same for a large constant met while a run is being recorded: through the upload ring when it
  // has room without waiting for the GPU (UploadRing::upload_if_ready), submitted at once, else by a
  // queue write; either way queued before the recorder's next submit, as upload(context, ...) is.
  static Tensor upload_staged(gpu::Context& context, gpu::BufferPool& pool, DType dtype, Shape shape,
                              const void* host_data);
  // Host layout -> the GPU storage layout (i64 narrowed to i32 with a range check, u8/bool widened).
  static std::vector<uint8_t> to_device_layout(DType dtype, int64_t count, const void* host_data);

  // Elements back in host layout; waits for all GPU work submitted so far.
  std::vector<uint8_t> download_bytes(gpu::Context& context) const;
  // The same in two halves: a copy recorded with a run's work, then (after the submit) its bytes
  // converted with host_bytes_from_device(pending.finish(context)).
  gpu::PendingDownload begin_download(gpu::Context& context, gpu::CommandRecorder& recorder) const;
  std::vector<uint8_t> host_bytes_from_device(std::vector<uint8_t> device) const;
  // float32 and float16 tensors as floats.
  std::vector<float> download_floats(gpu::Context& context) const;

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return element_count(shape_); }
  bool defined() const { return static_cast<bool>(storage_); }

  const wgpu::Buffer& buffer() const { return storage_->buffer(); }
  const std::shared_ptr<gpu::PooledBuffer>& storage() const { return storage_; }
  uint64_t byte_offset() const { return byte_offset_; }
  uint64_t device_bytes() const { return static_cast<uint64_t>(numel()) * device_element_size(dtype_); }

  // A binding that starts at the largest offset <= byte_offset() that the device allows for storage
  // bindings; the kernel adds element_offset() (in elements of this dtype) to its indices.
  gpu::BufferBinding binding(const gpu::Context& context) const;
  uint32_t element_offset(const gpu::Context& context) const;

  // Views sharing the storage.
  Tensor reshape(Shape shape) const;
  Tensor slice_outer(int64_t begin, int64_t end) const;  // rows [begin, end) of dimension 0

 private:
  // Storage from the pool filled with host_data through write(buffer, byte offset, data, bytes), the
  // data converted to the device layout first where it differs (the three upload functions above).
  template <typename Write>
  static Tensor upload_with(gpu::BufferPool& pool, DType dtype, Shape shape, const void* host_data,
                            const Write& write);

  std::shared_ptr<gpu::PooledBuffer> storage_;
  uint64_t byte_offset_ = 0;
  DType dtype_ = DType::f32;
  Shape shape_;
};

}  // namespace onda
