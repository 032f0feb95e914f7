// The conv family's tuning. KernelContext carries one, SessionOptions::tuning sets it, benchmarks take
// it as --tuning (bench/tuning_args.h).
#pragma once

namespace onda::kernels::conv {

struct ConvTuning {
  // Whether `automatic` Convs and ConvTransposes may take the implicit GEMM (automatic_takes_implicit);
  // false keeps them on the paths before it (im2col + GEMM, direct), for whole-model comparisons. Per
  // call, ConvOptions::allow_implicit does the same.
  bool implicit_gemm = true;
};

}  // namespace onda::kernels::conv
