// The recurrent family's copy kernel (rnn_gather.wgsl): a strided 3-D box of any float tensor widened
// into a float32 buffer. It lays out the weights (W^T, R^T, biases, peepholes) and the initial
// states. Internal to kernels/rnn.
#pragma once
#include <array>
#include <cstdint>

#include "gpu/command_recorder.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels::rnn {

// dst[dst_offset + i] (float32) = src at the box `dims` with element `strides`; `name` labels the
// dispatch. Nothing when the box is empty.
void record_gather(const KernelContext& k, gpu::CommandRecorder& recorder, const Tensor& src,
                   const Tensor& dst, uint32_t dst_offset, std::array<int64_t, 3> dims,
                   std::array<int64_t, 3> strides, const char* name);

// `count` float32 zeros into `t` from element `first` (a buffer clear, no dispatch).
void record_zero(gpu::CommandRecorder& recorder, const Tensor& t, uint64_t first, uint64_t count);

// std::invalid_argument naming `name` unless `t` has shape `want` / a float dtype.
void require_shape(const Tensor& t, const Shape& want, const char* name);
void require_float(const Tensor& t, const char* name);

}  // namespace onda::kernels::rnn
