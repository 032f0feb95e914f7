// The unrolled Stockham path's tuning choices, each with the H200 measurement behind its default and
// the environment variable that overrides it for sweeps (bench_fft, scripts/gpu/fft-sweep.sh,
// docs/benchmarks.md). Read by specialise_pass (shapes) and the `fn main` writer (code).
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/fft/fft_plan.h"

namespace onda::kernels::fft::knobs {

// An integer environment variable, or `fallback` when unset or empty.
int64_t env_int(const char* name, int64_t fallback);

// Twiddles of a butterfly as W^k from the table and W^(rk) by products (true), or every one from the
// table (ONDA_FFT_TWIDDLE=table).
bool twiddle_powers();
// Four-step twiddles from two short tables (split_twiddle_table), or gathered from the F-entry table
// (ONDA_FFT_FOUR_STEP_TWIDDLE=full). Both code paths.
bool split_four_step_twiddle();
// Most consecutive transforms a four-step workgroup holds (ONDA_FFT_MAX_RUN, default 8).
int64_t max_run();
// Powers of two in radix-16 stages for this pass (ONDA_FFT_RADIX16).
bool radix16(const StockhamPassPlan& pass);
// ONDA_FFT_RADICES=R1,R2,...: the radices, in order, of every pass whose length is their product
// (sweeps); empty when unset or another length.
std::vector<int> forced_radices(int64_t length);
// ONDA_FFT_SPLIT: 0 never split a whole pass's exchange (planning too), 1 the default rule (128 points
// and 512 or more), 2 every whole pass, 3 from 512 points.
int64_t split_mode();
// Four-step passes (columns / rows, not paired rows) split their exchange where that lets a workgroup
// hold a longer run of consecutive transforms, hence longer contiguous global accesses
// (ONDA_FFT_SPLIT_RUNS=1; =2, the default: with one butterfly of the largest radix per thread; =0 never).
int64_t split_runs();
// Groups of transforms each workgroup runs in turn (ONDA_FFT_LOOP), and whether the next group's
// first-stage inputs load during this group's stages (ONDA_FFT_PREFETCH).
int group_iterations(const StockhamPassPlan& pass);
bool prefetch_next_group();
// A whole packed r2c pass of `length` points splits its bins from registers, its last stage in
// Hermitian butterfly pairs (ONDA_FFT_PAIR).
bool pair_real_split(int64_t length);
// Which unpadded whole passes (of a multiple of 32 points) place point p at p ^ ((p >> 3) & 31)
// (StockhamPassPlan::swizzled_exchange): ONDA_FFT_SWIZZLE=0 none, =1 (default) split exchanges of 512
// and of more than 4096 points (specialise_pass), =2 every one, =3 every split one.
int64_t swizzle_mode();

}  // namespace onda::kernels::fft::knobs
