// Running sum along one axis (ONNX CumSum): f32/f16 in and out, the sums accumulated in f32 with
// Kahan compensation so a long axis keeps float32 accuracy.
#pragma once
#include <cstdint>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

struct CumulativeSumOptions {
  bool exclusive = false;  // y[k] sums x[0..k-1] (0 at k = 0) instead of x[0..k]
  bool reverse = false;    // sums run from the end of the axis towards its start
};

// `y` has x's shape and dtype. Throws std::invalid_argument for other dtypes, a bad axis or a
// mismatched output.
void record_cumulative_sum(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x,
                           int64_t axis, CumulativeSumOptions options, const Tensor& y);

}  // namespace onda::kernels
