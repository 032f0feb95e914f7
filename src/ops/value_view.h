// A Value seen with another shape of the same element count, no copy: Reshape, Flatten, Squeeze,
// Unsqueeze and the sequence ops' elements.
#pragma once
#include "ops/op_value.h"

namespace onda::ops {

inline Value reshaped_view(const Value& in, const Shape& shape) {
  Value out;
  if (in.on_host()) {
    out.host = in.host.reshaped(shape);
  } else {
    out.device = in.device.reshape(shape);
  }
  return out;
}

}  // namespace onda::ops
