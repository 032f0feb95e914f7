// The GEMM family's tuning: variants whose A/B on GPUs is still open. KernelContext carries one,
// SessionOptions::tuning sets it, benchmarks take it as --tuning (bench/tuning_args.h) and bench_gemm
// sweeps sets of these fields (--sweep, GemmBench.TuningSweep).
#pragma once
#include <cstdint>
#include <optional>

namespace onda::kernels::gemm {

// A tile of the tiled path, as GemmVariant holds it: WG_X x WG_Y threads of TM rows x 4 NV columns
// (BM = WG_Y TM, BN = 4 NV WG_X), K step BK, GROUP_M tile rows per group of the grouped tile order.
struct GemmTile {
  uint32_t wg_x = 16, wg_y = 16, tm = 8, bk = 16, nv = 1, group_m = 0;
  bool operator==(const GemmTile&) const = default;
};

struct GemmTuning {
  // Tiled path: the register block's loops and the epilogue written out by the template's #for
  // (GemmVariant::for_unroll) instead of left to the GPU compiler. Off until a GPU A/B decides: the
  // hypothesis is that a loop the compiler leaves rolled puts the accumulators in local memory, as it
  // did in the vec4 RNN step before #for (rnn/README.md).
  bool for_unroll = false;
  // Replaces the automatic tile of every tiled GEMM at least one tile large (M >= BM, N >= BN) whose
  // operand layout and device limits the tile fits; the others keep the automatic choice. For sweeps
  // of tile shapes (128 x 128 with 8 x 8 per thread, BK 8 / 16 / 32) on whole problems and models.
  std::optional<GemmTile> tile;
  // Tiled path: two copies of the staged tiles, the next K step loaded into registers during the
  // current one's multiply-adds, one barrier per K step (GemmVariant::double_buffer), where the
  // doubled workgroup memory fits the device. Off until a GPU A/B decides.
  bool double_buffer = false;
  // Tiled path, float32 output with N and the output offset multiples of 4: one 16-byte store per 4
  // columns instead of 4 scalar stores (GemmVariant::vec_store). Off until a GPU A/B decides.
  bool vec_store = false;
  // Tiled path: unroll the k loop of a K step (true) or bound it by a uniform so the compiler keeps
  // it a loop (false); unset: unrolled on GPUs, rolled on CPU adapters (GemmVariant::unroll_k). A
  // fully unrolled K step of a 16 x 8 register block is ~2000 FMA instructions per BK 16, which may
  // overflow a GPU's instruction cache.
  std::optional<bool> unroll_k;
};

}  // namespace onda::kernels::gemm
