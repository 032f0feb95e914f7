// What every kernel needs to plan and record: the device (limits, features), the pipeline cache and
// the families' tuning (kernel_tuning.h; the defaults unless the session's options set one).
#pragma once
#include "gpu/command_recorder.h"
#include "gpu/context.h"
#include "gpu/pipeline_cache.h"
#include "kernels/kernel_tuning.h"

namespace onda::kernels {

struct KernelContext {
  gpu::Context& gpu;
  gpu::PipelineCache& pipelines;
  const KernelTuning& tuning = default_kernel_tuning();
};

}  // namespace onda::kernels
