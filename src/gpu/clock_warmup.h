// Benchmarks only: keep the GPU busy for a while right before something is timed. An idle GPU drops
// to low clocks within about a second (the H200 idles at 345 MHz) and ramps up over tens of
// milliseconds of load, so a case timed right after host-side work (generating inputs, uploads,
// float64 checks) measures the ramp, not the kernel: on an H200 an FFT case read 5x slower after the
// previous case's host work, and the GEMM sweep a third to a fifth of a warm run's TFLOP/s. Warm up
// before every case.
#pragma once

#include "gpu/buffer_pool.h"
#include "gpu/context.h"

namespace onda::gpu {

// Copies 64 MiB back and forth for `seconds` of wall time.
void warm_up_clocks(Context& context, BufferPool& pool, double seconds = 1.0);

}  // namespace onda::gpu
