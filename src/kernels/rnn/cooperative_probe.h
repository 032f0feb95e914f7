// Whether a grid of workgroups runs all at once on this device: the cooperative recurrent kernel's
// workgroups wait for each other's h every step, which only works if every one of them is resident
// (WebGPU says nothing about how many are; it depends on the GPU, the kernel's registers and
// workgroup memory).
#pragma once
#include <span>

#include "gpu/command_recorder.h"
#include "kernels/kernel_context.h"

namespace onda::kernels::rnn {

// Dispatches `pipeline` once over `groups` in its probe mode, with `uniforms` (set up by the caller
// for that mode; they name element 0 of the exchange) and `storage` bindings in which binding
// `exchange_binding` is replaced by a fresh zeroed two-word buffer, then reads the buffer back:
// every workgroup adds one to word 1 and waits, bounded, for the count to reach the grid; a
// workgroup that gives up sets word 0. True when none gave up. The answer is remembered with the
// pipeline in k.pipelines (PipelineCache::remember), per grid, so a layer pays the round trip once.
// `pipeline` must come from k.pipelines.
bool probe_grid_resident(const KernelContext& k, const wgpu::ComputePipeline& pipeline,
                         std::span<const gpu::BufferBinding> storage, size_t exchange_binding, const void* uniforms,
                         size_t uniform_bytes, gpu::WorkgroupCount groups);

}  // namespace onda::kernels::rnn
