// Benchmarks only: keep the GPU busy for a while right before something is timed. An idle GPU drops
// to low clocks within about a second and ramps up over tens of milliseconds of load, so a case timed
// right after host-side work (generating inputs, uploads, float64 checks) measures the ramp, not the
// kernel (the figures: docs/benchmark-log.md, "Measurements behind code rules"). Warm up before every
// case.
#pragma once

#include "gpu/buffer_pool.h"
#include "gpu/context.h"

namespace onda::gpu {

// Copies 64 MiB back and forth for `seconds` of wall time.
void warm_up_clocks(Context& context, BufferPool& pool, double seconds = 1.0);

}  // namespace onda::gpu
