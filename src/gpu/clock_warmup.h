// Benchmarks only: keep the GPU busy for a while right before something is timed. An idle GPU drops
// to low clocks within about a second (the H200 idles at 345 MHz) and ramps up over tens of
// milliseconds of load, so a case timed right after host-side work (generating inputs, uploads,
// float64 checks) measures the ramp, not the kernel: on the H200 (2026-12-03) c2c N = 1024 read
// 0.44 ms per 2^26 points in a fresh process and 2.29 ms after the previous case's host work; the
// GEMM sweep read 4096^3 at 6-13 TFLOP/s where a warm run gives 33. Warm up before every case.
#pragma once

#include "gpu/buffer_pool.h"
#include "gpu/context.h"

namespace onda::gpu {

// Copies 64 MiB back and forth for `seconds` of wall time.
void warm_up_clocks(Context& context, BufferPool& pool, double seconds = 1.0);

}  // namespace onda::gpu
