// A value flowing between ops at plan/record time: known on the host (initializers, folded shape
// arithmetic) or living on the GPU. Host values let ops read constant inputs (Reshape's shape,
// Clip's bounds) and are uploaded when a GPU kernel needs them.
#pragma once
#include <memory>
#include <vector>

#include "graph/host_tensor.h"
#include "tensor/tensor.h"

namespace onda::ops {

struct Value {
  HostTensor host{};  // defined: known on the host
  Tensor device{};    // defined: on the GPU (both may be defined: a tiny input known on both sides)
  bool constant = false;  // an initializer: the same in every run (ops may prepack it once)
  // An ONNX sequence (SplitToSequence, SequenceConstruct, ...): its tensors in order, each on the
  // host or the GPU. Set (possibly empty) exactly when the value is a sequence; host and device are
  // then undefined.
  std::shared_ptr<const std::vector<Value>> sequence{};

  bool is_sequence() const { return sequence != nullptr; }
  bool defined() const { return host.defined() || device.defined() || is_sequence(); }
  bool on_host() const { return host.defined(); }
  DType dtype() const { return host.defined() ? host.dtype() : device.dtype(); }  // same on both sides
  const Shape& shape() const { return host.defined() ? host.shape() : device.shape(); }
};

}  // namespace onda::ops
