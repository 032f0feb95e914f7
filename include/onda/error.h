// onda's exceptions (C++ API; the C API in onda.h turns them into status codes). All derive from
// onda::Error, itself a std::runtime_error whose what() is a one-line message naming the file, node
// or input concerned.
#pragma once
#include <stdexcept>
#include <string>

namespace onda {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A model or its data is unusable or does not fit: a corrupt or truncated file, an unsupported op
// (all listed at once) or dtype, missing external data, an input of the wrong name, dtype or shape.
// Raised early, at load time where possible, so a caller never runs a half-read model.
class ModelError : public Error {
 public:
  using Error::Error;
};

// The inputs of a run do not fit the model: an unknown or missing name, a wrong dtype or shape, a
// DeviceTensor of another Device.
class InputError : public ModelError {
 public:
  using ModelError::ModelError;
};

// A .npy file (or buffer) that cannot be read or written as a tensor.
class NpyError : public Error {
 public:
  using Error::Error;
};

// The GPU reported a failure (validation, internal error): raised at the next synchronisation point.
class GpuError : public Error {
 public:
  using Error::Error;
};

// The device was lost (driver reset, hang, process-wide failure): the Device is unusable.
class DeviceLostError : public GpuError {
 public:
  using GpuError::GpuError;
};

// A buffer could not be allocated; the message carries the size that was asked for.
class OutOfMemoryError : public GpuError {
 public:
  using GpuError::GpuError;
};

// The work exceeds a device limit (binding size, workgroup memory, ...).
class DeviceLimitError : public GpuError {
 public:
  using GpuError::GpuError;
};

}  // namespace onda
