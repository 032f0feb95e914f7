// The attention family's tuning. KernelContext carries one, SessionOptions::tuning sets it, `onda run
// --tuning attention.key_splits=N` sweeps it on whole models.
#pragma once
#include <cstdint>

namespace onda::kernels::attention {

// automatic: the register-tiled kernel where it applies (head dims <= 64, its workgroup memory fits),
// else one query row per invocation; rows: always the latter (for A/B runs).
enum class AttentionKernel { automatic, rows };

struct AttentionTuning {
  AttentionKernel kernel = AttentionKernel::automatic;
  // Slices of the keys each query row is split over (0: automatic, attention.h). One invocation per
  // query row leaves a GPU mostly idle when batch x heads x Lq is small (HTDemucs: 8 heads x 2688
  // rows); each slice's partial softmax is combined by a second dispatch.
  uint32_t key_splits = 0;
};

}  // namespace onda::kernels::attention
