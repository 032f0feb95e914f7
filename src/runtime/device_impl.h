// What a Device holds (include/onda/device.h), for the runtime's own files: the GPU context, the
// pool DeviceTensors live in, and the lock every GPU-touching call on the device takes.
#pragma once
#include <memory>
#include <mutex>

#include "gpu/buffer_pool.h"
#include "gpu/context.h"
#include "onda/device.h"
#include "onda/device_tensor.h"
#include "tensor/tensor.h"

namespace onda {

struct Device::Impl {
  explicit Impl(const gpu::ContextOptions& options) : context(options) {}

  gpu::Context context;
  // DeviceTensors' storage: apart from every session's pools, so no run reuses (or replays into) a
  // buffer a caller holds.
  gpu::BufferPool tensors{context};
  AdapterInfo adapter;
  DeviceLimits limits;
  // Dawn's device is not internally synchronised (the pinned Dawn is built without implicit device
  // synchronisation): one lock per device serialises every call that reaches it. Recursive, since
  // a Session call holding it may create or release DeviceTensors.
  std::recursive_mutex mutex;
};

using DeviceLock = std::lock_guard<std::recursive_mutex>;

struct DeviceTensor::Impl {
  std::shared_ptr<Device> device;
  Tensor tensor;  // in device->impl().tensors

  Impl(std::shared_ptr<Device> d, Tensor t) : device(std::move(d)), tensor(std::move(t)) {}
  ~Impl() {
    DeviceLock lock(device->impl().mutex);
    tensor = Tensor();
  }
};

// A DeviceTensor over `tensor` (which must live in device's tensors pool).
DeviceTensor make_device_tensor(std::shared_ptr<Device> device, Tensor tensor);

}  // namespace onda
