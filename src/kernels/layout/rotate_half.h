// Rotary position embeddings' "rotate half" along the last axis (rotate_half.wgsl): one dispatch in
// place of the Split, Neg, Squeeze/Unsqueeze and Concat exporters write for it
// (graph/fuse_rotate_half.h).
#pragma once
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// y[.., j] = -x[.., j + h] for j < h, x[.., j - h] for j >= h, the last axis 2h long. x and y of one
// shape and dtype (f32 or f16). Throws std::invalid_argument otherwise or for an odd last axis. Runs
// in slices of whole rows where a tensor exceeds one storage binding.
void record_rotate_half(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x,
                        const Tensor& y);

}  // namespace onda::kernels
