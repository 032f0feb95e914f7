// The attention family's tuning. KernelContext carries one, SessionOptions::tuning sets it, `onda run
// --tuning attention.key_splits=N` sweeps it on whole models.
#pragma once
#include <cstdint>

namespace onda::kernels::attention {

// automatic: the register-tiled kernel where it applies (head dims <= 64, its workgroup memory fits),
// else one query row per invocation; rows: always the latter.
enum class AttentionKernel { automatic, rows };

// The defaults are the kernel measured on GPUs (rows, no key slices) until a GPU A/B of the tiled
// kernel and of split keys on the reference models decides (README.md).
struct AttentionTuning {
  AttentionKernel kernel = AttentionKernel::rows;
  // Slices of the keys each query row is split over (0: by rows and keys, attention.h). One
  // invocation per query row leaves a GPU mostly idle when batch x heads x Lq is small (HTDemucs: 8
  // heads x 2688 rows); each slice's partial softmax is combined by a second dispatch.
  uint32_t key_splits = 1;
};

}  // namespace onda::kernels::attention
