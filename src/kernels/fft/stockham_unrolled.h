// The specialised Stockham pass for GPUs: one shader per (pass length, radix sequence, thread shape),
// with every stage unrolled, radices, strides and twiddle steps as constants and each thread's points in
// constant-indexed registers. The generic pass (stockham_pass.wgsl) indexes its register array at run
// time, which discrete GPUs spill to local memory; its advantage is that one pipeline serves every
// length, which matters on CPU adapters where each pipeline costs seconds to compile. FftKernel picks
// this path unless the adapter is a CPU (fft_kernel.h, FftCodePath).
#pragma once
#include <string>

#include "kernels/fft/fft_plan.h"
#include "kernels/fft/fft_tuning.h"

namespace onda::kernels::fft {

// Re-shapes a pass for the unrolled shader: one butterfly per thread in every stage (as far as the
// device's workgroup size allows), several transforms per workgroup (about 128 threads for whole
// passes, runs of 8 / 4 / 2 consecutive transforms for four-step passes, as far as workgroup memory
// allows), workgroup_size = threads * transforms exactly; `tuning` overrides the thread shape (sweeps).
// Sets pass.unrolled.
void specialise_pass(StockhamPassPlan& pass, const FftDeviceLimits& limits, const FftTuning& tuning = {});

// The workgroup-memory points between two transforms of one workgroup: the (padded) length, plus one
// when a workgroup holds several, so that the lanes of a four-step pass (consecutive transforms) fall
// in different banks.
int64_t unrolled_exchange_stride(const StockhamPassPlan& pass);

// Bluestein in fewer passes (unrolled passes only): a convolution length M that fits one workgroup in
// one pass instead of two (convolve_in_workgroup); a four-step M = N1 * N2 in three instead of four:
// columns (chirped input, twiddled, as before), rows_convolve, columns_out. Returns false (plan
// unchanged) for other plans.
bool fuse_bluestein_convolution(FftPlan& plan);

// Butterflies each thread runs in a stage of radix R of a specialised pass.
int64_t butterfly_rounds(const StockhamPassPlan& pass, int radix);
// Whether a pass's lanes walk consecutive transforms (four-step passes: consecutive columns / rows of
// the signal, so that a warp's global loads and stores are contiguous) rather than the points of one
// transform (whole passes).
bool lanes_walk_transforms(const StockhamPassPlan& pass);

// WGSL of `fn main` for an unrolled pass (it relies on load/store/exchange of stockham_pass.wgsl;
// unrolled_main.cpp).
std::string unrolled_stockham_main(const FftPlan& plan, const StockhamPassPlan& pass, bool real_split);

}  // namespace onda::kernels::fft
