// Errors raised by the GPU layer. Every failure the device reports (validation, out of memory,
// internal, device loss) becomes one of these at the next synchronisation point, so a caller never
// reads a silently wrong answer.
#pragma once
#include <stdexcept>
#include <string>

namespace onda::gpu {

class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device was lost (driver reset, hang, process-wide failure): the context is unusable.
class DeviceLostError : public GpuError {
 public:
  using GpuError::GpuError;
};

// A buffer could not be allocated; carries the size that was asked for.
class OutOfMemoryError : public GpuError {
 public:
  using GpuError::GpuError;
};

// The work exceeds a device limit (binding size, workgroup memory, ...).
class DeviceLimitError : public GpuError {
 public:
  using GpuError::GpuError;
};

}  // namespace onda::gpu
