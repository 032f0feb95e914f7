// The attention family's tuning. KernelContext carries one, SessionOptions::tuning sets it, `onda run
// --tuning attention.key_splits=N` sweeps it on whole models.
#pragma once
#include <cstdint>

namespace onda::kernels::attention {

struct AttentionTuning {
  // Slices of the keys each query row is split over (0: by rows and keys, attention.h). One
  // invocation per query row leaves a GPU mostly idle when batch x heads x Lq is small (HTDemucs: 8
  // heads x 2688 rows); each slice's partial softmax is combined by a second dispatch. The rule
  // measured faster on HTDemucs and even on MP-SENet and BS-RoFormer (docs/benchmark-log.md).
  uint32_t key_splits = 0;
};

}  // namespace onda::kernels::attention
