// A value flowing between ops at plan/record time: known on the host (initializers, folded shape
// arithmetic) or living on the GPU. Host values let ops read constant inputs (Reshape's shape,
// Clip's bounds) and are uploaded when a GPU kernel needs them.
#pragma once
#include "graph/host_tensor.h"
#include "tensor/tensor.h"

namespace onda::ops {

struct Value {
  HostTensor host{};  // defined: known on the host
  Tensor device{};    // defined: on the GPU (both may be defined: a tiny input known on both sides)
  bool constant = false;  // an initializer: the same in every run (ops may prepack it once)

  bool defined() const { return host.defined() || device.defined(); }
  bool on_host() const { return host.defined(); }
  DType dtype() const { return host.defined() ? host.dtype() : device.dtype(); }  // same on both sides
  const Shape& shape() const { return host.defined() ? host.shape() : device.shape(); }
};

}  // namespace onda::ops
