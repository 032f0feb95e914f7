// What every kernel needs to plan and record: the device (limits, features) and the pipeline cache.
#pragma once
#include "gpu/command_recorder.h"
#include "gpu/context.h"
#include "gpu/pipeline_cache.h"

namespace onda::kernels {

struct KernelContext {
  gpu::Context& gpu;
  gpu::PipelineCache& pipelines;
};

}  // namespace onda::kernels
