// Benchmarks only: keep the GPU busy for a while before anything is timed. An idle GPU runs at low
// clocks and ramps up over tens of milliseconds of load; a sweep that times a few milliseconds of work
// right after start-up measures the ramp (the H200's GEMM sweep read 4096^3 at 6-13 TFLOP/s cold and
// 33 warm with the same kernel).
#pragma once

#include "gpu/buffer_pool.h"
#include "gpu/context.h"

namespace onda::gpu {

// Copies 64 MiB back and forth for `seconds` of wall time (once per process when `once` is true:
// later calls return at once).
void warm_up_clocks(Context& context, BufferPool& pool, double seconds = 1.0, bool once = true);

}  // namespace onda::gpu
