// Every kernel family's tuning in one value: what KernelContext carries and SessionOptions::tuning
// sets. The defaults are the choices measured on GPUs (docs/benchmark-log.md); a field left at its default
// leaves the family's automatic rule, which reads the device's facts, in charge.
#pragma once
#include <string_view>

#include "kernels/attention/attention_tuning.h"
#include "kernels/conv/conv_tuning.h"
#include "kernels/fft/fft_tuning.h"
#include "kernels/gemm/gemm_tuning.h"
#include "kernels/rnn/rnn_tuning.h"

namespace onda::kernels {

struct KernelTuning {
  fft::FftTuning fft;
  rnn::RnnTuning rnn;
  gemm::GemmTuning gemm;
  conv::ConvTuning conv;
  attention::AttentionTuning attention;
};

// The defaults (what a KernelContext built without a tuning refers to).
const KernelTuning& default_kernel_tuning();

// Sets one field from "family.field=value" (benchmarks' --tuning, tests):
//   fft.code_path=automatic|generic|unrolled     fft.real_split_pairs=by_length|every_pass
//   fft.radices=R1,R2,...   fft.threads=N   fft.per_group=N   fft.group_iterations=N
//   gemm.for_unroll=0|1     gemm.double_buffer=0|1     gemm.vec_store=0|1     conv.implicit_gemm=0|1
//   attention.key_splits=N (0: by rows and keys)
//   gemm.tile=WGX,WGY,TM,BK,NV,GROUP_M|0   (the tiled GEMM's tile where it fits; gemm_tuning.h)
//   gemm.unroll_k=0|1      (the tiled GEMM's k loop; unset: unrolled on GPUs)
//   rnn.step_kernel=automatic|dot|tiled|gemm|vec4
//   rnn.resident=BM,KQ|0    rnn.cooperative=JT,BM,KQ,RC|0    rnn.rows=BM,TM,UV,KS,KB|0   ("0": off)
//   rnn.tiled=BM,TM,BU,TU,KT,KS    rnn.vec4=WGX,WGY,TM,NV,BK,KS[,PREFETCH 0|1|2[,PERSISTENT 0|1]]
// std::invalid_argument naming the field and the expected form for anything else.
void set_tuning(KernelTuning& tuning, std::string_view assignment);

}  // namespace onda::kernels
