// Compiled compute pipelines, keyed by the exact shader text, entry point and override constants.
// Shape never enters the key: kernels read shapes from uniforms, so one pipeline serves all shapes.
#pragma once
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpu/context.h"

namespace onda::gpu {

// WGSL `override` constants: name -> value.
using OverrideConstants = std::vector<std::pair<std::string, double>>;

class PipelineCache {
 public:
  explicit PipelineCache(Context& context) : context_(context) {}

  // Throws GpuError with the WGSL compiler's message (and `label`) when the shader does not compile.
  const wgpu::ComputePipeline& get(const std::string& wgsl, const OverrideConstants& constants = {},
                                   const std::string& label = "kernel", const std::string& entry_point = "main");

  size_t size() const { return pipelines_.size(); }

 private:
  Context& context_;
  std::unordered_map<std::string, wgpu::ComputePipeline> pipelines_;
};

}  // namespace onda::gpu
