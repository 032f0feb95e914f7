// onda::DeviceTensor: a tensor that lives in GPU memory of one Device. Session::run_device takes
// DeviceTensors as inputs and returns its outputs as DeviceTensors, so values that feed the next
// run (the recurrent states and caches of streaming models) or the next model on the same Device
// never leave the GPU. Only upload() and download() cross to host memory.
//
// A DeviceTensor is a cheap handle (copies share the buffer) and owns its storage: no run of any
// session writes into it, so it stays valid and unchanged until its last copy is gone. Thread
// safety: as the Device (device.h); the buffer is immutable once created.
#pragma once
#include <memory>

#include "onda/device.h"
#include "onda/host_tensor.h"

namespace onda {

class DeviceTensor {
 public:
  DeviceTensor() = default;

  // A copy of `host` in GPU memory of `device` (int64 values must fit int32, the GPU's storage).
  static DeviceTensor upload(const std::shared_ptr<Device>& device, const HostTensor& host);
  // The values back in host memory; waits for the GPU work submitted so far on the device.
  HostTensor download() const;

  // The same buffer seen with another shape of the same element count (no copy).
  DeviceTensor reshaped(Shape shape) const;

  bool defined() const { return impl_ != nullptr; }
  // Of a defined tensor (an undefined one throws onda::Error).
  DType dtype() const;
  const Shape& shape() const;
  int64_t numel() const;
  const std::shared_ptr<Device>& device() const;

  struct Impl;  // src/runtime/device_impl.h
  const Impl& impl() const { return checked_impl(); }
  explicit DeviceTensor(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  const Impl& checked_impl() const;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace onda
