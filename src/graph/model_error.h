// Errors about model files and host data: a corrupt or truncated file, a dtype the engine does not
// hold, missing external data, a malformed .npy. Raised early, at load time, naming what is wrong,
// so a caller never runs a half-read model.
#pragma once
#include <stdexcept>
#include <string>

namespace onda {

class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A .npy file (or buffer) that cannot be read or written as a HostTensor.
class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace onda
