// onda::Tensor: a tensor in host memory (dtype, shape, bytes in numpy's C-order layout), what
// Session::run takes and returns. It is the public name of onda::HostTensor (host_tensor.h).
//
//   std::vector<float> samples = ...;
//   auto mix = onda::Tensor::from_values<float>({1, 2, 44100}, samples);          // owned copy
//   auto view = onda::Tensor::view(onda::DType::f32, {1, 2, 44100}, samples.data(),
//                                  samples.size() * sizeof(float));                 // zero-copy
//
// (onda's own sources use the name HostTensor: inside the library onda::Tensor is the GPU tensor
// of its tensor layer, so they include host_tensor.h instead of this header.)
#pragma once
#include "onda/host_tensor.h"

namespace onda {

using Tensor = HostTensor;

}  // namespace onda
