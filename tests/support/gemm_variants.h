// Forced GEMM configurations (GemmOptions::variant) for the tests and the GEMM benchmark's sweeps.
#pragma once
#include <cstdint>

#include "kernels/gemm/gemm.h"

namespace onda::test {

// A tiled configuration: WG_X x WG_Y threads of TM x 4 NV outputs, K step BK, tile rows per group of
// the grouped order (0: none), the k loop unrolled (GPUs) or rolled (CPU adapters).
inline kernels::gemm::GemmVariant tiled_variant(uint32_t wg_x, uint32_t wg_y, uint32_t tm, uint32_t bk,
                                                uint32_t group_m, uint32_t nv, bool unroll_k) {
  kernels::gemm::GemmVariant v;
  v.path = kernels::gemm::GemmPath::tiled;
  v.wg_x = wg_x;
  v.wg_y = wg_y;
  v.tm = tm;
  v.bk = bk;
  v.group_m = group_m;
  v.nv = nv;
  v.unroll_k = unroll_k;
  return v;
}

}  // namespace onda::test
