// The GEMM family's tuning: variants whose A/B on GPUs is still open. KernelContext carries one,
// SessionOptions::tuning sets it, benchmarks take it as --tuning (bench/tuning_args.h).
#pragma once

namespace onda::kernels::gemm {

struct GemmTuning {
  // Tiled path: the register block's loops and the epilogue written out by the template's #for
  // (GemmVariant::for_unroll) instead of left to the GPU compiler. Off until a GPU A/B decides: the
  // hypothesis is that a loop the compiler leaves rolled puts the accumulators in local memory, as it
  // did in the vec4 RNN step before #for (rnn/README.md).
  bool for_unroll = false;
};

}  // namespace onda::kernels::gemm
