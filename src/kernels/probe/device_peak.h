// The device's measured peaks, for the profile's roofline (runtime/roofline.h): what a kernel could
// reach at best on this adapter, measured rather than taken from a data sheet (WebGPU does not say
// which GPU clock or memory it runs at, and a data sheet's FP32 figure is not what WGSL reaches).
//   copy bandwidth   a vec4 copy kernel over a large buffer, repeated (copy_bandwidth.wgsl): bytes
//                    read + written per second. Not copyBufferToBuffer: the copy engine behind it
//                    reaches far less than shaders do on some GPUs (about a quarter on an H100)
//   FP32 rate        an FMA-bound kernel (device_peak.wgsl: 8 independent vec4 chains per thread)
//   dispatch latency a chain of one-invocation dispatches, each reading what the one before wrote:
//                    the time one dependent dispatch adds (the chain's slope, so submit and wait
//                    costs cancel)
// Each figure comes from work grown until it takes ~25 ms of wall time, so the probe costs a few
// tenths of a second on a GPU and on lavapipe alike. It runs once per adapter per process.
#pragma once
#include <cstdint>

#include "kernels/kernel_context.h"

namespace onda::kernels {

struct DevicePeak {
  double flops_per_second = 0;       // FP32, an FMA counting two
  double bytes_per_second = 0;       // device memory, read + written
  double dependent_dispatch_ms = 0;  // one step of a chain of dependent dispatches
};

// The adapter's peaks: measured on the first call for this adapter, the cached figures after.
const DevicePeak& device_peak(const KernelContext& context);

// Probes run by this process so far (one per adapter, whatever the number of calls).
uint64_t device_peak_probes_run();

}  // namespace onda::kernels
